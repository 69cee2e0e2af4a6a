#include "amq/blocked_bloom_filter.hpp"

#include <cmath>
#include <string>

#include "amq/detail/byte_io.hpp"
#include "amq/error.hpp"
#include "amq/format.hpp"
#include "checks.hpp"

namespace amq::detail::sbbf {
namespace {

// Headroom of the sizing: the model rate at n keys is at most this fraction of fpp.
constexpr double kHeadroom = 0.97;

#if AMQ_SBBF_SSE2
__attribute__((target("avx2"))) size_t contains_hashes_avx2(const Block* blocks, uint64_t num_blocks,
                                                             const uint64_t* hashes, size_t m, bool* out) noexcept {
  size_t found = 0;
  for (size_t i = 0; i < m; ++i) {
    const bool hit = block_has_avx2(blocks[block_index(hashes[i], num_blocks)], static_cast<uint32_t>(hashes[i]));
    out[i] = hit;
    found += hit;
  }
  return found;
}
#endif

}  // namespace

#if AMQ_SBBF_SSE2
__attribute__((target("avx2"))) void insert_avx2(Block& b, uint32_t key) noexcept {
  __m256i* p = reinterpret_cast<__m256i*>(b.w);
  _mm256_store_si256(p, _mm256_or_si256(_mm256_load_si256(p), mask_avx2(key)));
}
__attribute__((target("avx2"))) bool contains_avx2(const Block& b, uint32_t key) noexcept {
  return block_has_avx2(b, key);
}
#else
void insert_avx2(Block& b, uint32_t key) noexcept { insert_portable(b, key); }
bool contains_avx2(const Block& b, uint32_t key) noexcept { return contains_portable(b, key); }
#endif

bool contains_portable_cold(const Block& b, uint32_t key) noexcept { return contains_portable(b, key); }

size_t contains_hashes(const Block* blocks, uint64_t num_blocks, const uint64_t* hashes, size_t m, bool* out,
                       bool avx2) noexcept {
#if AMQ_SBBF_SSE2
  if (avx2) return contains_hashes_avx2(blocks, num_blocks, hashes, m, out);
#else
  (void)avx2;
#endif
  size_t found = 0;
  for (size_t i = 0; i < m; ++i) {
    const bool hit = contains_portable(blocks[block_index(hashes[i], num_blocks)], static_cast<uint32_t>(hashes[i]));
    out[i] = hit;
    found += hit;
  }
  return found;
}

double model_fpp(double n, uint64_t num_blocks) noexcept {
  const double lambda = n / static_cast<double>(num_blocks);
  const double spread = 12 * std::sqrt(lambda) + 40;
  const double lo = std::max(0.0, std::floor(lambda - spread));
  const double hi = std::ceil(lambda + spread);
  const double log_miss = std::log1p(-1.0 / 32);  // ln(31/32)
  double sum = 0;
  for (double j = lo; j <= hi; ++j) {
    const double pmf = std::exp(j * std::log(lambda) - lambda - std::lgamma(j + 1));
    sum += pmf * std::pow(-std::expm1(j * log_miss), 8);
  }
  return sum;
}

uint64_t blocks_for(uint64_t n_in, double fpp) {
  check_fpp(fpp, 1.0, false, "blocked Bloom filter: ");
  if (n_in > (uint64_t{1} << 40))
    throw Error(Errc::too_large, "blocked Bloom filter: " + std::to_string(n_in) + " keys is too many (limit 2^40)");
  const double n = static_cast<double>(std::max<uint64_t>(n_in, 1));
  const double target = fpp * kHeadroom;
  // Parquet's formula (the classic one with k = 8): bits = -8 n / ln(1 - p^(1/8)).
  const double bits = -8 * n / std::log1p(-std::pow(fpp, 1.0 / 8));
  uint64_t lo = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(bits / 256)));
  if (lo >= kMaxBlocks || model_fpp(n, kMaxBlocks) > target)
    throw Error(Errc::too_large, "blocked Bloom filter: " + std::to_string(n_in) + " keys at fpp " +
                                     number_text(fpp) + " need more than 2^32 blocks");
  if (model_fpp(n, lo) <= target) return lo;
  // The correction: the least block count whose exact model rate is within the target.
  uint64_t hi = lo;
  while (model_fpp(n, hi) > target) {
    lo = hi;
    hi = std::min(kMaxBlocks, hi * 2);
  }
  while (hi - lo > 1) {  // model(lo) > target >= model(hi)
    const uint64_t mid = lo + (hi - lo) / 2;
    if (model_fpp(n, mid) > target) lo = mid;
    else hi = mid;
  }
  return hi;
}

uint64_t bit_count(std::span<const Block> blocks) noexcept {
  uint64_t c = 0;
  for (const Block& b : blocks)
    for (uint32_t w : b.w) c += static_cast<uint64_t>(std::popcount(w));
  return c;
}

double expected_fpp(std::span<const Block> blocks) noexcept {
  if (blocks.empty()) return 0;
  double sum = 0;
  for (const Block& b : blocks) {
    double p = 1;
    for (uint32_t w : b.w) p *= std::popcount(w) / 32.0;
    sum += p;
  }
  return sum / static_cast<double>(blocks.size());
}

uint64_t approximate_element_count(std::span<const Block> blocks) noexcept {
  // A word of a block holding j keys has 32 (1 - (31/32)^j) bits set on average.
  const double log_miss = std::log1p(-1.0 / 32);
  double n = 0;
  for (const Block& b : blocks) {
    int set = 0;
    for (uint32_t w : b.w) set += std::popcount(w);
    const double fill = std::min(static_cast<double>(set) / 256, 255.0 / 256);
    n += std::log1p(-fill) / log_miss;
  }
  return static_cast<uint64_t>(std::llround(n));
}

std::vector<std::byte> serialize(uint32_t hasher_id, uint64_t seed, std::span<const Block> blocks) {
  ByteWriter params;
  params.u32(hasher_id);
  params.u32(0);
  params.u64(seed);
  params.u64(blocks.size());
  return write_container(Kind::blocked_bloom, params.buffer(), std::as_bytes(blocks));
}

Loaded load(std::span<const std::byte> file, uint32_t hasher_id) {
  const Container c = parse_container(file, Kind::blocked_bloom);
  ByteReader r(c.params, "blocked Bloom filter params");
  const uint32_t id = r.u32();
  const uint32_t reserved = r.u32();
  Loaded out;
  out.seed = r.u64();
  const uint64_t num_blocks = r.u64();
  r.expect_end();
  if (id != hasher_id)
    throw Error(Errc::unsupported, "blocked Bloom filter hashed with " + std::string(hasher_name(id)) + " (id " +
                                       std::to_string(id) + "); this filter type uses " +
                                       std::string(hasher_name(hasher_id)));
  if (reserved != 0) throw Error(Errc::corrupt, "blocked Bloom filter: reserved params field is not zero");
  if (num_blocks == 0) throw Error(Errc::corrupt, "blocked Bloom filter: zero blocks");
  if (num_blocks > kMaxBlocks)
    throw Error(Errc::too_large, "blocked Bloom filter: " + std::to_string(num_blocks) + " blocks (limit 2^32)");
  if (c.payload.size() / sizeof(Block) != num_blocks || c.payload.size() % sizeof(Block) != 0)
    throw Error(c.payload.size() < num_blocks * sizeof(Block) ? Errc::truncated : Errc::corrupt,
                "blocked Bloom filter: payload of " + std::to_string(c.payload.size()) + " bytes for " +
                    std::to_string(num_blocks) + " blocks of 32 bytes");
  out.blocks.resize(num_blocks);
  std::memcpy(out.blocks.data(), c.payload.data(), c.payload.size());
  return out;
}

BlockVector blocks_from_bitset(std::span<const std::byte> bitset) {
  if (bitset.empty() || bitset.size() % sizeof(Block) != 0)
    throw Error(bitset.empty() ? Errc::truncated : Errc::corrupt,
                "Parquet bloom filter bitset of " + std::to_string(bitset.size()) +
                    " bytes: must be a non-zero multiple of 32 bytes");
  if (bitset.size() / sizeof(Block) > kMaxBlocks)
    throw Error(Errc::too_large, "Parquet bloom filter bitset: more than 2^32 blocks");
  BlockVector blocks(bitset.size() / sizeof(Block));
  std::memcpy(blocks.data(), bitset.data(), bitset.size());
  return blocks;
}

}  // namespace amq::detail::sbbf
