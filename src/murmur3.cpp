// MurmurHash3_x64_128, written from the algorithm's public description: 16-byte
// blocks mixed into two 64-bit lanes, a tail, and the fmix64 finaliser.
#include <bit>

#include "amq/detail/byte_io.hpp"
#include "amq/hash.hpp"

namespace amq {

Hash128 detail::murmur3_x64_128_any(Bytes data, uint32_t seed) noexcept {
  const std::byte* p = data.data();
  const size_t len = data.size();
  const size_t nblocks = len / 16;
  uint64_t h1 = murmur3_seed(seed);
  uint64_t h2 = murmur3_seed(seed);
  for (size_t i = 0; i < nblocks; ++i) {
    h1 ^= murmur3_mix_k1(detail::load_le64(p + i * 16));
    h1 = std::rotl(h1, 27) + h2;
    h1 = h1 * 5 + 0x52dce729;
    h2 ^= murmur3_mix_k2(detail::load_le64(p + i * 16 + 8));
    h2 = std::rotl(h2, 31) + h1;
    h2 = h2 * 5 + 0x38495ab5;
  }
  const std::byte* tail = p + nblocks * 16;
  const size_t rest = len & 15;
  uint64_t k1 = 0;
  uint64_t k2 = 0;
  for (size_t i = rest; i > 8; --i) k2 |= static_cast<uint64_t>(tail[i - 1]) << (8 * (i - 9));
  for (size_t i = rest < 8 ? rest : 8; i > 0; --i) k1 |= static_cast<uint64_t>(tail[i - 1]) << (8 * (i - 1));
  return murmur3_finish(h1, h2, k1, k2, rest, len);
}

std::string_view hasher_name(uint32_t id) noexcept {
  switch (id) {
    case Xxh3Hasher::id: return "xxh3";
    case Xxh64Hasher::id: return "xxh64";
    case 3: return "murmur3";
    case Mix64Hasher::id: return "mix64";
    default: return "custom";
  }
}

}  // namespace amq
