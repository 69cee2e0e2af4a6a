// amq/detail/fastmod.hpp — exact `a % d` for 64-bit a and a divisor fixed in advance,
// by Lemire, Kaser and Kurz's direct-remainder method ("Faster remainder by direct
// computation", 2019): with M = floor((2^128 - 1) / d) + 1, a % d is the high 64 bits
// of (M * a mod 2^128) * d. A few multiplies instead of a 64-bit division.
#pragma once

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

}  // namespace amq::detail
