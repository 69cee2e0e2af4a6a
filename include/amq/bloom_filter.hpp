// amq/bloom_filter.hpp — a Bloom filter that is bit-for-bit Guava's BloomFilter.
//
// Choose it when files must be exchanged with Java programs that use
// com.google.common.hash.BloomFilter, or when you want the classic structure with
// Guava's exact sizing. For raw speed choose BlockedBloomFilter; for a set whose size
// is unknown in advance choose ScalableBloomFilter.
//
// Guarantees
//  * No false negatives: contains(k) is true for every k inserted.
//  * Sized as Guava 31.1's BloomFilter.create(funnel, n, fpp): bits =
//    (long)(-n ln p / (ln 2)^2) rounded up to whole 64-bit words, k = max(1,
//    round(bits / n * ln 2)); the false-positive rate is about fpp while at most n keys
//    are in it, and rises past that (expected_fpp() tells the current estimate).
//  * Hashing is Guava's MURMUR128_MITZ_64 (murmur3_x64_128, seed 0); filters read
//    from Guava files made with the older MURMUR128_MITZ_32 are answered with it.
//  * Keys are funnelled as Guava does: a string is its UTF-8 bytes
//    (Funnels.stringFunnel(UTF_8)), a uint64_t its 8 little-endian bytes
//    (Funnels.longFunnel()), a byte span itself (Funnels.byteArrayFunnel()).
//  * to_guava()/from_guava() are Guava's writeTo/readFrom stream, byte for byte.
//  * Not thread-safe for writers; concurrent const calls are safe.
//
//   auto f = amq::BloomFilter::create(1'000'000, 0.01);
//   f.insert("apple");
//   f.insert(uint64_t{42});
//   bool maybe = f.contains("apple");            // true
//   std::vector<std::byte> java = f.to_guava();  // BloomFilter.readFrom(in, funnel)
#pragma once

#include <algorithm>
#include <bit>
#include <iterator>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "amq/detail/fastmod.hpp"
#include "amq/detail/huge_pages.hpp"
#include "amq/detail/prefetch.hpp"
#include "amq/hash.hpp"

namespace amq {

// Guava's BloomFilterStrategies ordinals.
enum class GuavaStrategy : uint8_t { murmur128_mitz_32 = 0, murmur128_mitz_64 = 1 };

class BloomFilter {
 public:
  static constexpr double kDefaultFpp = 0.03;  // Guava's default
  static constexpr int kMaxHashes = 255;       // Guava stores k in one byte

  // Guava's BloomFilter.create(funnel, expected_insertions, fpp). fpp must be in (0, 1);
  // expected_insertions 0 counts as 1. Throws Errc::invalid_argument, or Errc::too_large
  // for more than 2^31 - 1 words (Guava's limit).
  static BloomFilter create(uint64_t expected_insertions, double fpp = kDefaultFpp,
                            GuavaStrategy strategy = GuavaStrategy::murmur128_mitz_64);
  // The size create(expected_insertions, fpp) picks, without allocating it; same errors.
  struct Geometry {
    uint64_t words;  // 64-bit words of bits
    int hashes;      // k
  };
  static Geometry geometry(uint64_t expected_insertions, double fpp);

  // An empty filter with exactly `num_words` 64-bit words and `num_hashes` probes.
  BloomFilter(uint64_t num_words, int num_hashes, GuavaStrategy strategy = GuavaStrategy::murmur128_mitz_64);

  // Sets the key's bits; returns true if any bit changed (Guava's put()).
  bool insert(KeyView key) noexcept {
    const Hash128 h = murmur3_x64_128(key.bytes());
    bool changed = false;
    for_each_index(h, [&](uint64_t bit) {
      uint64_t& w = words_[bit >> 6];
      const uint64_t mask = uint64_t{1} << (bit & 63);
      changed |= (w & mask) == 0;
      w |= mask;
      return true;
    });
    return changed;
  }

  // True if the key may be in the set; false means surely absent (Guava's mightContain()).
  bool contains(KeyView key) const noexcept { return contains_hash(murmur3_x64_128(key.bytes())); }

  // Batched contains: out[i] = contains(keys[i]); returns how many are true. For a
  // filter larger than twice the L2 cache (detail::l2_cache_bytes()) it hashes a batch
  // first and prefetches every word it will test, so the batch's misses overlap
  // (contains stops at the first clear bit, a branch that mispredicts and serialises the
  // misses); a smaller filter is answered key by key (prefetching there only adds work:
  // the two tie at about twice L2, docs/decisions/0046).
  // `keys` is any range of things KeyView accepts.
  template <class Keys>
  size_t contains_many(const Keys& keys, std::span<bool> out) const noexcept {
    if (prefetches_batches()) return contains_many_prefetched(keys, out);
    size_t found = 0, i = 0;
    for (const auto& key : keys) found += out[i++] = contains(KeyView(key));
    return found;
  }
  // True when contains_many takes its prefetching path.
  bool prefetches_batches() const noexcept { return size_in_bytes() > 2 * detail::l2_cache_bytes(); }
  // contains_many's prefetching path, whatever the filter's size.
  template <class Keys>
  size_t contains_many_prefetched(const Keys& keys, std::span<bool> out) const noexcept;

  // Guava's putAll: OR of the bits. Throws Errc::incompatible unless both filters have
  // the same bit size, number of hashes and strategy.
  void merge(const BloomFilter& other);
  void insert_all(const BloomFilter& other) { merge(other); }
  bool is_compatible(const BloomFilter& other) const noexcept {
    return num_hashes_ == other.num_hashes_ && words_.size() == other.words_.size() &&
           strategy_ == other.strategy_;
  }

  // Guava's expectedFpp(): (bits set / bit size)^k.
  double expected_fpp() const noexcept;
  // Guava's approximateElementCount(): -bitSize ln(1 - set/bitSize) / k, rounded half up;
  // UINT64_MAX when every bit is set (Guava's overflow).
  uint64_t approximate_element_count() const noexcept;
  uint64_t bit_count() const noexcept;  // bits set
  uint64_t bit_size() const noexcept { return words_.size() * 64; }
  int num_hashes() const noexcept { return num_hashes_; }
  GuavaStrategy strategy() const noexcept { return strategy_; }
  std::span<const uint64_t> words() const noexcept { return words_; }
  std::span<uint64_t> mutable_words() noexcept { return words_; }
  size_t size_in_bytes() const noexcept { return words_.size() * 8; }
  void clear() noexcept;

  bool operator==(const BloomFilter& other) const noexcept {
    return is_compatible(other) && words_ == other.words_;
  }

  // Guava's writeTo(OutputStream): strategy ordinal, k, big-endian word count and words.
  std::vector<std::byte> to_guava() const;
  // Guava's readFrom(InputStream, funnel). Throws amq::Error on malformed input.
  static BloomFilter from_guava(std::span<const std::byte> data);
  // True if `data` has exactly the shape of a Guava stream (ordinal 0/1, k >= 1,
  // length 6 + 8 * words).
  static bool looks_like_guava(std::span<const std::byte> data) noexcept;

  // The amq container (Kind::bloom).
  std::vector<std::byte> serialize() const;
  static BloomFilter load(std::span<const std::byte> file);

  // Probing with a precomputed murmur3_x64_128 hash of the funnelled key.
  bool contains_hash(Hash128 h) const noexcept {
    if (strategy_ == GuavaStrategy::murmur128_mitz_64) [[likely]] {
      // The common k are compiled fully unrolled (a runtime-k loop cost a third more).
      switch (num_hashes_) {
        case 2: return probe_mitz64<2>(h);
        case 3: return probe_mitz64<3>(h);
        case 4: return probe_mitz64<4>(h);
        case 5: return probe_mitz64<5>(h);
        case 6: return probe_mitz64<6>(h);
        case 7: return probe_mitz64<7>(h);
        case 8: return probe_mitz64<8>(h);
        case 9: return probe_mitz64<9>(h);
        case 10: return probe_mitz64<10>(h);
        case 11: return probe_mitz64<11>(h);
        case 12: return probe_mitz64<12>(h);
        default: return probe_mitz64<0>(h);
      }
    }
    return for_each_index(h, [&](uint64_t bit) { return (words_[bit >> 6] >> (bit & 63)) & 1; });
  }

 private:
  // MITZ_64 probing, branch-free in groups of four probes: the loads of a group
  // overlap, and an absent key (usually caught by the first group) costs one
  // well-predicted branch instead of a mispredicted exit at a random probe.
  // MITZ_64's bit for one value of `combined` (Guava: (combined & Long.MAX_VALUE) % m).
  uint64_t mitz64_bit(uint64_t combined) const noexcept { return mod_.mod(combined & 0x7fffffffffffffffULL); }
  bool probe_bit(uint64_t combined) const noexcept {
    const uint64_t bit = mitz64_bit(combined);
    return (words_[bit >> 6] >> (bit & 63)) & 1;
  }
  // K probes, unrolled; K = 0: num_hashes_ probes in a loop.
  template <int K>
  bool probe_mitz64(Hash128 h) const noexcept {
    const int k = K ? K : num_hashes_;
    uint64_t combined = h.low;
    bool all = true;
#pragma GCC unroll 16
    for (int i = 0; i < k; ++i) {
      all &= probe_bit(combined);
      combined += h.high;
      if (i % 4 == 3 && i + 1 < k && !all) return false;
    }
    return all;
  }

  // Calls f(bit) for the key's k bit indexes in Guava's order; stops early, returning
  // false, when f returns false.
  template <class F>
  bool for_each_index(Hash128 h, F&& f) const noexcept {
    if (strategy_ == GuavaStrategy::murmur128_mitz_64) {
      uint64_t combined = h.low;
      for (int i = 0; i < num_hashes_; ++i) {
        if (!f(mitz64_bit(combined))) return false;
        combined += h.high;
      }
      return true;
    }
    // MURMUR128_MITZ_32: 32-bit arithmetic on the low 64 bits of the hash.
    const uint32_t hash1 = static_cast<uint32_t>(h.low);
    const uint32_t hash2 = static_cast<uint32_t>(h.low >> 32);
    for (int i = 1; i <= num_hashes_; ++i) {
      int32_t combined = static_cast<int32_t>(hash1 + static_cast<uint32_t>(i) * hash2);
      if (combined < 0) combined = ~combined;
      if (!f(mod_.mod(static_cast<uint64_t>(combined)))) return false;
    }
    return true;
  }

  std::vector<uint64_t, detail::HugePageAllocator<uint64_t>> words_;  // huge pages when large
  int num_hashes_;
  GuavaStrategy strategy_;
  detail::FastMod63 mod_;  // % bit_size() by multiplication: probes are < 2^63
};

template <class Keys>
size_t BloomFilter::contains_many_prefetched(const Keys& keys, std::span<bool> out) const noexcept {
  constexpr size_t kIndexes = 256;
  const size_t batch = std::max<size_t>(1, kIndexes / static_cast<size_t>(num_hashes_));
  Hash128 hashes[kIndexes];
  uint64_t idx[kIndexes];
  size_t found = 0;
  size_t i = 0;
  auto it = std::begin(keys);
  const size_t n = std::size(keys);
  while (i < n) {
    const size_t m = std::min(batch, n - i);
    size_t at = 0;
    auto batch_it = it;
    for (size_t j = 0; j < m; ++j, ++batch_it) {
      hashes[j] = murmur3_x64_128(KeyView(*batch_it).bytes());
      for_each_index(hashes[j], [&](uint64_t bit) {
        idx[at++] = bit;
        detail::prefetch(&words_[bit >> 6]);
        return true;
      });
    }
    at = 0;
    for (size_t j = 0; j < m; ++j, ++it) {
      bool all = true;
      for (int h = 0; h < num_hashes_; ++h, ++at) all &= (words_[idx[at] >> 6] >> (idx[at] & 63)) & 1;
      out[i + j] = all;
      found += all;
    }
    i += m;
  }
  return found;
}

}  // namespace amq
