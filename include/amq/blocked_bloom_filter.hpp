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
//    call and no dispatch), inserts and batches an AVX2 kernel chosen when the filter
//    is made or loaded.
//  * BlockedBloomFilter hashes with Mix64Hasher (amq/hash.hpp): a uint64_t key (any
//    8-byte key) through a two-multiply mixer, other keys through XXH3-64. Files amq
//    wrote before Mix64Hasher name Xxh3Hasher (id 1): Xxh3BlockedBloomFilter reads them
//    and answers exactly as before, and AnySet (amq::load_set, the CLI, Python) picks
//    the type by the file's hasher id. BlockedBloomFilter::load of such a file throws
//    Errc::unsupported naming the hash.
//  * ParquetBloomFilter hashes as Parquet (XXH64, seed 0, of the key's plain encoding:
//    the bytes of a BYTE_ARRAY, the 8 little-endian bytes of an INT64 — a uint64_t key
//    here), and to_parquet_bitset()/from_parquet_bitset() are the bitset Parquet
//    stores after its BloomFilterHeader, so filters move between amq and Parquet.
//  * Static size, inserts at any time. Not thread-safe for writers; concurrent const
//    calls are safe.
//
// Complexity and memory
//  * insert() and contains(): O(1), one 32-byte block read (one cache miss once the
//    filter is larger than the caches); contains_many() hashes a batch and prefetches
//    its blocks first, so the misses overlap.
//  * 256 bits per block and nothing else: create(n, fpp) gives about 10.6 bits per key
//    at fpp = 1% (the sizing above). merge(), clear() and the statistics are O(blocks).
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

#include "amq/detail/dispatch.hpp"
#include "amq/detail/huge_pages.hpp"
#include "amq/detail/prefetch.hpp"
#include "amq/detail/sbbf.hpp"
#include "amq/error.hpp"
#include "amq/hash.hpp"

namespace amq {

template <class Hasher = Mix64Hasher>
class BasicBlockedBloomFilter {
 public:
  using Block = BlockedBloomBlock;

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
    num_blocks_ = num_blocks;
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
  // The portable path (a test's ScopedIsaMask) is out of line, so that the loop of a
  // caller holds the vector kernel alone.
  bool contains_hash(uint64_t h) const noexcept {
    const Block& b = blocks_.data()[detail::sbbf::block_index(h, num_blocks_)];
    if (!simd_) [[unlikely]]
      return detail::sbbf::contains_portable_cold(b, static_cast<uint32_t>(h));
    return detail::sbbf::contains_vector(b, static_cast<uint32_t>(h));
  }

  // Batched contains: out[i] = contains(keys[i]); returns how many are true. A filter
  // larger than the last-level cache, or without the SIMD kernels, is answered by
  // contains_many_prefetched; a smaller one key by key: a vector lookup reads one block
  // without a data-dependent branch, so out of order execution already overlaps its
  // misses there (docs/decisions/0046). The portable kernel gains from the batch at
  // every size.
  template <class Keys>
  size_t contains_many(const Keys& keys, std::span<bool> out) const noexcept {
    if (prefetches_batches()) return contains_many_prefetched(keys, out);
    // The filter's fields in locals: a store to `out` (bools) may alias them, so
    // contains() per key would reload them after every answer.
    const Block* blocks = blocks_.data();
    const uint64_t num_blocks = blocks_.size();
    const Hasher hasher = hasher_;
    const auto each = [&](auto test) {
      size_t found = 0, i = 0;
      for (const auto& key : keys) {
        const uint64_t h = hasher(KeyView(key).bytes());
        const bool r = test(blocks[detail::sbbf::block_index(h, num_blocks)], static_cast<uint32_t>(h));
        out[i++] = r;
        found += r;
      }
      return found;
    };
    return each([](const Block& b, uint32_t x) { return detail::sbbf::contains_vector(b, x); });
  }
  // True when contains_many takes contains_many_prefetched.
  bool prefetches_batches() const noexcept { return !simd_ || size_in_bytes() > detail::last_level_cache_bytes(); }
  // Hashes a batch and prefetches its blocks before testing them, so the misses overlap.
  template <class Keys>
  size_t contains_many_prefetched(const Keys& keys, std::span<bool> out) const noexcept {
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

  // The kernels this filter chose when it was made or loaded (amq/detail/dispatch.hpp):
  // the vector ones (inline SSE2 for single lookups on x86-64) unless the instruction
  // sets allowed were narrowed to Isa::portable alone (a test's ScopedIsaMask), which
  // runs the portable scalar code everywhere; AVX2 for inserts and batches where the
  // CPU has it and the mask allows it. Every choice gives the same bits and answers.
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
  // Throws amq::Error on malformed input, or Errc::unsupported for a hasher id this
  // type does not read.
  static BasicBlockedBloomFilter load(std::span<const std::byte> file) {
    detail::sbbf::Loaded l = detail::sbbf::load(file, Hasher::id);
    return BasicBlockedBloomFilter(std::move(l.blocks), l.seed);
  }

 private:
  BasicBlockedBloomFilter(detail::sbbf::BlockVector blocks, uint64_t seed)
      : blocks_(std::move(blocks)), num_blocks_(blocks_.size()) {
    hasher_.seed = seed;
  }

  Hasher hasher_{};
  detail::sbbf::BlockVector blocks_;
  uint64_t num_blocks_ = 0;  // blocks_.size(), kept so that a lookup reads it in one load
  bool simd_ = detail::allowed_isas() != detail::isa_bit(detail::Isa::portable);
  bool avx2_ = detail::isa_usable(detail::Isa::avx2);
};

using BlockedBloomFilter = BasicBlockedBloomFilter<Mix64Hasher>;
// The files amq wrote before Mix64Hasher (hasher id 1, XXH3-64 of every key).
using Xxh3BlockedBloomFilter = BasicBlockedBloomFilter<Xxh3Hasher>;
// Parquet's split block Bloom filter: XXH64 with seed 0.
using ParquetBloomFilter = BasicBlockedBloomFilter<Xxh64Hasher>;

}  // namespace amq
