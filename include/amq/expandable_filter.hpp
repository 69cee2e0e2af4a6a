// amq/expandable_filter.hpp — a filter that grows one bucket at a time: a bucketed
// cuckoo table whose entries keep the key's hash bits that are not yet address bits.
// Splitting a bucket turns one stored bit of each of its entries into one more
// address bit (the idea of InfiniFilter, Dayan, Bercea, Reviriego & Pagh, SIGMOD 2023,
// and of Taffy filters, Apple 2021, here with linear hashing's order of splits), so an
// entry moves only from bucket i to i or i + 2^q and growth never fails; entries
// written later, into a larger table, keep more bits, so the false-positive rate stays
// bounded as the filter grows.
//
// Choose it over ScalableCuckooFilter when the number of keys is not known in advance
// and lookups matter: it answers a lookup with two buckets (two cache lines at most)
// however far it has grown, where ScalableCuckooFilter probes one table per growth
// step. Its table stays 85% full at any size (16-bit slots: about 18.8 bits a key, or
// 32-bit ones for tight targets or very long growth). Choose CuckooFilter when the
// capacity is known: a static table is 95% full with slots sized to the target.
//
// Layout. A slot is W = 16 or 32 bits: the side bit (0: the entry is in its key's
// first bucket, 1: in its second), a 6-bit tag (the hash's low 6 bits), then L
// remainder bits (the hash bits following its bucket's address bits), a 1 bit and
// zeros (the 1 marks where the remainder ends, so L varies entry by entry; 0 is an
// empty slot). The table has m = 2^q + s buckets: buckets below s and from 2^q on
// have been split and use q + 1 address bits, the others q. A bucket is named by the
// first address bits of a string read backwards (bit j of the index is the string's
// bit 63 - j): the string is the hash for a key's first bucket, the hash XOR a 64-bit
// mask drawn from the tag for its second. New entries get the longest remainder the
// slot holds (W - 8 bits), and go to the bucket with more address bits first.
//
// Guarantees
//  * No false negatives, after any sequence of insert / erase of keys that were
//    inserted: contains(k) is true while k has been inserted more times than erased.
//    Before an insert would take the load past 0.85, bucket s splits (into s and
//    s + 2^q, by each entry's next bit); a kick chain that cannot end leaves one entry
//    over, which goes to the stash (below) and, at load 0.75 or more, makes up to 16
//    more buckets split. insert refuses only a 9th copy of one key (both its buckets
//    full of it), leaving the filter as it was.
//  * An entry whose remainder has run out (void: its key's next address bit is no
//    longer known) is copied into both halves when its bucket splits, as InfiniFilter
//    does with its void entries: it keeps matching its key, and matches any key with
//    its tag in those buckets. Such copies come from the entries written W - 8 or more
//    levels ago (under 1% of the entries grown a thousandfold with 16-bit slots).
//  * False-positive rate: an entry that knows K hash bits (its bucket's address bits
//    plus its remainder) matches an absent key with probability 2^-(6+K), so the rate
//    is at most fpp_bound() = sum over entries of 2^-(6+K), kept exactly. A split
//    leaves it unchanged (an entry trades a remainder bit for an address bit; a void
//    one becomes two that each know one bit more); only inserts raise it. A table of
//    16-bit slots widens to 32 bits before an insert would take it past 0.95 x the
//    target (new entries then keep 24 bits and add too little to pass the rest). So
//    fpp_bound() <= target at every size; the measured rate is close to it.
//  * Erase removes, among the entries matching the key in its own side of its two
//    buckets, the one that knows the most bits. Any other inserted key that entry
//    belonged to agrees with the erased key on every bit the other entries know, so
//    it still finds one of them: erasing an inserted key never causes another inserted
//    key's false negative. Erasing a key never inserted may remove another key's entry
//    (as in any cuckoo filter): only erase keys you inserted.
//  * Stash. A bucket pair filled with void copies stays full through every split, and
//    a void entry of an unsplit bucket cannot be kicked to a split one (it does not
//    know which half), so an entry a kick chain cannot place is kept in a stash, in
//    bucket order, searched by lookups while it is not empty and tried again when its
//    bucket splits. With distinct keys it stays empty or nearly so; many copies of
//    keys fill it (each copy beyond what its two buckets hold).
//  * count(k) is the number of matching entries: at least the copies of k still
//    inserted; more with collisions and with void entries' copies.
//  * Not thread-safe: no concurrent calls while any call modifies the filter;
//    concurrent const calls are safe.
//
// Complexity and memory. insert is amortised O(1): a split moves one bucket's entries,
// and the slot vector grows by an eighth when full (a copy of the table: the longest
// single insert, with old and new held at once; widening to 32 bits is one more pass).
// contains, count and erase read two buckets of 4 slots (8 or 16 bytes each). Memory
// is 4 W bits per bucket at load 0.85: W / 0.85 bits per key, plus up to an eighth of
// the table allocated ahead. Grows to 2^36 buckets; an insert that needs more throws
// Errc::too_large and changes nothing.
//
//   amq::ExpandableFilter f(1, 0.01);        // capacity 1, 1% target
//   for (uint64_t k = 0; k < 1'000'000; ++k) f.insert(k);  // grows as needed
//   bool maybe = f.contains(uint64_t{17});   // true
//   f.erase(uint64_t{17});                   // true: one copy removed
//   auto bytes = f.serialize();              // amq container, Kind::expandable
//   auto g = amq::ExpandableFilter::load(bytes);
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <span>
#include <type_traits>
#include <vector>

#include "amq/detail/huge_pages.hpp"
#include "amq/detail/prefetch.hpp"
#include "amq/hash.hpp"

namespace amq {
namespace detail {

// x with its bits in reverse order (bit 0 becomes bit 63).
constexpr uint64_t reverse_bits(uint64_t x) noexcept {
  x = ((x >> 1) & 0x5555555555555555ULL) | ((x & 0x5555555555555555ULL) << 1);
  x = ((x >> 2) & 0x3333333333333333ULL) | ((x & 0x3333333333333333ULL) << 2);
  x = ((x >> 4) & 0x0f0f0f0f0f0f0f0fULL) | ((x & 0x0f0f0f0f0f0f0f0fULL) << 4);
  return __builtin_bswap64(x);
}

}  // namespace detail

class ExpandableFilter {
 public:
  static constexpr uint32_t kBucketSize = 4;
  static constexpr uint32_t kTagBits = 6;
  static constexpr uint32_t kTags = uint32_t{1} << kTagBits;
  // A slot's bits besides its remainder: the side bit, the tag and the end marker.
  static constexpr uint32_t kOverheadBits = kTagBits + 2;
  // Entries by the hash bits they pin down: histogram()[K], K = address bits (the
  // level of the entry's bucket) + remainder bits, 0 .. kAddressBits.
  using Histogram = std::array<uint64_t, 57>;
  static constexpr double kMaxLoad = 0.85;      // a bucket splits before the table is fuller
  static constexpr uint32_t kMaxLevel = 36;     // at most 2^36 buckets
  static constexpr uint32_t kAddressBits = 56;  // address and remainder bits come from the top 56
  static constexpr uint32_t kMaxKicks = 500;

  // A filter for `capacity` keys (1 or more; it grows past them) at false-positive
  // rate at most `fpp` (in [1e-5, 0.5]); Error(invalid_argument) otherwise.
  explicit ExpandableFilter(uint64_t capacity = 1, double fpp = 0.01, uint64_t seed = 0);

  // Stores one more copy of the key, growing the table when needed: true. False
  // (nothing changed) only when the key's two buckets are full of copies of its
  // entry, as with 8 copies of one key (a cuckoo filter's limit: such entries move
  // together at every split). Throws only Error(too_large) beyond 2^36 buckets
  // (the filter unchanged), or std::bad_alloc.
  bool insert(KeyView key) { return insert_hash(hash(key)); }
  // True if the key may be in the set; false means surely absent.
  bool contains(KeyView key) const noexcept { return contains_hash(hash(key)); }
  // Batched contains: out[i] = contains(keys[i]); returns how many are true. Key
  // i + kBatch is hashed and both its buckets prefetched while key i is tested.
  template <class Keys>
  size_t contains_many(const Keys& keys, std::span<bool> out) const noexcept {
    return wide_ ? contains_many_in(t32_, keys, out) : contains_many_in(t16_, keys, out);
  }
  // Removes one copy of the key (the matching entry with the longest remainder);
  // false if none matched.
  bool erase(KeyView key) noexcept { return erase_hash(hash(key)); }
  // Matching entries in the key's two buckets.
  size_t count(KeyView key) const noexcept { return count_hash(hash(key)); }

  bool insert_hash(uint64_t h);
  bool contains_hash(uint64_t h) const noexcept {
    return wide_ ? contains_in(t32_, h) : contains_in(t16_, h);
  }
  bool erase_hash(uint64_t h) noexcept;
  size_t count_hash(uint64_t h) const noexcept;

  uint64_t size() const noexcept { return items_; }      // inserts minus erases
  bool empty() const noexcept { return items_ == 0; }
  uint64_t entries() const noexcept { return entries_; }  // entries (void copies and stash included)
  uint64_t stash_size() const noexcept { return stash_.size(); }
  // 2^q + s buckets: buckets 0 .. s - 1 and 2^q .. 2^q + s - 1 have been split (they
  // use q + 1 address bits), the others use q.
  uint64_t num_buckets() const noexcept { return (uint64_t{1} << level_) + split_; }
  uint64_t slots() const noexcept { return num_buckets() * kBucketSize; }
  uint32_t level() const noexcept { return level_; }      // q: the table has 2^q to 2^(q+1) - 1 buckets
  uint64_t split_pointer() const noexcept { return split_; }  // s: the next bucket to split
  uint32_t slot_bits() const noexcept { return wide_ ? 32 : 16; }
  double load_factor() const noexcept { return static_cast<double>(entries_) / static_cast<double>(slots()); }
  double target_fpp() const noexcept { return fpp_; }
  // sum over entries of 2^-(6+L) / m: an upper bound on the false-positive rate now.
  double fpp_bound() const noexcept;
  // Entries by the hash bits each pins down (its bucket's address bits + its remainder).
  const Histogram& histogram() const noexcept { return hist_; }
  size_t size_in_bytes() const noexcept { return slots() * (slot_bits() / 8); }
  uint64_t seed() const noexcept { return seed_; }
  // The bytes of the slot array (little-endian W-bit slots, bucket by bucket).
  std::span<const std::byte> table_bytes() const noexcept {
    return wide_ ? std::as_bytes(std::span(t32_)) : std::as_bytes(std::span(t16_));
  }

  bool operator==(const ExpandableFilter& o) const noexcept {
    return seed_ == o.seed_ && fpp_ == o.fpp_ && level_ == o.level_ && split_ == o.split_ && wide_ == o.wide_ && items_ == o.items_ &&
           t16_ == o.t16_ && t32_ == o.t32_ && stash_ == o.stash_;
  }

  // The amq container (Kind::expandable); docs/format.md describes it.
  std::vector<std::byte> serialize() const;
  // Throws amq::Error on malformed input (nothing is allocated before the payload's
  // length is checked against the geometry).
  static ExpandableFilter load(std::span<const std::byte> file);

 private:
  template <class S>
  using Table = std::vector<S, detail::HugePageAllocator<S>>;
  // An entry outside the table: its bucket (at the current level) and slot value.
  struct Homeless {
    uint64_t bucket;
    uint32_t value;
    bool operator==(const Homeless&) const = default;
  };

  // The 64-bit mask of each tag: a key's second bucket is addressed by its hash XOR the
  // mask (the first bucket by the hash itself).
  static constexpr std::array<uint64_t, kTags> kMasks = [] {
    std::array<uint64_t, kTags> m{};
    for (uint64_t t = 0; t < kTags; ++t) m[t] = detail::splitmix64(t * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL);
    return m;
  }();
  static constexpr uint64_t rev64(uint64_t x) noexcept { return detail::reverse_bits(x); }
  static constexpr std::array<uint64_t, kTags> kRevMasks = [] {
    std::array<uint64_t, kTags> m{};
    for (uint64_t t = 0; t < kTags; ++t) m[t] = detail::reverse_bits(kMasks[t]);
    return m;
  }();
  static constexpr uint64_t low_mask(uint32_t bits) noexcept { return (uint64_t{1} << bits) - 1; }
  static constexpr uint64_t top_mask(uint32_t bits) noexcept { return bits ? ~uint64_t{0} << (64 - bits) : 0; }

  // Addressing. A bucket is named by the first bits of a 64-bit string (the hash for a
  // key's first bucket, the hash XOR its tag's mask for its second), read in reverse:
  // bit j of the index is bit 63 - j of the string. So splitting bucket i of level q
  // (q address bits) gives buckets i and i + 2^q of level q + 1, told apart by the
  // string's next bit, and the table grows one bucket at a time (linear hashing).
  // `g` is the bit-reversed string; returns the bucket.
  uint64_t locate(uint64_t g) const noexcept {
    const uint64_t i = g & low_mask(level_);
    return i < split_ ? g & low_mask(level_ + 1) : i;
  }
  // The address bits of bucket b (without a branch: which side of the split pointer a
  // bucket falls is a coin toss).
  uint32_t level_of(uint64_t b) const noexcept {
    return level_ + static_cast<uint32_t>((b < split_) | ((b >> level_) != 0));
  }

  template <class S>
  struct Probe {
    uint64_t b1, b2;
    uint32_t k1, k2;  // the key's slot pattern in each bucket (side bit 0, 1)
  };
  // The key's slot pattern in a bucket of level l: side, tag, then the W - 8 hash bits
  // after the l address bits, above a 0 bit.
  template <class S>
  static uint32_t pattern(uint64_t h, uint32_t l, uint32_t side) noexcept {
    constexpr uint32_t W = sizeof(S) * 8;
    const uint32_t tag = static_cast<uint32_t>(h & (kTags - 1));
    const uint32_t rem = static_cast<uint32_t>((h << l) >> (64 - (W - kOverheadBits))) << 1;
    return (side << (W - 1)) | (tag << (W - 1 - kTagBits)) | rem;
  }
  template <class S>
  Probe<S> probe(uint64_t h) const noexcept {
    // locate() and level_of() without branches: which side of the split pointer a key
    // falls is a coin toss.
    const uint64_t g1 = rev64(h), g2 = g1 ^ kRevMasks[h & (kTags - 1)];
    const uint32_t l1 = level_ + static_cast<uint32_t>((g1 & low_mask(level_)) < split_);
    const uint32_t l2 = level_ + static_cast<uint32_t>((g2 & low_mask(level_)) < split_);
    return {g1 & low_mask(l1), g2 & low_mask(l2), pattern<S>(h, l1, 0), pattern<S>(h, l2, 1)};
  }
  // The slot matches the pattern: occupied, and equal above its end marker.
  static bool matches(uint32_t v, uint32_t k) noexcept { return v != 0 && ((v ^ k) & ~(v ^ (v - 1))) == 0; }
  typedef uint16_t Lanes16 __attribute__((vector_size(16)));
  typedef uint32_t Lanes32 __attribute__((vector_size(32)));
  // Both buckets' 8 slots tested at once, lane by lane (16- or 32-bit lanes): slot v
  // matches pattern k when v ^ k has no bit above v's lowest set bit (its end
  // marker), that is v ^ k < 2 (v & -v); an empty slot (v = 0) never does.
  template <class S>
  bool test(const Table<S>& t, const Probe<S>& p) const noexcept {
    using Lanes = std::conditional_t<sizeof(S) == 2, Lanes16, Lanes32>;
    Lanes v;
    std::memcpy(&v, t.data() + p.b1 * kBucketSize, kBucketSize * sizeof(S));
    std::memcpy(reinterpret_cast<char*>(&v) + kBucketSize * sizeof(S), t.data() + p.b2 * kBucketSize,
                kBucketSize * sizeof(S));
    const S k1 = static_cast<S>(p.k1), k2 = static_cast<S>(p.k2);
    const Lanes k = {k1, k1, k1, k1, k2, k2, k2, k2};
    const Lanes low = v & -v;
    const auto hit = (v ^ k) < (low << 1);
    uint64_t words[sizeof(hit) / 8];
    std::memcpy(words, &hit, sizeof(hit));
    uint64_t any = 0;
    for (uint64_t w : words) any |= w;
    return any != 0;
  }
  template <class S>
  bool contains_in(const Table<S>& t, uint64_t h) const noexcept {
    const Probe<S> p = probe<S>(h);
    return test(t, p) || (!stash_.empty() && stash_matches(p.b1, p.b2, p.k1, p.k2));
  }
  template <class S, class Keys>
  size_t contains_many_in(const Table<S>& t, const Keys& keys, std::span<bool> out) const noexcept {
    constexpr size_t kAhead = detail::kBatch;
    Probe<S> ring[kAhead];
    const size_t n = std::size(keys);
    auto it = std::begin(keys);
    const size_t lead = std::min(kAhead, n);
    auto start = [&](Probe<S>& p) {
      p = probe<S>(hash(KeyView(*it)));
      detail::prefetch(t.data() + p.b1 * kBucketSize);
      detail::prefetch(t.data() + p.b2 * kBucketSize);
      ++it;
    };
    for (size_t j = 0; j < lead; ++j) start(ring[j]);
    size_t found = 0;
    for (size_t i = 0; i < n; ++i) {
      Probe<S>& p = ring[i % kAhead];
      const bool r = test(t, p) || (!stash_.empty() && stash_matches(p.b1, p.b2, p.k1, p.k2));
      out[i] = r;
      found += r;
      if (i + kAhead < n) start(p);
    }
    return found;
  }

  // An entry taken apart: the hash bits it knows (the first `known` bits of `prefix`),
  // its tag and its side.
  struct Decoded {
    uint64_t prefix;
    uint32_t known, tag, side;
  };
  template <class S>
  Decoded decode(uint64_t bucket, uint32_t v) const noexcept;
  // The slot value of a decoded entry in a bucket of level l (known >= l): as many
  // of its remainder bits as the slot holds.
  template <class S>
  static uint32_t encode(const Decoded& d, uint32_t l) noexcept;
  // The bucket of the decoded entry's side, or -1 when it does not know enough bits.
  uint64_t bucket_of(const Decoded& d) const noexcept;
  // Entry v of `bucket` moved to its other bucket `to` (-1 when it does not know enough
  // bits to name it: a void entry of a level-q bucket whose other bucket has split), as
  // slot value `v`, knowing `known` hash bits there (`was` in `bucket`). The same as
  // decode, bucket_of and encode, on the slot's fields.
  struct Moved {
    uint64_t to;
    uint32_t v, known, was;
  };
  template <class S>
  Moved move_of(uint64_t bucket, uint32_t v) const noexcept;
  void count_entry(uint32_t known, int64_t n) noexcept;

  template <class S>
  size_t count_in(const Table<S>& t, uint64_t h) const noexcept;
  template <class S>
  bool full_of_copies(const Table<S>& t, uint64_t b1, uint32_t v1, uint64_t b2, uint32_t v2) const noexcept;
  template <class S>
  bool erase_in(Table<S>& t, uint64_t h) noexcept;
  template <class S>
  bool insert_in(Table<S>& t, uint64_t h);
  template <class S>
  static bool place_free(Table<S>& t, uint64_t bucket, uint32_t v) noexcept;
  template <class S>
  bool place(Table<S>& t, uint64_t& bucket, uint32_t& v) noexcept;
  template <class S>
  bool displace(Table<S>& t, uint64_t bucket, uint32_t v) noexcept;
  // Splits bucket s into s and s + 2^q (the table gains one bucket), moving the
  // stash's entries of bucket s along and trying them in the table again.
  template <class S>
  void split_in(Table<S>& t);
  void split_bucket();
  // 16-bit slots to 32-bit ones (the same fields, each shifted left by 16).
  void widen();
  bool stash_matches(uint64_t b1, uint64_t b2, uint32_t k1, uint32_t k2) const noexcept;
  // The stash, in bucket order: the entries of one bucket; adding one in its place
  // (room reserved by the caller where it must not throw).
  std::span<const Homeless> stashed_in(uint64_t bucket) const noexcept;
  void stash_push(Homeless e);
  // The remainder bits of a new entry in a bucket of level l.
  uint32_t new_remainder_bits(uint32_t l) const noexcept {
    return std::min(slot_bits() - kOverheadBits, kAddressBits - std::min(l, kAddressBits));
  }
  __extension__ typedef unsigned __int128 Weight;
  // A new entry's share of fpp_bound() in units of 2^-64, at its largest (level q).
  Weight new_entry_weight() const noexcept {
    return Weight{1} << (64 - kTagBits - level_ - new_remainder_bits(level_));
  }
  void recount();
  uint64_t hash(const KeyView& key) const noexcept { return Xxh3Hasher{seed_}(key.bytes()); }
  uint64_t next_random() noexcept {
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    return rng_;
  }

  Table<uint16_t> t16_;
  Table<uint32_t> t32_;
  bool wide_ = false;
  uint32_t level_ = 0;
  uint64_t split_ = 0;
  double fpp_ = 0.01;
  uint64_t seed_ = 0;
  uint64_t items_ = 0;
  uint64_t entries_ = 0;
  Histogram hist_{};
  // fpp_bound() in units of 2^-64: sum over entries of 2^(64 - 6 - K).
  Weight weight_ = 0;
  // 0.9 x the target in the same units: a 16-bit table widens before passing it.
  Weight widen_at_ = 0;
  std::vector<Homeless> stash_;
  uint64_t rng_ = 0x9e3779b97f4a7c15ULL;
};

}  // namespace amq
