// amq/blocked_bloom_filter.hpp — the fastest amq filter: a cache-line-blocked Bloom
// filter, exactly the split block Bloom filter (SBBF) of the Apache Parquet format.
//
// The bits are 256-bit blocks of eight 32-bit words. A key's 64-bit hash h picks one
// block, ((h >> 32) * num_blocks) >> 32, and sets one bit in each of its eight words:
// bit (x * salt[i]) >> 27 of word i, x = h mod 2^32, salt[] the eight constants of the
// Parquet spec. A lookup touches one 32-byte block (half a cache line): one cache miss
// per key however low the error, which makes it several times faster than a classic
// Bloom filter once the filter is larger than the CPU caches, for ~10-15% more bits.
//
// Guarantees
//  * No false negatives: contains(k) is true for every k inserted.
//  * Sized by create(n, fpp): Parquet's formula m = -8 n / ln(1 - fpp^(1/8)) bits,
//    then corrected (blocked filters are worse than classic ones at the same size, as
//    blocks get uneven loads): the least number of blocks, not only powers of two,
//    whose exact expected rate at n keys (Poisson block loads) is <= 0.97 fpp. The 3%
//    headroom keeps the rate measured on 10^6 absent keys below fpp. Past n keys the
//    rate rises; expected_fpp() tells the current value.
//  * The vector kernels (the default) and the portable scalar path set and test exactly
//    the same bits: single lookups use an inline SSE2 kernel (x86-64's baseline, so no
//    call and no dispatch), inserts and batches an AVX2 kernel chosen at run time.
//  * ParquetBloomFilter hashes as Parquet (XXH64, seed 0, of the key's plain encoding:
//    the bytes of a BYTE_ARRAY, the 8 little-endian bytes of an INT64 — a uint64_t key
//    here), and to_parquet_bitset()/from_parquet_bitset() are the bitset Parquet
//    stores after its BloomFilterHeader, so filters move between amq and Parquet.
//  * Static size, inserts at any time. Not thread-safe for writers; concurrent const
//    calls are safe.
//
// Choose it for speed when the number of keys is known; BloomFilter when Java/Guava
// must read the file; ScalableBloomFilter when the number of keys is unknown.
//
//   auto f = amq::BlockedBloomFilter::create(1'000'000, 0.01);
//   f.insert("apple");
//   bool maybe = f.contains("apple");          // true
//   auto p = amq::ParquetBloomFilter::create(1000, 0.01);
//   p.insert(uint64_t{42});                     // an INT64 column value
//   std::vector<std::byte> bitset = p.to_parquet_bitset();
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "amq/detail/cpu.hpp"
#include "amq/detail/huge_pages.hpp"
#include "amq/detail/prefetch.hpp"
#include "amq/error.hpp"
#include "amq/hash.hpp"

#if defined(__SSE2__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define AMQ_SBBF_SSE2 1
#else
#define AMQ_SBBF_SSE2 0
#endif

namespace amq {
namespace detail::sbbf {

// The Parquet spec's eight odd 32-bit salts.
inline constexpr uint32_t kSalt[8] = {0x47b6137bU, 0x44974d91U, 0x8824ad5bU, 0xa2b7289dU,
                                      0x705495c7U, 0x2df1424bU, 0x9efc4947U, 0x5c6bfb31U};
inline constexpr uint64_t kMaxBlocks = uint64_t{1} << 32;  // (h >> 32) * blocks stays in 64 bits

struct alignas(32) Block {
  uint32_t w[8];
};
static_assert(sizeof(Block) == 32);
// Large filters get transparent huge pages: a lookup then costs one cache miss and
// (almost) never a page walk.
using BlockVector = std::vector<Block, HugePageAllocator<Block>>;

inline uint64_t block_index(uint64_t hash, uint64_t num_blocks) noexcept { return ((hash >> 32) * num_blocks) >> 32; }

inline void insert_portable(Block& b, uint32_t key) noexcept {
  for (int i = 0; i < 8; ++i) b.w[i] |= uint32_t{1} << ((key * kSalt[i]) >> 27);
}
inline bool contains_portable(const Block& b, uint32_t key) noexcept {
  uint32_t missing = 0;
  for (int i = 0; i < 8; ++i) missing |= ~b.w[i] & (uint32_t{1} << ((key * kSalt[i]) >> 27));
  return missing == 0;
}

#if AMQ_SBBF_SSE2
// The same test with SSE2 only, inline. SSE2 has neither a 32-bit multiply-low nor
// per-lane shifts: the products come from two 32x32->64 multiplies, and 1 << n as the
// float 2^n converted back to int (n = 31 converts to 0x80000000, which is 1 << 31).
inline __m128i mullo32_sse2(__m128i a, __m128i b) noexcept {
  const __m128i even = _mm_mul_epu32(a, b);
  const __m128i odd = _mm_mul_epu32(_mm_srli_epi64(a, 32), _mm_srli_epi64(b, 32));
  return _mm_unpacklo_epi32(_mm_shuffle_epi32(even, _MM_SHUFFLE(0, 0, 2, 0)),
                            _mm_shuffle_epi32(odd, _MM_SHUFFLE(0, 0, 2, 0)));
}
inline __m128i pow2_sse2(__m128i n) noexcept {
  const __m128i exponent = _mm_slli_epi32(_mm_add_epi32(n, _mm_set1_epi32(127)), 23);
  return _mm_cvttps_epi32(_mm_castsi128_ps(exponent));
}
inline bool contains_sse2(const Block& b, uint32_t key) noexcept {
  const __m128i k = _mm_set1_epi32(static_cast<int>(key));
  const __m128i s0 = _mm_setr_epi32(static_cast<int>(kSalt[0]), static_cast<int>(kSalt[1]),
                                    static_cast<int>(kSalt[2]), static_cast<int>(kSalt[3]));
  const __m128i s1 = _mm_setr_epi32(static_cast<int>(kSalt[4]), static_cast<int>(kSalt[5]),
                                    static_cast<int>(kSalt[6]), static_cast<int>(kSalt[7]));
  const __m128i m0 = pow2_sse2(_mm_srli_epi32(mullo32_sse2(k, s0), 27));
  const __m128i m1 = pow2_sse2(_mm_srli_epi32(mullo32_sse2(k, s1), 27));
  const __m128i w0 = _mm_load_si128(reinterpret_cast<const __m128i*>(b.w));
  const __m128i w1 = _mm_load_si128(reinterpret_cast<const __m128i*>(b.w + 4));
  const __m128i missing = _mm_or_si128(_mm_andnot_si128(w0, m0), _mm_andnot_si128(w1, m1));
  return _mm_movemask_epi8(_mm_cmpeq_epi32(missing, _mm_setzero_si128())) == 0xffff;
}
#endif

#if AMQ_SBBF_SSE2
// The AVX2 kernel: the eight lanes' bits in one register. Compiled for AVX2 whatever
// the build targets, so the out-of-line run-time-dispatched kernels (inserts, batches)
// and, where the including code is itself compiled for AVX2, contains_vector share it.
[[gnu::target("avx2")]] inline __m256i mask_avx2(uint32_t key) noexcept {
  const __m256i salt = _mm256_setr_epi32(
      static_cast<int>(kSalt[0]), static_cast<int>(kSalt[1]), static_cast<int>(kSalt[2]), static_cast<int>(kSalt[3]),
      static_cast<int>(kSalt[4]), static_cast<int>(kSalt[5]), static_cast<int>(kSalt[6]), static_cast<int>(kSalt[7]));
  const __m256i product = _mm256_mullo_epi32(_mm256_set1_epi32(static_cast<int>(key)), salt);
  return _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_srli_epi32(product, 27));
}
[[gnu::target("avx2")]] inline bool block_has_avx2(const Block& b, uint32_t key) noexcept {
  const __m256i words = _mm256_load_si256(reinterpret_cast<const __m256i*>(b.w));
  return _mm256_testc_si256(words, mask_avx2(key)) != 0;  // (~words & mask) == 0
}
#endif

// The single-lookup vector kernel, inline: AVX2 where the including code is compiled
// for it, else SSE2 where the build targets x86 (its baseline), else portable.
inline bool contains_vector(const Block& b, uint32_t key) noexcept {
#if AMQ_SBBF_SSE2 && defined(__AVX2__)
  return block_has_avx2(b, key);
#elif AMQ_SBBF_SSE2
  return contains_sse2(b, key);
#else
  return contains_portable(b, key);
#endif
}

// The AVX2 kernels (only call them when detail::cpu_has_avx2()).
void insert_avx2(Block& b, uint32_t key) noexcept;
bool contains_avx2(const Block& b, uint32_t key) noexcept;
// out[i] = contains(blocks, hashes[i]) for m hashes; returns how many are true.
size_t contains_hashes(const Block* blocks, uint64_t num_blocks, const uint64_t* hashes, size_t m, bool* out,
                       bool avx2) noexcept;

// Expected false-positive rate of `num_blocks` blocks holding n keys, for a random
// hash: sum over block loads j ~ Poisson(n / num_blocks) of (1 - (31/32)^j)^8.
double model_fpp(double n, uint64_t num_blocks) noexcept;
// The number of blocks create(n, fpp) uses (see the header comment). Throws
// Errc::invalid_argument or Errc::too_large.
uint64_t blocks_for(uint64_t n, double fpp);

uint64_t bit_count(std::span<const Block> blocks) noexcept;
double expected_fpp(std::span<const Block> blocks) noexcept;
uint64_t approximate_element_count(std::span<const Block> blocks) noexcept;

std::vector<std::byte> serialize(uint32_t hasher_id, uint64_t seed, std::span<const Block> blocks);
struct Loaded {
  uint64_t seed;
  BlockVector blocks;
};
Loaded load(std::span<const std::byte> file, uint32_t hasher_id);
BlockVector blocks_from_bitset(std::span<const std::byte> bitset);

}  // namespace detail::sbbf

template <class Hasher = Xxh3Hasher>
class BasicBlockedBloomFilter {
 public:
  using Block = detail::sbbf::Block;

  // A filter for `expected_insertions` keys (0 counts as 1) at false-positive rate
  // `fpp` in (0, 1), sized as the header comment says.
  static BasicBlockedBloomFilter create(uint64_t expected_insertions, double fpp = 0.01, uint64_t seed = 0) {
    return BasicBlockedBloomFilter(detail::sbbf::blocks_for(expected_insertions, fpp), seed);
  }
  // An empty filter of exactly `num_blocks` blocks (1..2^32).
  explicit BasicBlockedBloomFilter(uint64_t num_blocks, uint64_t seed = 0) {
    if (num_blocks == 0 || num_blocks > detail::sbbf::kMaxBlocks)
      throw Error(Errc::invalid_argument, "blocked Bloom filter: number of blocks must be in 1..2^32, got " +
                                              std::to_string(num_blocks));
    hasher_.seed = seed;
    blocks_.assign(num_blocks, Block{});
  }

  // Parquet's bitset (num_blocks * 32 bytes, little-endian words), hashed by this
  // filter's Hasher with `seed` (ParquetBloomFilter: XXH64 seed 0, as Parquet). Throws
  // Errc::corrupt unless the size is a non-zero multiple of 32.
  static BasicBlockedBloomFilter from_parquet_bitset(std::span<const std::byte> bitset, uint64_t seed = 0) {
    return BasicBlockedBloomFilter(detail::sbbf::blocks_from_bitset(bitset), seed);
  }
  std::vector<std::byte> to_parquet_bitset() const {
    const auto b = std::as_bytes(std::span(blocks_));
    return {b.begin(), b.end()};
  }

  // Sets the key's bits; returns true if any bit changed (the key was surely absent).
  bool insert(KeyView key) noexcept { return insert_hash(hasher_(key.bytes())); }
  bool insert_hash(uint64_t h) noexcept {
    Block& b = blocks_[detail::sbbf::block_index(h, blocks_.size())];
    const Block before = b;
    if (avx2_) detail::sbbf::insert_avx2(b, static_cast<uint32_t>(h));
    else detail::sbbf::insert_portable(b, static_cast<uint32_t>(h));
    return std::memcmp(&before, &b, sizeof(Block)) != 0;
  }

  // True if the key may be in the set; false means surely absent.
  bool contains(KeyView key) const noexcept { return contains_hash(hasher_(key.bytes())); }
  bool contains_hash(uint64_t h) const noexcept {
    const Block& b = blocks_[detail::sbbf::block_index(h, blocks_.size())];
    return simd_ ? detail::sbbf::contains_vector(b, static_cast<uint32_t>(h))
                 : detail::sbbf::contains_portable(b, static_cast<uint32_t>(h));
  }

  // Batched contains: out[i] = contains(keys[i]); returns how many are true. Hashes a
  // batch and prefetches its blocks before testing them, so the misses overlap.
  template <class Keys>
  size_t contains_many(const Keys& keys, std::span<bool> out) const noexcept {
    constexpr size_t kB = 32;
    uint64_t hs[kB];
    size_t found = 0;
    const size_t n = std::size(keys);
    auto it = std::begin(keys);
    for (size_t i = 0; i < n; i += kB) {
      const size_t m = std::min(kB, n - i);
      for (size_t j = 0; j < m; ++j, ++it) {
        hs[j] = hasher_(KeyView(*it).bytes());
        detail::prefetch(&blocks_[detail::sbbf::block_index(hs[j], blocks_.size())]);
      }
      found += detail::sbbf::contains_hashes(blocks_.data(), blocks_.size(), hs, m, out.data() + i, avx2_);
    }
    return found;
  }

  // OR of the bits. Throws Errc::incompatible unless both have the same number of
  // blocks and the same seed (the hasher is the same by type).
  void merge(const BasicBlockedBloomFilter& other) {
    if (blocks_.size() != other.blocks_.size())
      throw Error(Errc::incompatible, "cannot merge blocked Bloom filters of different sizes (" +
                                          std::to_string(blocks_.size()) + " and " +
                                          std::to_string(other.blocks_.size()) + " blocks)");
    if (hasher_.seed != other.hasher_.seed)
      throw Error(Errc::incompatible, "cannot merge blocked Bloom filters with different hash seeds");
    for (size_t i = 0; i < blocks_.size(); ++i)
      for (int w = 0; w < 8; ++w) blocks_[i].w[w] |= other.blocks_[i].w[w];
  }

  // Uses the vector kernels when `enable` (the default): inline SSE2 for single
  // lookups, AVX2 for inserts and batches when the CPU has it. use_simd(false) runs
  // the portable scalar code everywhere. Every path gives the same bits and answers.
  void use_simd(bool enable) noexcept {
    simd_ = enable;
    avx2_ = enable && detail::cpu_has_avx2();
  }
  bool uses_simd() const noexcept { return simd_; }
  bool uses_avx2() const noexcept { return avx2_; }

  // The exact expected rate for a random absent key, from the bits set: the mean
  // over blocks of prod_i (bits set in word i / 32).
  double expected_fpp() const noexcept { return detail::sbbf::expected_fpp(blocks_); }
  // Keys held, estimated from each block's fill.
  uint64_t approximate_element_count() const noexcept { return detail::sbbf::approximate_element_count(blocks_); }
  uint64_t bit_count() const noexcept { return detail::sbbf::bit_count(blocks_); }
  uint64_t num_blocks() const noexcept { return blocks_.size(); }
  uint64_t bit_size() const noexcept { return blocks_.size() * 256; }
  size_t size_in_bytes() const noexcept { return blocks_.size() * sizeof(Block); }
  uint64_t seed() const noexcept { return hasher_.seed; }
  const Hasher& hasher() const noexcept { return hasher_; }
  std::span<const Block> blocks() const noexcept { return blocks_; }
  void clear() noexcept { std::fill(blocks_.begin(), blocks_.end(), Block{}); }

  bool operator==(const BasicBlockedBloomFilter& o) const noexcept {
    return hasher_.seed == o.hasher_.seed && blocks_.size() == o.blocks_.size() &&
           std::memcmp(blocks_.data(), o.blocks_.data(), size_in_bytes()) == 0;
  }

  // The amq container (Kind::blocked_bloom); docs/format.md describes it.
  std::vector<std::byte> serialize() const { return detail::sbbf::serialize(Hasher::id, hasher_.seed, blocks_); }
  // Throws amq::Error on malformed input, or Errc::unsupported for another hasher.
  static BasicBlockedBloomFilter load(std::span<const std::byte> file) {
    detail::sbbf::Loaded l = detail::sbbf::load(file, Hasher::id);
    return BasicBlockedBloomFilter(std::move(l.blocks), l.seed);
  }

 private:
  BasicBlockedBloomFilter(detail::sbbf::BlockVector blocks, uint64_t seed) : blocks_(std::move(blocks)) {
    hasher_.seed = seed;
  }

  Hasher hasher_{};
  detail::sbbf::BlockVector blocks_;
  bool simd_ = true;
  bool avx2_ = detail::cpu_has_avx2();
};

using BlockedBloomFilter = BasicBlockedBloomFilter<Xxh3Hasher>;
// Parquet's split block Bloom filter: XXH64 with seed 0.
using ParquetBloomFilter = BasicBlockedBloomFilter<Xxh64Hasher>;

}  // namespace amq
