// amq/detail/fastmod.hpp — exact `a % d` for 64-bit a and a divisor fixed in advance,
// by Lemire, Kaser and Kurz's direct-remainder method ("Faster remainder by direct
// computation", 2019): with M = floor((2^128 - 1) / d) + 1, a % d is the high 64 bits
// of (M * a mod 2^128) * d. A few multiplies instead of a 64-bit division.
//
// FastMod63 is cheaper still when the dividend is below 2^63 (Guava's probes are
// masked to 63 bits): Granlund and Montgomery's invariant division ("Division by
// invariant integers using multiplication", 1994, theorem 4.2) with N = 63. For d in
// (2^(l-1), 2^l], M = ceil(2^(63+l) / d) fits in 64 bits and
// floor(a / d) = floor(a * M / 2^(63+l)) for every a < 2^63: one 64x64->128 multiply,
// a shift, then a - q*d. A hardware 64-bit division can cost a Bloom probe more than
// its cache miss when the filter is cache-resident (docs/decisions/0008).
#pragma once

#include <bit>
#include <cstdint>

namespace amq::detail {

class FastMod64 {
 public:
  FastMod64() = default;
  explicit FastMod64(uint64_t d) noexcept : d_(d), m_(d ? ~static_cast<unsigned __int128>(0) / d + 1 : 0) {}

  uint64_t divisor() const noexcept { return d_; }

  uint64_t mod(uint64_t a) const noexcept {
    const unsigned __int128 low = m_ * a;
    // High 64 bits of the 192-bit product low * d.
    const uint64_t lo = static_cast<uint64_t>(low);
    const uint64_t hi = static_cast<uint64_t>(low >> 64);
    const unsigned __int128 bottom = (static_cast<unsigned __int128>(lo) * d_) >> 64;
    const unsigned __int128 top = static_cast<unsigned __int128>(hi) * d_;
    return static_cast<uint64_t>((bottom + top) >> 64);
  }

 private:
  uint64_t d_ = 0;
  unsigned __int128 m_ = 0;
};

class FastMod63 {
 public:
  FastMod63() = default;
  // d >= 2.
  explicit FastMod63(uint64_t d) noexcept : d_(d) {
    const int l = std::bit_width(d - 1);  // 2^(l-1) < d <= 2^l
    shift_ = l - 1;
    const unsigned __int128 p = static_cast<unsigned __int128>(1) << (63 + l);
    m_ = static_cast<uint64_t>((p + d - 1) / d);
  }

  uint64_t divisor() const noexcept { return d_; }

  // a % d, for a < 2^63.
  uint64_t mod(uint64_t a) const noexcept {
    const uint64_t q = static_cast<uint64_t>((static_cast<unsigned __int128>(a) * m_) >> 64) >> shift_;
    return a - q * d_;
  }

 private:
  uint64_t d_ = 2;
  uint64_t m_ = uint64_t{1} << 63;
  int shift_ = 0;
};

}  // namespace amq::detail
