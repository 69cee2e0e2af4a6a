// amq/ribbon_filter.hpp — a static filter within a few percent of the space bound at any
// false-positive rate, fractional bits per key included: a standard Ribbon filter
// (Dillinger & Walzer, "Ribbon filter: practically smaller than Bloom and Xor", 2021).
//
// A set of n keys becomes a linear system over GF(2). Each key's 64-bit hash gives a
// start slot s, a 128-bit coefficient row c (bit 0 set) covering slots s..s+127 of m
// slots (the ribbon width is 128), and a fingerprint f. The filter stores a solution S
// (m slots of up to 64 bits) with XOR_{i : bit i of c} S[s + i] = f in the key's low
// `columns` bits. A lookup recomputes that XOR (one popcount per result bit) and
// compares: a key of the set always matches, an absent key with probability
// 2^-columns.
//
//  * Banding: rows are added one at a time into an m-slot band (on-the-fly Gaussian
//    elimination, the paper's algorithm): a row whose leading slot is taken is XORed
//    with the row stored there and moves to its next set bit. A row that vanishes with
//    a zero result (a duplicate key, or a consistent dependent row) is redundant and
//    dropped; one that vanishes with a non-zero result means this seed cannot hold the
//    set, and construction starts over with the next seed (ribbon seed 0, 1, 2, ...),
//    adding slots after the fourth. Back-substitution then solves the band from the last
//    slot down, free slots taking pseudo-random values.
//  * Interleaved solution storage: slots are grouped in blocks of 64; a block keeps one
//    64-bit word per result column (column-major). The first `lower_blocks` blocks have
//    r columns, the rest r + 1, and a key checks as many columns as its start block has.
//    So the rate is any mixture of 2^-r and 2^-(r+1): build(keys, p) picks r and the
//    number of r-column blocks so that the expected rate is at most p with the fewest
//    bits, with no rounding up to a whole fingerprint width (p = 0.003 gives ~8.5 bits
//    per slot, not 9).
//  * Standard rather than homogeneous Ribbon: a standard filter's rate is exactly the
//    fingerprint's, 2^-columns, with no extra term for the inconsistent rows a
//    homogeneous filter tolerates; the price is that a seed may fail, which the bounded
//    retry absorbs (an attempt fails with small probability at the chosen overhead).
//  * Construction never fails for valid input and never loops: at most kMaxAttempts
//    seeds, each attempt past the fourth adding slots, so the last ones have twice the
//    slots or more, where banding 128-wide rows cannot fail short of a broken hash.
//    Memory during construction: the n 64-bit hashes (8 n bytes, from build; the
//    caller's span for from_hashes), the keys' mixed hashes sorted by start slot (8 n:
//    banding in start order walks the band once instead of jumping about it), the band
//    of m 24-byte rows (m = 1.02 n to 1.07 n for 10^3 to 10^8 keys), and the solution
//    (m * columns / 8 bytes): about 16 n + 24 m + size_in_bytes(), ~42 bytes a key.
//  * Width 128 rather than 64: 64-wide rows need ~10-12% spare slots to band a million
//    keys with a good chance per seed, 128-wide ones ~5%, which is what brings the size
//    within 8% of log2(1/fpp) bits a key; a lookup reads three blocks' words, not two.
//  * The solution lives in transparent huge pages when large (a lookup then costs its
//    cache misses and no page walk). contains_many makes the rows of a chunk of keys
//    first and tests them after (prefetching each key's words in between when the
//    filter is larger than a quarter of the last-level cache, which other cores share).
//  * load() validates every field before allocating anything; open() memory-maps a file
//    and answers from the mapping without copying (the payload is 8-aligned in the
//    container). docs/format.md describes the bytes.
//  * Keys are hashed with XXH3-64 and the filter's seed (amq/hash.hpp); a uint64_t key is
//    its 8 little-endian bytes. Static: built once, never changed; concurrent const
//    calls are safe.
//
// Choose it for a static set when space matters most, or when the target rate is not
// a power of two (no rounding up to a whole fingerprint width). Choose
// BinaryFuseFilter for a whole-bit rate when lookups matter more (3 or 4 reads and an
// XOR, where this filter computes one parity per result bit over up to three blocks),
// and a dynamic filter (CuckooFilter, BloomFilter, or a growing one) when keys arrive
// after construction.
//
//   std::vector<std::string> words = ...;
//   auto f = amq::RibbonFilter::build(words, 0.001);
//   bool maybe = f.contains("apple");
//   auto g = amq::RibbonFilter::open("words.ribbon");   // queried from the mapping
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "amq/detail/huge_pages.hpp"
#include "amq/detail/prefetch.hpp"
#include "amq/hash.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace amq {
namespace detail {
class FileStorage;
}

class RibbonFilter {
 public:
  static constexpr unsigned kWidth = 128;        // ribbon width: coefficient bits per key
  static constexpr unsigned kMaxColumns = 64;    // result bits per slot, at most
  static constexpr unsigned kMaxAttempts = 32;   // seeds tried before giving up
  static constexpr uint64_t kMaxBlocks = uint64_t{1} << 40;

  // A filter holding the keys (any range of things KeyView takes: strings, byte spans,
  // uint64_t) at false-positive rate `fpp`, hashed with `seed`. Duplicates are allowed.
  // Throws Errc::invalid_argument for fpp outside [2^-63, 1), Errc::too_large beyond
  // 2^44 keys or when memory runs out during construction.
  template <class Keys>
  static RibbonFilter build(const Keys& keys, double fpp = 0.01, uint64_t seed = 0) {
    std::vector<uint64_t, detail::HugePageAllocator<uint64_t>> hashes;  // a page fault per 512 keys otherwise
    hashes.reserve(std::size(keys));
    const Xxh3Hasher h{.seed = seed};
    for (const auto& k : keys) hashes.push_back(h(KeyView(k).bytes()));
    return from_hashes(hashes, fpp, seed);
  }
  // The same from the keys' hashes, Xxh3Hasher{seed}(key bytes).
  static RibbonFilter from_hashes(std::span<const uint64_t> hashes, double fpp = 0.01, uint64_t seed = 0);

  // True if the key may be in the set; false means surely absent.
  bool contains(KeyView key) const noexcept { return contains_hash(Xxh3Hasher{.seed = seed_}(key.bytes())); }
  bool contains_hash(uint64_t h) const noexcept { return contains_row(row_of(h)); }
  // The same with the portable scalar code (the vector paths must agree with it).
  bool contains_hash_portable(uint64_t h) const noexcept {
    const Row row = row_of(h);
    const uint64_t b = row.start / 64;
    const bool upper = b >= lower_blocks_;
    const uint64_t* w0 = words_ + block_offset(b);
    const uint64_t* w1 = w0 + lower_cols_ + upper;
    const uint64_t* w2 = w1 + lower_cols_ + (b + 1 >= lower_blocks_);
    const uint64_t got = columns_portable(w0, w1, w2, static_cast<unsigned>(row.start % 64), row, columns_of(b));
    return ((got ^ row.result) & (upper ? upper_mask_ : lower_mask_)) == 0;
  }

  // Batched contains: out[i] = contains(keys[i]); returns how many are true. Keys go
  // in chunks of kChunk: first every key's row is made (and, beyond a quarter of the
  // last-level cache, its words prefetched), then every row is tested. The test loop
  // holds no hashing, so the out-of-order window spans many more keys' loads than a
  // loop of single lookups does, and their cache misses overlap.
  template <class Keys>
  size_t contains_many(const Keys& keys, std::span<bool> out) const noexcept {
    const Xxh3Hasher hasher{.seed = seed_};
    const size_t n = std::size(keys);
    size_t found = 0;
    auto it = std::begin(keys);
    Row rows[kChunk];
    for (size_t i = 0; i < n; i += kChunk) {
      const size_t m = std::min(kChunk, n - i);
      for (size_t k = 0; k < m; ++k, ++it) {
        rows[k] = row_of(hasher(KeyView(*it).bytes()));
        if (prefetch_batches_) prefetch_row(rows[k]);
      }
      for (size_t k = 0; k < m; ++k) found += (out[i + k] = contains_row(rows[k]));
    }
    return found;
  }
  static constexpr size_t kChunk = 64;
  // Whether the batched lookups prefetch (by default: beyond a quarter of the LLC).
  void prefetch_batches(bool enable) noexcept { prefetch_batches_ = enable; }
  size_t contains_many_hashes(std::span<const uint64_t> hashes, std::span<bool> out) const noexcept;

  // The rate to expect for an absent key: the mean over start blocks of 2^-columns.
  double expected_fpp() const noexcept;
  uint64_t size() const noexcept { return keys_; }  // keys held (distinct rows)
  uint64_t num_slots() const noexcept { return blocks_ * 64; }
  uint64_t num_blocks() const noexcept { return blocks_; }
  uint64_t lower_blocks() const noexcept { return lower_blocks_; }
  unsigned lower_columns() const noexcept { return lower_cols_; }  // r; later blocks r + 1
  // Solution bits per slot on average (between r and r + 1).
  double bits_per_slot() const noexcept;
  uint64_t ribbon_seed() const noexcept { return ribbon_seed_; }
  uint64_t seed() const noexcept { return seed_; }
  size_t size_in_bytes() const noexcept { return num_words_ * 8; }
  std::span<const uint64_t> words() const noexcept { return {words_, num_words_}; }
  bool is_mapped() const noexcept;

  bool operator==(const RibbonFilter& o) const noexcept;

  // The amq container (Kind::ribbon); docs/format.md describes it.
  std::vector<std::byte> serialize() const;
  // Copies the file's solution. Throws amq::Error on malformed input.
  static RibbonFilter load(std::span<const std::byte> file);
  // Memory-maps the file and answers from the mapping; the checksum is verified unless
  // `verify_checksum` is false. Throws amq::Error (naming the path) on malformed input.
  static RibbonFilter open(const std::string& path, bool verify_checksum = true);

  struct Row {
    uint64_t start;     // first slot, in [0, 64 * (blocks - 2))
    uint64_t coeff_lo;  // bit i: slot start + i; bit 0 always set
    uint64_t coeff_hi;  // bit i: slot start + 64 + i
    uint64_t result;    // fingerprint; the low columns_of(start / 64) bits count
  };
  // The row a key's hash gives under this filter's ribbon seed.
  Row row_of(uint64_t h) const noexcept { return make_row(h, mix_, blocks_); }
  static Row make_row(uint64_t h, uint64_t mix, uint64_t blocks) noexcept {
    return row_from_mixed(detail::splitmix64(h ^ mix), blocks);
  }
  // The row from a = splitmix64(h ^ mix); its start grows with a.
  static Row row_from_mixed(uint64_t a, uint64_t blocks) noexcept {
    const unsigned __int128 p = static_cast<unsigned __int128>(a) * 0xd1b54a32d192ed03ULL;
    const unsigned __int128 q = static_cast<unsigned __int128>(a) * 0x9e3779b97f4a7c15ULL;
    return {reduce(a, 64 * (blocks - 2)), (static_cast<uint64_t>(p) ^ static_cast<uint64_t>(p >> 64)) | 1,
            static_cast<uint64_t>(q) ^ static_cast<uint64_t>(q >> 64), a};
  }

 private:
  RibbonFilter() = default;
  static uint64_t mix_of(uint64_t ribbon_seed) noexcept { return detail::splitmix64(ribbon_seed ^ 0x5249424e); }
  unsigned columns_of(uint64_t block) const noexcept { return lower_cols_ + (block >= lower_blocks_); }
  uint64_t block_offset(uint64_t block) const noexcept {
    return block * lower_cols_ + std::max(block, lower_blocks_) - lower_blocks_;
  }
  // Branch-free but for a loop whose count is fixed for the filter: every lookup
  // computes r + 1 columns (r when all blocks have r) and masks the ones its start
  // block lacks, so lookups overlap instead of each waiting on a mispredicted exit.
  // Reading column r of an r-column block reads the next block's words, which exist
  // whenever some block has r + 1 columns (the last block is one of those then).
  // The coefficients are shifted once to the three blocks' bit positions (c0 on block
  // b, c1 on b + 1, c2 on b + 2) so that a column costs three ANDs and two XORs and no
  // shifts of the solution words. Where the build targets AVX2, 8 columns are done at a
  // time with plain loads (up to 7 words past the widest block's last column: start
  // blocks from fast_blocks_ on, whose reads could pass the end, take the scalar path).
  // A 512-bit version with VPOPCNTDQ of the unshifted layout measured slower on a CPU
  // that has both.
  [[gnu::always_inline]] bool contains_row(const Row& row) const noexcept {
    const uint64_t b = row.start / 64;
    const unsigned o = static_cast<unsigned>(row.start % 64);
    const bool upper = b >= lower_blocks_;
    const uint64_t* w0 = words_ + block_offset(b);
    const uint64_t* w1 = w0 + lower_cols_ + upper;
    const uint64_t* w2 = w1 + lower_cols_ + (b + 1 >= lower_blocks_);
    const uint64_t c0 = row.coeff_lo << o;
    const uint64_t c1 = (row.coeff_hi << o) | ((row.coeff_lo >> 1) >> (63 - o));
    const uint64_t c2 = (row.coeff_hi >> 1) >> (63 - o);
#if defined(__AVX2__)
    const uint64_t got = b < fast_blocks_ ? columns_avx2(w0, w1, w2, c0, c1, c2, max_cols_)
                                          : columns_shifted(w0, w1, w2, c0, c1, c2, max_cols_);
#else
    const uint64_t got = columns_shifted(w0, w1, w2, c0, c1, c2, max_cols_);
#endif
    return ((got ^ row.result) & (upper ? upper_mask_ : lower_mask_)) == 0;
  }
  static uint64_t columns_portable(const uint64_t* w0, const uint64_t* w1, const uint64_t* w2, unsigned o,
                                   const Row& row, unsigned n) noexcept {
    uint64_t got = 0;
    for (unsigned j = 0; j < n; ++j) {
      const uint64_t lo = (w0[j] >> o) | ((w1[j] << 1) << (63 - o));
      const uint64_t hi = (w1[j] >> o) | ((w2[j] << 1) << (63 - o));
      got |= static_cast<uint64_t>(std::popcount((lo & row.coeff_lo) ^ (hi & row.coeff_hi)) & 1) << j;
    }
    return got;
  }
  static uint64_t columns_shifted(const uint64_t* w0, const uint64_t* w1, const uint64_t* w2, uint64_t c0,
                                  uint64_t c1, uint64_t c2, unsigned n) noexcept {
    uint64_t got = 0;
    for (unsigned j = 0; j < n; ++j)
      got |= static_cast<uint64_t>(std::popcount((w0[j] & c0) ^ (w1[j] & c1) ^ (w2[j] & c2)) & 1) << j;
    return got;
  }
#if defined(__AVX2__)
  // Columns j..j+3 in one vector and j+4..j+7 in another, folded to 32 bits and merged
  // into one vector of eight 32-bit lanes (order j, j+4, j+1, j+5, ...), folded to a
  // nibble, whose parity a byte shuffle looks up; kUnzip puts the 8 bits back in order.
  static uint64_t columns_avx2(const uint64_t* w0, const uint64_t* w1, const uint64_t* w2, uint64_t c0,
                               uint64_t c1, uint64_t c2, unsigned n) noexcept {
    const __m256i k0 = _mm256_set1_epi64x(static_cast<long long>(c0));
    const __m256i k1 = _mm256_set1_epi64x(static_cast<long long>(c1));
    const __m256i k2 = _mm256_set1_epi64x(static_cast<long long>(c2));
    const __m256i nibble_parity = _mm256_setr_epi8(0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0,  //
                                                   0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0);
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    const auto four = [&](unsigned j) {
      const auto ld = [](const uint64_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); };
      return _mm256_xor_si256(_mm256_xor_si256(_mm256_and_si256(ld(w0 + j), k0), _mm256_and_si256(ld(w1 + j), k1)),
                              _mm256_and_si256(ld(w2 + j), k2));
    };
    uint64_t got = 0;
    for (unsigned j = 0; j < n; j += 8) {
      const __m256i a = four(j), b = four(j + 4);
      __m256i x = _mm256_blend_epi32(_mm256_xor_si256(a, _mm256_srli_epi64(a, 32)),
                                     _mm256_xor_si256(b, _mm256_slli_epi64(b, 32)), 0xaa);
      x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
      x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 8));
      x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 4));
      const __m256i p = _mm256_shuffle_epi8(nibble_parity, _mm256_and_si256(x, low4));  // lane byte 0: parity
      const unsigned m = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_slli_epi32(p, 31))));
      got |= static_cast<uint64_t>(kUnzip[m]) << j;
    }
    return got;
  }
  // kUnzip[m]: bit 2i of m to bit i, bit 2i + 1 to bit i + 4.
  static constexpr auto kUnzip = [] {
    std::array<uint8_t, 256> t{};
    for (unsigned m = 0; m < 256; ++m)
      for (unsigned i = 0; i < 4; ++i)
        t[m] |= static_cast<uint8_t>((((m >> (2 * i)) & 1) << i) | (((m >> (2 * i + 1)) & 1) << (i + 4)));
    return t;
  }();
#endif
  // One prefetch per cache line of the words a lookup reads: w0 .. w2 + max_cols_.
  void prefetch_row(const Row& row) const noexcept {
    const uint64_t b = row.start / 64;
    const uint64_t* w = words_ + block_offset(b);
    const uintptr_t first = reinterpret_cast<uintptr_t>(w) & ~uintptr_t{63};
    const uintptr_t last = reinterpret_cast<uintptr_t>(w + 3 * uint64_t{max_cols_}) - 1;
    for (uintptr_t a = first; a <= last; a += 64) detail::prefetch(reinterpret_cast<const void*>(a));
  }
  void set_shape(uint64_t blocks, uint64_t lower_blocks, unsigned lower_cols) noexcept;
  static RibbonFilter build_attempts(std::span<const uint64_t> hashes, double fpp, uint64_t seed);

  uint64_t seed_ = 0;
  uint64_t ribbon_seed_ = 0;
  uint64_t mix_ = mix_of(0);
  uint64_t keys_ = 0;
  uint64_t blocks_ = 3;
  uint64_t lower_blocks_ = 3;
  unsigned lower_cols_ = 0;
  unsigned max_cols_ = 0;    // columns of the widest block
  uint64_t fast_blocks_ = 0;  // start blocks below this may read 8-word groups past their last column
  uint64_t lower_mask_ = 0;  // the low r bits
  uint64_t upper_mask_ = 1;  // the low r + 1 bits
  bool prefetch_batches_ = false;
  std::shared_ptr<const detail::FileStorage> storage_;  // the words' owner: a copy or a mapping
  const uint64_t* words_ = nullptr;
  size_t num_words_ = 0;
};

}  // namespace amq
