// amq/detail/select_in_word.hpp — the position of the k-th set bit of a 64-bit word,
// shared by the rank/select directories (rank_select.hpp) and the Golomb-coded set's
// unary streams.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

namespace amq::detail {

// kSelectInByte[b * 8 + j]: the position of the (j+1)-th set bit of byte b (8 where b
// has fewer than j + 1).
inline constexpr auto kSelectInByte = [] {
  std::array<uint8_t, 256 * 8> t{};
  for (unsigned b = 0; b < 256; ++b) {
    unsigned j = 0;
    for (unsigned i = 0; i < 8; ++i) t[b * 8 + i] = 8;
    for (unsigned i = 0; i < 8; ++i)
      if ((b >> i) & 1) t[b * 8 + j++] = static_cast<uint8_t>(i);
  }
  return t;
}();

// The position of the (k+1)-th set bit of x (k < 64), or 64 if x has fewer.
// Hw: BMI2's pdep deposits bit k at it (the caller has checked that the CPU has a fast
// pdep, cpu_has_fast_pdep()); inline assembly, so the caller need not be compiled for
// BMI2. Otherwise broadword: the running count of set bits per byte, a SWAR compare of
// those counts with k to find the byte, and a table lookup inside the byte.
template <bool Hw = false>
[[gnu::always_inline]] inline unsigned select_in_word(uint64_t x, unsigned k) noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if constexpr (Hw) {
    uint64_t bit;
    asm("pdep %2, %1, %0" : "=r"(bit) : "r"(uint64_t{1} << k), "rm"(x));
    return static_cast<unsigned>(std::countr_zero(bit));
  }
#endif
  constexpr uint64_t kOnes = 0x0101010101010101, kHigh = 0x8080808080808080;
  uint64_t c = x - ((x >> 1) & 0x5555555555555555);
  c = (c & 0x3333333333333333) + ((c >> 2) & 0x3333333333333333);
  c = (c + (c >> 4)) & 0x0f0f0f0f0f0f0f0f;
  const uint64_t upto = c * kOnes;  // byte i: set bits in bytes 0..i
  // Bytes whose running count is > k: the first of them holds the bit.
  const uint64_t after = ((upto | kHigh) - (k + 1) * kOnes) & kHigh;
  const unsigned byte = static_cast<unsigned>(std::countr_zero(after)) >> 3;
  if (byte >= 8) return 64;
  const unsigned skipped = byte == 0 ? 0 : static_cast<unsigned>(upto >> (8 * byte - 8)) & 0xff;
  return 8 * byte + kSelectInByte[((x >> (8 * byte)) & 0xff) * 8 + (k - skipped)];
}

}  // namespace amq::detail
