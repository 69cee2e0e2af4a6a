// MurmurHash3_x64_128, written from the algorithm's public description: 16-byte
// blocks mixed into two 64-bit lanes, a tail, and the fmix64 finaliser.
#include <bit>

#include "amq/detail/byte_io.hpp"
#include "amq/hash.hpp"

namespace amq {
namespace {

constexpr uint64_t kC1 = 0x87c37b91114253d5ULL;
constexpr uint64_t kC2 = 0x4cf5ad432745937fULL;

inline uint64_t fmix64(uint64_t k) noexcept {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}
inline uint64_t mix_k1(uint64_t k1) noexcept { return std::rotl(k1 * kC1, 31) * kC2; }
inline uint64_t mix_k2(uint64_t k2) noexcept { return std::rotl(k2 * kC2, 33) * kC1; }

}  // namespace

Hash128 detail::murmur3_x64_128_any(Bytes data, uint32_t seed) noexcept {
  const std::byte* p = data.data();
  const size_t len = data.size();
  const size_t nblocks = len / 16;
  // Guava keeps the seed as a Java int and widens it with its sign; the reference C
  // code zero-extends. They differ only for seeds >= 2^31, where amq follows Guava.
  const auto wide_seed = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(seed)));
  uint64_t h1 = wide_seed;
  uint64_t h2 = wide_seed;

  for (size_t i = 0; i < nblocks; ++i) {
    const uint64_t k1 = detail::load_le64(p + i * 16);
    const uint64_t k2 = detail::load_le64(p + i * 16 + 8);
    h1 ^= mix_k1(k1);
    h1 = std::rotl(h1, 27) + h2;
    h1 = h1 * 5 + 0x52dce729;
    h2 ^= mix_k2(k2);
    h2 = std::rotl(h2, 31) + h1;
    h2 = h2 * 5 + 0x38495ab5;
  }

  const std::byte* tail = p + nblocks * 16;
  const size_t rest = len & 15;
  uint64_t k1 = 0;
  uint64_t k2 = 0;
  for (size_t i = rest; i > 8; --i) k2 |= static_cast<uint64_t>(tail[i - 1]) << (8 * (i - 9));
  for (size_t i = rest < 8 ? rest : 8; i > 0; --i) k1 |= static_cast<uint64_t>(tail[i - 1]) << (8 * (i - 1));
  if (rest > 8) h2 ^= mix_k2(k2);
  if (rest > 0) h1 ^= mix_k1(k1);

  h1 ^= len;
  h2 ^= len;
  h1 += h2;
  h2 += h1;
  h1 = fmix64(h1);
  h2 = fmix64(h2);
  h1 += h2;
  h2 += h1;
  return {h1, h2};
}

std::string_view hasher_name(uint32_t id) noexcept {
  switch (id) {
    case Xxh3Hasher::id: return "xxh3";
    case Xxh64Hasher::id: return "xxh64";
    case 3: return "murmur3";
    default: return "custom";
  }
}

}  // namespace amq
