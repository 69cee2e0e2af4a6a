// amq/detail/sbbf.hpp — the split block Bloom filter's blocks and kernels (portable,
// SSE2, AVX2), its sizing model, and its container code, behind BlockedBloomFilter
// (amq/blocked_bloom_filter.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "amq/detail/huge_pages.hpp"

#if defined(__SSE2__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define AMQ_SBBF_SSE2 1
#else
#define AMQ_SBBF_SSE2 0
#endif

namespace amq {

// A 256-bit block of a blocked Bloom filter: eight 32-bit words, little-endian in files
// and in Parquet's bitset (BlockedBloomFilter::Block).
struct alignas(32) BlockedBloomBlock {
  uint32_t w[8];
};
static_assert(sizeof(BlockedBloomBlock) == 32);

}  // namespace amq

namespace amq::detail::sbbf {

// The Parquet spec's eight odd 32-bit salts.
inline constexpr uint32_t kSalt[8] = {0x47b6137bU, 0x44974d91U, 0x8824ad5bU, 0xa2b7289dU,
                                      0x705495c7U, 0x2df1424bU, 0x9efc4947U, 0x5c6bfb31U};
inline constexpr uint64_t kMaxBlocks = uint64_t{1} << 32;  // (h >> 32) * blocks stays in 64 bits

using Block = BlockedBloomBlock;
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

// contains_portable, out of line.
[[gnu::cold]] bool contains_portable_cold(const Block& b, uint32_t key) noexcept;
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

}  // namespace amq::detail::sbbf
