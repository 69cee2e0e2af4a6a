// amq/detail/siphash.hpp — SipHash-2-4 with a 64-bit output (Aumasson and Bernstein,
// "SipHash: a fast short-input PRF", 2012), as BIP158 block filters use it: the 128-bit
// key is k0 || k1, each the little-endian integer of 8 key bytes.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace amq::detail {

inline uint64_t siphash24(uint64_t k0, uint64_t k1, std::span<const std::byte> data) noexcept {
  uint64_t v0 = 0x736f6d6570736575ULL ^ k0;
  uint64_t v1 = 0x646f72616e646f6dULL ^ k1;
  uint64_t v2 = 0x6c7967656e657261ULL ^ k0;
  uint64_t v3 = 0x7465646279746573ULL ^ k1;
  auto round = [&] {
    v0 += v1; v1 = std::rotl(v1, 13); v1 ^= v0; v0 = std::rotl(v0, 32);
    v2 += v3; v3 = std::rotl(v3, 16); v3 ^= v2;
    v0 += v3; v3 = std::rotl(v3, 21); v3 ^= v0;
    v2 += v1; v1 = std::rotl(v1, 17); v1 ^= v2; v2 = std::rotl(v2, 32);
  };
  const size_t n = data.size();
  const std::byte* p = data.data();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t m;
    std::memcpy(&m, p + i, 8);  // little-endian host (byte_io.hpp asserts it)
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
  uint64_t b = static_cast<uint64_t>(n) << 56;
  for (size_t j = 0; i + j < n; ++j) b |= static_cast<uint64_t>(static_cast<uint8_t>(p[i + j])) << (8 * j);
  v3 ^= b;
  round();
  round();
  v0 ^= b;
  v2 ^= 0xff;
  round();
  round();
  round();
  round();
  return v0 ^ v1 ^ v2 ^ v3;
}

}  // namespace amq::detail
