// amq/scalable_cuckoo_filter.hpp — a cuckoo filter that grows: a list of cuckoo
// tables (levels), each `growth` times more buckets than the one before, opened when
// the newest is at its capacity or refuses an insert.
//
// Unlike a chain of equal filters (RedisBloom's CF.*, seiflotfy's Go filter), whose
// false-positive rate rises with every level, level i has (f0 + i)-bit fingerprints,
// so its rate 2b / 2^(f0+i) halves from level to level and the compound rate stays
// at most 2 * 2b / 2^f0 <= fpp however many keys are inserted.
//
// Guarantees
//  * No false negatives after any sequence of insert / erase of inserted keys — also
//    across levels, where seiflotfy's scalable filter loses keys after delete and
//    re-insert (issue 50 there: erase took a fingerprint of another key in an older
//    level). Here the levels are nested: bucket j of level i+1 projects to bucket
//    j mod m_i of level i, fingerprints extend the previous level's by one bit, and
//    the alternate bucket commutes with the projection, so two keys that look alike
//    (same fingerprint, same bucket pair) in a level also look alike in every older
//    level. erase() removes a copy from the NEWEST level that matches the key: if
//    that copy was another key's, the key's own copy in an older level matches that
//    other key too, so every key still inserted stays found. Erasing a key never
//    inserted may still remove another key's fingerprint, as in CuckooFilter.
//  * False-positive rate <= fpp at any fill (fpp_bound() is the sum over the opened
//    levels of 2b / 2^f_i). Fingerprints stop growing at 32 bits; levels are opened
//    only while the sum stays within fpp, while a level has at most 2^32 buckets, and
//    at most 64 of them — past that insert returns CuckooStatus::full and changes
//    nothing. A key whose 2b slots in the newest level all hold it is not given a new
//    level either: full, as in CuckooFilter.
//  * count(k) (summed over levels) >= the copies of k inserted and not erased.
//  * New keys always go to the newest level: slots freed by erase in older levels are
//    not reused (a filter that churns keeps growing; rebuild it to compact).
//  * Hashes each key once. Not thread-safe: no concurrent calls while any call
//    modifies the filter; concurrent const calls are safe.
//
// Cost. contains and count read the key's two buckets in every level (one hash for
// all); insert works in the newest level only, as CuckooFilter's insert, and opening a
// level allocates it (zeroed) at once. Memory: level i has m_0 growth^i buckets of b
// slots of (f0 + i) bits. With growth >= 2 the newest level dominates: the total is at
// most growth / (growth - 1) times the newest level (with growth 1 every level has
// m_0 buckets, and the total grows with the number of levels).
//
// Choose it when the number of keys is not known in advance; when it is, a
// CuckooFilter of that size is smaller and faster (a lookup here tests every level).
// ExpandableFilter also grows, and keeps lookups at two buckets however far it grows.
//
//   amq::ScalableCuckooFilter f({.initial_capacity = 1000, .fpp = 0.001});
//   for (auto& k : keys) f.insert(k);        // grows as needed
//   f.erase("apple");
//   auto g = amq::ScalableCuckooFilter::load(f.serialize());
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <vector>

#include "amq/cuckoo_filter.hpp"
#include "amq/detail/cuckoo_table.hpp"
#include "amq/detail/prefetch.hpp"
#include "amq/error.hpp"
#include "amq/hash.hpp"

namespace amq {

struct ScalableCuckooParams {
  uint64_t initial_capacity = 1000;  // keys in level 0 (1..2^40)
  double fpp = 0.01;                 // compound false-positive bound, in (0, 1)
  uint32_t bucket_size = 4;          // b: 2, 4 or 8, the same in every level
  uint32_t growth = 2;               // bucket-count ratio of consecutive levels, 1..16
  uint32_t fingerprint_bits = 0;     // f0 (4..32); 0: max(8, ceil(log2(4b / fpp))).
                                     // When given, fpp is taken as 4b / 2^f0.
  bool operator==(const ScalableCuckooParams&) const = default;
};

namespace detail {

inline constexpr uint32_t kMaxCuckooLevels = 64;

struct CuckooLevelGeometry {
  uint64_t capacity;     // keys before the next level is opened
  uint64_t num_buckets;  // m_i = m_0 growth^i
  uint64_t extension;    // growth^i
  uint32_t fingerprint_bits;
};

// Throws Error(code) unless the parameters are in range.
void check_scalable_cuckoo_params(const ScalableCuckooParams& p, Errc code);
uint32_t scalable_cuckoo_base_bits(const ScalableCuckooParams& p) noexcept;
double scalable_cuckoo_budget(const ScalableCuckooParams& p) noexcept;
CuckooLevelGeometry scalable_cuckoo_level(const ScalableCuckooParams& p, uint32_t i) noexcept;
// Levels that may be opened: the sum of 2b / 2^f_i stays within the budget, m_i <=
// 2^32, at most 64.
uint32_t scalable_cuckoo_level_limit(const ScalableCuckooParams& p) noexcept;

std::vector<std::byte> serialize_scalable_cuckoo(uint32_t hasher_id, uint64_t seed, const ScalableCuckooParams& p,
                                                 std::span<const CuckooTable> levels);
struct LoadedScalableCuckoo {
  uint32_t hasher_id;
  uint64_t seed;
  ScalableCuckooParams params;
  std::vector<CuckooTable> levels;
};
LoadedScalableCuckoo parse_scalable_cuckoo(std::span<const std::byte> file);

}  // namespace detail

template <class Hasher = Xxh3Hasher>
class BasicScalableCuckooFilter {
 public:
  // Throws Error(invalid_argument) for parameters out of range.
  explicit BasicScalableCuckooFilter(const ScalableCuckooParams& params = {}, Hasher hasher = {})
      : params_(params), hasher_(hasher) {
    detail::check_scalable_cuckoo_params(params_, Errc::invalid_argument);
    params_.fpp = detail::scalable_cuckoo_budget(params_);
    init_geometry();
    open_level();
  }

  // Stores one more copy of the key (in the newest level, or a new one): inserted,
  // or full (nothing changed).
  CuckooStatus insert(KeyView key) { return insert_new(Probe(*this, hash(key))); }
  // Inserts the key unless contains(key): inserted, present or full.
  CuckooStatus insert_unique(KeyView key) {
    const Probe p(*this, hash(key));
    for (size_t l = levels_.size(); l-- > 0;)
      if (levels_[l].contains_at(p.i1(l), p.fp(l))) return CuckooStatus::present;
    return insert_new(p);
  }
  // Every level's two buckets are computed and prefetched first, then all levels are
  // tested and OR-ed without a branch per level, so a lookup's 2 x levels cache misses
  // are in flight together instead of one level after another.
  bool contains(KeyView key) const noexcept {
    const Probe p(*this, hash(key));
    const size_t n = levels_.size();
    detail::CuckooTable::Probe q[detail::kMaxCuckooLevels];
    for (size_t l = 0; l < n; ++l) {
      q[l] = p.at(l);
      levels_[l].prefetch(q[l]);
    }
    bool found = false;
    for (size_t l = 0; l < n; ++l) found |= levels_[l].test(q[l]);
    return found;
  }
  // Batched contains: out[i] = contains(keys[i]); returns how many are true. A filter
  // within the L2 cache (detail::l2_cache_bytes()) is answered by contains_many_by_key,
  // a larger one by contains_many_by_level (measured: docs/decisions/0046).
  template <class Keys>
  size_t contains_many(const Keys& keys, std::span<bool> out) const noexcept {
    return batches_by_level() ? contains_many_by_level(keys, out) : contains_many_by_key(keys, out);
  }
  // True when contains_many takes contains_many_by_level.
  bool batches_by_level() const noexcept { return size_in_bytes() > detail::l2_cache_bytes(); }
  // As contains, every level's buckets prefetched and then all levels tested without a
  // branch per level, but for a group of keys at once: the group's buckets (kProbes at
  // most, over all levels) are all prefetched before its first key is tested.
  template <class Keys>
  size_t contains_many_by_key(const Keys& keys, std::span<bool> out) const noexcept {
    constexpr size_t kProbes = 128;
    detail::CuckooTable::Probe q[kProbes];
    const size_t levels = levels_.size(), group = std::max<size_t>(1, kProbes / levels);
    const size_t n = std::size(keys);
    size_t found = 0, i = 0;
    auto it = std::begin(keys);
    while (i < n) {
      const size_t m = std::min(group, n - i);
      for (size_t j = 0, at = 0; j < m; ++j, ++it) {
        const Probe p(*this, hash(KeyView(*it)));
        for (size_t l = 0; l < levels; ++l, ++at) {
          q[at] = p.at(l);
          levels_[l].prefetch(q[at]);
        }
      }
      for (size_t j = 0, at = 0; j < m; ++j) {
        bool r = false;
        for (size_t l = 0; l < levels; ++l, ++at) r |= levels_[l].test(q[at]);
        out[i + j] = r;
        found += r;
      }
      i += m;
    }
    return found;
  }
  // Level by level, newest first, for kBatch keys at a time: a key found in a level is
  // neither prefetched nor tested in the older ones, which saves their cache misses
  // once the levels are larger than the caches.
  template <class Keys>
  size_t contains_many_by_level(const Keys& keys, std::span<bool> out) const noexcept {
    size_t found = 0, i = 0;
    const size_t n = std::size(keys);
    auto it = std::begin(keys);
    while (i < n) {
      const size_t m = std::min(detail::kBatch, n - i);
      Probe p[detail::kBatch];
      bool* o = out.data() + i;
      for (size_t j = 0; j < m; ++j, ++it) {
        p[j] = Probe(*this, hash(KeyView(*it)));
        o[j] = false;
      }
      for (size_t l = levels_.size(); l-- > 0;) {
        detail::CuckooTable::Probe q[detail::kBatch];
        for (size_t j = 0; j < m; ++j) {
          q[j] = p[j].at(l);
          if (!o[j]) levels_[l].prefetch(q[j]);
        }
        for (size_t j = 0; j < m; ++j) o[j] = o[j] || levels_[l].test(q[j]);
      }
      for (size_t j = 0; j < m; ++j) found += o[j];
      i += m;
    }
    return found;
  }
  // Removes one copy of the key from the newest level that matches it; false if no
  // level matches.
  bool erase(KeyView key) noexcept {
    const Probe p(*this, hash(key));
    for (size_t l = levels_.size(); l-- > 0;)
      if (levels_[l].erase_at(p.i1(l), p.fp(l))) return true;
    return false;
  }
  // Copies of the key's fingerprint over all levels (>= copies inserted).
  size_t count(KeyView key) const noexcept {
    const Probe p(*this, hash(key));
    size_t c = 0;
    for (size_t l = 0; l < levels_.size(); ++l) c += levels_[l].count_at(p.i1(l), p.fp(l));
    return c;
  }

  uint64_t size() const noexcept {
    uint64_t s = 0;
    for (const auto& l : levels_) s += l.size();
    return s;
  }
  bool empty() const noexcept { return size() == 0; }
  uint64_t slots() const noexcept {
    uint64_t s = 0;
    for (const auto& l : levels_) s += l.slots();
    return s;
  }
  double load_factor() const noexcept { return static_cast<double>(size()) / static_cast<double>(slots()); }
  size_t num_levels() const noexcept { return levels_.size(); }
  uint32_t max_levels() const noexcept { return limit_; }
  // Level i's fingerprint width and the fingerprints it holds (i < num_levels()).
  uint32_t level_fingerprint_bits(size_t i) const { return levels_.at(i).fingerprint_bits(); }
  uint64_t level_size(size_t i) const { return levels_.at(i).size(); }
  const ScalableCuckooParams& params() const noexcept { return params_; }
  uint32_t bucket_size() const noexcept { return params_.bucket_size; }
  // Sum over the opened levels of 2b / 2^f_i: at most fpp.
  double fpp_bound() const noexcept {
    double s = 0;
    for (const auto& l : levels_) s += 2.0 * l.bucket_size() / std::ldexp(1.0, static_cast<int>(l.fingerprint_bits()));
    return s;
  }
  // 1 - prod over levels of (1 - 2^-f_i)^(2 b load_i).
  double expected_fpp() const noexcept {
    double log_none = 0;
    for (const auto& l : levels_) {
      const double load = static_cast<double>(l.size()) / static_cast<double>(l.slots());
      log_none += 2.0 * l.bucket_size() * load * std::log1p(-std::ldexp(1.0, -static_cast<int>(l.fingerprint_bits())));
    }
    return log_none == 0 ? 0.0 : -std::expm1(log_none);  // an empty filter: 0, not -0
  }
  size_t size_in_bytes() const noexcept {
    size_t s = 0;
    for (const auto& l : levels_) s += l.bytes();
    return s;
  }
  const Hasher& hasher() const noexcept { return hasher_; }
  // Back to one empty level 0.
  void clear() {
    levels_.clear();
    ext_.clear();
    open_level();
  }

  bool operator==(const BasicScalableCuckooFilter& o) const noexcept {
    return params_ == o.params_ && hasher_.seed == o.hasher_.seed && levels_ == o.levels_;
  }

  // The amq container (Kind::scalable_cuckoo); docs/format.md describes it.
  std::vector<std::byte> serialize() const {
    return detail::serialize_scalable_cuckoo(Hasher::id, hasher_.seed, params_, levels_);
  }
  // Throws amq::Error on malformed input, and Errc::incompatible for a file made
  // with another hasher.
  static BasicScalableCuckooFilter load(std::span<const std::byte> file) {
    detail::LoadedScalableCuckoo l = detail::parse_scalable_cuckoo(file);
    detail::check_hasher(l.hasher_id, Hasher::id, "scalable cuckoo filter");
    Hasher h{};
    h.seed = l.seed;
    return BasicScalableCuckooFilter(l.params, h, std::move(l.levels));
  }

 private:
  // Where a key lands in each level: level l's first bucket is r0 + m_0 (e mod g^l)
  // and its fingerprint the low f_l bits of the hash (0 -> 1).
  class Probe {
   public:
    Probe() = default;
    Probe(const BasicScalableCuckooFilter& f, uint64_t h) noexcept
        : f_(&f),
          h_(h),
          r0_(((h >> 32) * f.m0_) >> 32),
          e_(detail::splitmix64(h)),
          g_(detail::CuckooTable::nested_g(h, f.levels_[0].alt_bits())) {}
    uint64_t i1(size_t l) const noexcept { return r0_ + f_->m0_ * f_->ext_[l].mod(e_); }
    // Both buckets and the fingerprint in level l. G(fp) of the nested alternate
    // bucket depends only on the low alt_bits of the fingerprint, which are the hash's
    // in every level (0 -> 1 either way), so it is computed once per key.
    detail::CuckooTable::Probe at(size_t l) const noexcept {
      const detail::CuckooTable& t = f_->levels_[l];
      const uint64_t i = i1(l);
      return {i, t.alt_nested(i, g_), t.fingerprint(h_)};
    }

    uint32_t fp(size_t l) const noexcept { return f_->levels_[l].fingerprint(h_); }
    uint64_t hash() const noexcept { return h_; }

   private:
    const BasicScalableCuckooFilter* f_ = nullptr;
    uint64_t h_ = 0, r0_ = 0, e_ = 0, g_ = 0;
  };

  BasicScalableCuckooFilter(const ScalableCuckooParams& p, Hasher h, std::vector<detail::CuckooTable> levels)
      : params_(p), hasher_(h), levels_(std::move(levels)) {
    init_geometry();
    for (size_t l = 0; l < levels_.size(); ++l)
      ext_.emplace_back(detail::scalable_cuckoo_level(params_, static_cast<uint32_t>(l)).extension);
  }
  void init_geometry() {
    limit_ = detail::scalable_cuckoo_level_limit(params_);
    m0_ = detail::scalable_cuckoo_level(params_, 0).num_buckets;
  }
  uint64_t hash(const KeyView& key) const noexcept { return hasher_(key.bytes()); }
  void open_level() {
    const auto l = static_cast<uint32_t>(levels_.size());
    const auto g = detail::scalable_cuckoo_level(params_, l);
    levels_.emplace_back(g.num_buckets, g.fingerprint_bits, params_.bucket_size, hasher_.seed + l,
                         detail::scalable_cuckoo_base_bits(params_));
    ext_.emplace_back(g.extension);
  }
  CuckooStatus insert_new(const Probe& p) {
    const size_t n = levels_.size() - 1;
    auto& newest = levels_[n];
    const uint64_t i1 = p.i1(n);
    const uint32_t fp = p.fp(n);
    const auto cap = detail::scalable_cuckoo_level(params_, static_cast<uint32_t>(n)).capacity;
    if (newest.size() < cap && newest.insert_at(i1, fp)) return CuckooStatus::inserted;
    if (newest.count_at(i1, fp) >= 2 * params_.bucket_size) return CuckooStatus::full;  // 2b copies of it here
    if (levels_.size() >= limit_) return CuckooStatus::full;
    open_level();
    const Probe q(*this, p.hash());
    if (levels_.back().insert_at(q.i1(n + 1), q.fp(n + 1))) return CuckooStatus::inserted;
    return CuckooStatus::full;  // unreachable: a fresh level has room
  }

  ScalableCuckooParams params_;
  Hasher hasher_;
  uint32_t limit_ = 1;
  uint64_t m0_ = 2;
  std::vector<detail::CuckooTable> levels_;
  // e mod growth^l, per level: a mask when growth^l is a power of two.
  struct Ext {
    explicit Ext(uint64_t d) noexcept : mask(std::has_single_bit(d) ? d - 1 : 0), pow2(std::has_single_bit(d)), fm(d) {}
    uint64_t mod(uint64_t e) const noexcept { return pow2 ? e & mask : fm.mod(e); }
    uint64_t mask;
    bool pow2;
    detail::FastMod64 fm;
  };
  std::vector<Ext> ext_;
};

using ScalableCuckooFilter = BasicScalableCuckooFilter<>;

}  // namespace amq
