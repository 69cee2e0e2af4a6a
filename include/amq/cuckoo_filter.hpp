// amq/cuckoo_filter.hpp — a cuckoo filter (Fan, Andersen, Kaminsky, Mitzenmacher,
// "Cuckoo Filter: Practically Better Than Bloom", CoNEXT 2014): a set of short
// fingerprints in a bucketed cuckoo hash table that, unlike a Bloom filter, can
// erase keys and count copies, and answers lookups with at most two cache lines.
//
// Choose it over BloomFilter when keys must be removed, or when the target
// false-positive rate is below about 3% (it is then smaller, and faster to query).
// Choose ScalableCuckooFilter when the number of keys is not known in advance: this
// filter has a fixed capacity and says so (insert returns CuckooStatus::full).
//
// Guarantees
//  * No false negatives, after any sequence of insert / erase of keys that were
//    inserted: contains(k) is true while k has been inserted more times than erased.
//    When an insert cannot place its fingerprint (kick limit reached) the filter is
//    left exactly as it was — the kick chain is rolled back — and insert returns
//    CuckooStatus::full. Nothing already in the filter is ever lost.
//  * False-positive rate at most 2b / 2^f (f-bit fingerprints, b slots per bucket);
//    about 2 b a / 2^f at load a (expected_fpp()). Fingerprint 0 marks an empty slot,
//    so a key whose low f hash bits are 0 gets fingerprint 1.
//  * Duplicates: insert() stores one more copy each time, up to 2b copies of a key
//    (its two buckets full of it); count() tells the copies, erase() removes one.
//    insert_unique() inserts only keys not already (apparently) present.
//  * Erasing a key that was never inserted may remove another key's fingerprint
//    (one that collides with it) and so cause that key's false negative: the "no false
//    negatives" above holds only while every erase is of a key inserted (and not yet
//    erased as often). A false positive is indistinguishable from a stored key, so the
//    filter cannot check this; only erase keys you know you inserted (the amq CLI's
//    remove asks for --only-inserted or a list of inserted keys).
//  * Fills to >= 95% of its slots with b = 4 before the first failed insert (84% with
//    b = 2, 97% with b = 8) when f >= 8; `create` sizes the table for that load.
//    Fingerprints shorter than 8 bits work, but give fewer alternate buckets and fill
//    less (CuckooTable::design_load(b, f) is what sizing assumes: b = 2 with f = 4 only
//    a third) — a limit of partial-key cuckoo hashing itself.
//  * Table sizes need not be powers of two (any even bucket count): the alternate
//    bucket is (H(fp) - i) mod m with H odd, an involution without fixed points
//    (detail/cuckoo_table.hpp has the formulas).
//  * Hashes each key once (Xxh3Hasher with a seed by default): fingerprint from the
//    low bits, bucket from the high 32 bits.
//  * contains has no data-dependent branch (both buckets are loaded and tested, one
//    64-bit load each for f = 8, 12, 16 with b = 2, 4), so present and absent keys
//    cost the same; large tables are on transparent huge pages. contains_many keeps
//    about kBatch keys' bucket loads in flight (for tables larger than a quarter of
//    the last-level cache; smaller ones it answers key by key) and is never slower
//    than a loop of contains.
//  * Not thread-safe: no concurrent calls while any call modifies the filter;
//    concurrent const calls are safe.
//
// Cost. Memory: m buckets of b slots of f bits, m sized so that the capacity fills
// the table to its design load: about f / 0.95 bits a key with b = 4 and f >= 8
// (size_in_bytes() tells). contains, count and erase read the key's two buckets;
// insert is expected O(1) below the design load, and at most CuckooTable::kMaxKicks
// evictions (then full, rolled back).
//
//   auto f = amq::CuckooFilter::create(1'000'000, 0.001);  // chooses f and b
//   f.insert("apple");                                      // CuckooStatus::inserted
//   bool maybe = f.contains("apple");                       // true
//   f.erase("apple");                                       // true: one copy removed
//   auto bytes = f.serialize();                             // amq container, Kind::cuckoo
//   auto g = amq::CuckooFilter::load(bytes);
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "amq/detail/cuckoo_table.hpp"
#include "amq/detail/prefetch.hpp"
#include "amq/hash.hpp"

namespace amq {

enum class CuckooStatus : uint8_t {
  inserted,  // one more copy stored
  present,   // insert_unique: the key was (apparently) there already; nothing changed
  full,      // no room within the kick limit; nothing changed
};

// The geometry `create` picks for a capacity and a target false-positive rate.
struct CuckooParams {
  uint32_t fingerprint_bits;  // f
  uint32_t bucket_size;       // b
  uint64_t num_buckets;       // m
  double fpp_bound;           // 2b / 2^f
};

// Chooses b in {2, 4, 8} and f = ceil(log2(2b / fpp)) (at least 4) to spend the fewest
// bits per key, f / design_load(b, f); ties go to the smaller bucket. Throws
// Error(invalid_argument) for fpp outside (0, 1) or one needing f > 32, and
// Error(too_large) for a capacity beyond 2^32 buckets.
CuckooParams choose_cuckoo_params(uint64_t capacity, double fpp);
// The geometry for a capacity with f and b given; same errors.
CuckooParams cuckoo_params_for(uint64_t capacity, uint32_t fingerprint_bits, uint32_t bucket_size);

namespace detail {
std::vector<std::byte> serialize_cuckoo(uint32_t hasher_id, uint64_t seed, const CuckooTable& t);
struct LoadedCuckoo {
  uint32_t hasher_id;
  uint64_t seed;
  CuckooTable table;
};
LoadedCuckoo parse_cuckoo(std::span<const std::byte> file);
void check_hasher(uint32_t file_id, uint32_t want_id, const char* what);
struct CuckooFilterTestPeer;  // tests: the filter's table (defined by the tests)
}  // namespace detail

template <class Hasher = Xxh3Hasher>
class BasicCuckooFilter {
 public:
  // A filter for `capacity` keys at false-positive rate at most `fpp`, f and b chosen
  // by choose_cuckoo_params (fingerprint_bits() and bucket_size() tell which).
  static BasicCuckooFilter create(uint64_t capacity, double fpp = 0.01, Hasher hasher = {}) {
    const CuckooParams p = choose_cuckoo_params(capacity, fpp);
    return BasicCuckooFilter(detail::CuckooTable(p.num_buckets, p.fingerprint_bits, p.bucket_size, hasher.seed),
                             hasher);
  }
  // A filter for `capacity` keys with f-bit fingerprints (4..32) and b slots per bucket
  // (2, 4 or 8).
  BasicCuckooFilter(uint64_t capacity, uint32_t fingerprint_bits, uint32_t bucket_size, Hasher hasher = {})
      : BasicCuckooFilter(make_table(cuckoo_params_for(capacity, fingerprint_bits, bucket_size), hasher.seed),
                          hasher) {}
  // Exactly `num_buckets` buckets (even, 2..2^32).
  static BasicCuckooFilter with_buckets(uint64_t num_buckets, uint32_t fingerprint_bits, uint32_t bucket_size,
                                        Hasher hasher = {}) {
    return BasicCuckooFilter(detail::CuckooTable(num_buckets, fingerprint_bits, bucket_size, hasher.seed), hasher);
  }

  // Stores one more copy of the key: inserted, or full (filter unchanged).
  CuckooStatus insert(KeyView key) {
    return table_.insert_hash(hash(key)) ? CuckooStatus::inserted : CuckooStatus::full;
  }
  // Inserts the key unless contains(key): inserted, present or full.
  CuckooStatus insert_unique(KeyView key) {
    const uint64_t h = hash(key);
    if (table_.contains_hash(h)) return CuckooStatus::present;
    return table_.insert_hash(h) ? CuckooStatus::inserted : CuckooStatus::full;
  }
  // True if the key may be in the set; false means surely absent.
  bool contains(KeyView key) const noexcept { return table_.contains_hash(hash(key)); }
  // Batched contains: out[i] = contains(keys[i]); returns how many are true. For a
  // table larger than a quarter of the last-level cache a rolling pipeline: key
  // i + kBatch is hashed and both its buckets prefetched while key i is tested, so about
  // kBatch lookups' cache misses are in flight at once. A smaller table is answered key
  // by key: there the branch-free lookup already overlaps its misses out of order, and
  // the ring and the prefetches only add work (measured: docs/decisions/0039).
  template <class Keys>
  size_t contains_many(const Keys& keys, std::span<bool> out) const noexcept {
    if (!prefetches_batches()) {
      // The geometry tests hoisted out of the loop: the stores to `out` (bools) might
      // alias the table's flags, so contains() inside it would redo them for every key.
      const auto each = [&](auto test) {
        size_t found = 0, i = 0;
        for (const auto& key : keys) {
          const bool r = test(hash(KeyView(key)));
          out[i++] = r;
          found += r;
        }
        return found;
      };
      if (table_.f12_b4_with_alt_table())
        return each([this](uint64_t h) { return table_.template contains_plain_table<12, 4>(h); });
      if (table_.f12_b4()) return each([this](uint64_t h) { return table_.template contains_plain<12, 4>(h); });
      return each([this](uint64_t h) { return table_.contains_hash(h); });
    }
    return contains_many_prefetched(keys, out);
  }
  // True when contains_many takes its prefetching path.
  bool prefetches_batches() const noexcept { return table_.bytes() > detail::last_level_cache_bytes() / 4; }
  // contains_many's prefetching path, whatever the table's size.
  template <class Keys>
  size_t contains_many_prefetched(const Keys& keys, std::span<bool> out) const noexcept {
    constexpr size_t kAhead = detail::kBatch;
    detail::CuckooTable::Probe ring[kAhead];
    const size_t n = std::size(keys);
    auto it = std::begin(keys);
    const size_t lead = std::min(kAhead, n);
    for (size_t j = 0; j < lead; ++j, ++it) {
      ring[j] = table_.probe(hash(KeyView(*it)));
      table_.prefetch(ring[j]);
    }
    size_t found = 0;
    for (size_t i = 0; i < n; ++i) {
      detail::CuckooTable::Probe& p = ring[i % kAhead];
      const bool r = table_.test(p);
      out[i] = r;
      found += r;
      if (i + kAhead < n) {
        p = table_.probe(hash(KeyView(*it)));
        table_.prefetch(p);
        ++it;
      }
    }
    return found;
  }
  // Removes one copy of the key; false if no copy was found.
  bool erase(KeyView key) noexcept { return table_.erase_hash(hash(key)); }
  // Copies of the key's fingerprint in its two buckets: at least the number of times
  // the key was inserted (minus erased), more if other keys collide with it.
  size_t count(KeyView key) const noexcept { return table_.count_hash(hash(key)); }

  uint64_t size() const noexcept { return table_.size(); }        // fingerprints stored
  bool empty() const noexcept { return table_.size() == 0; }
  uint64_t slots() const noexcept { return table_.slots(); }      // m b
  double load_factor() const noexcept {
    return static_cast<double>(table_.size()) / static_cast<double>(table_.slots());
  }
  uint32_t fingerprint_bits() const noexcept { return table_.fingerprint_bits(); }
  uint32_t bucket_size() const noexcept { return table_.bucket_size(); }
  uint64_t num_buckets() const noexcept { return table_.num_buckets(); }
  // The false-positive bound 2b / 2^f of a full table.
  double fpp_bound() const noexcept { return 2.0 * bucket_size() / std::ldexp(1.0, static_cast<int>(fingerprint_bits())); }
  // The false-positive rate to expect now: 1 - (1 - 2^-f)^(2 b load).
  double expected_fpp() const noexcept {
    return -std::expm1(2.0 * bucket_size() * load_factor() *
                       std::log1p(-std::ldexp(1.0, -static_cast<int>(fingerprint_bits()))));
  }
  size_t size_in_bytes() const noexcept { return table_.bytes(); }
  const Hasher& hasher() const noexcept { return hasher_; }
  void clear() noexcept { table_.clear(); }

  // The key's two buckets (for diagnostics and tests).
  std::pair<uint64_t, uint64_t> buckets_of(KeyView key) const noexcept {
    const uint64_t h = hash(key);
    const uint64_t i1 = table_.index(h);
    return {i1, table_.alt(i1, table_.fingerprint(h))};
  }

  bool operator==(const BasicCuckooFilter& o) const noexcept {
    return hasher_.seed == o.hasher_.seed && table_ == o.table_;
  }

  // The amq container (Kind::cuckoo); docs/format.md describes it.
  std::vector<std::byte> serialize() const { return detail::serialize_cuckoo(Hasher::id, hasher_.seed, table_); }
  // Throws amq::Error on malformed input, and Errc::incompatible for a file made with
  // another hasher.
  static BasicCuckooFilter load(std::span<const std::byte> file) {
    detail::LoadedCuckoo l = detail::parse_cuckoo(file);
    detail::check_hasher(l.hasher_id, Hasher::id, "cuckoo filter");
    Hasher h{};
    h.seed = l.seed;
    return BasicCuckooFilter(std::move(l.table), h);
  }

 private:
  friend struct detail::CuckooFilterTestPeer;
  BasicCuckooFilter(detail::CuckooTable t, Hasher h) : table_(std::move(t)), hasher_(h) {}
  static detail::CuckooTable make_table(const CuckooParams& p, uint64_t seed) {
    return detail::CuckooTable(p.num_buckets, p.fingerprint_bits, p.bucket_size, seed);
  }
  uint64_t hash(const KeyView& key) const noexcept { return hasher_(key.bytes()); }

  detail::CuckooTable table_;
  Hasher hasher_;
};

using CuckooFilter = BasicCuckooFilter<>;

}  // namespace amq
