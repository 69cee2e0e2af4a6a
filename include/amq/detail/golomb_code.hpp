// amq/detail/golomb_code.hpp — one Golomb code: a divisor d, a unary quotient and a
// truncated-binary remainder, over the MSB-first bit streams of bit_stream.hpp.
//
// A value v is written as q = v / d in unary — q 1-bits ended by a 0-bit (the seed's
// and BIP158's convention) or q 0-bits ended by a 1-bit (HTTP Cache Digests) — then
// r = v % d in truncated binary: with c = ceil(log2 d) and u = 2^c - d, r < u takes
// c - 1 bits and any other r is written as r + u in c bits. When d is a power of two
// (Rice coding) u is 0 and every remainder takes exactly c bits.
#pragma once

#include <bit>
#include <cstdint>

#include "amq/detail/bit_stream.hpp"
#include "amq/error.hpp"

namespace amq::detail {

class GolombCode {
 public:
  // divisor >= 1; `unary_ones`: quotient as 1s ended by a 0 (else 0s ended by a 1).
  explicit GolombCode(uint64_t divisor, bool unary_ones = true)
      : divisor_(divisor), unary_ones_(unary_ones) {
    if (divisor == 0) throw Error(Errc::invalid_argument, "Golomb divisor must be at least 1");
    bits_ = divisor == 1 ? 0 : static_cast<unsigned>(64 - std::countl_zero(divisor - 1));
    cutoff_ = bits_ == 64 ? (0 - divisor) : ((uint64_t{1} << bits_) - divisor);
  }

  uint64_t divisor() const noexcept { return divisor_; }
  bool is_rice() const noexcept { return cutoff_ == 0; }
  unsigned remainder_bits() const noexcept { return bits_; }  // c
  uint64_t cutoff() const noexcept { return cutoff_; }          // u
  bool unary_ones() const noexcept { return unary_ones_; }

  void encode(BitWriter& w, uint64_t v) const {
    w.put_run(unary_ones_, v / divisor_);
    w.put_bit(!unary_ones_);
    encode_remainder(w, v % divisor_);
  }
  // The remainder part alone (r < divisor), in truncated binary.
  void encode_remainder(BitWriter& w, uint64_t r) const {
    if (r < cutoff_) w.put(r, bits_ - 1);
    else w.put(r + cutoff_, bits_);
  }
  uint64_t decode_remainder(BitReader& r) const {
    if (cutoff_ == 0) return r.get(bits_);
    uint64_t rem = r.get(bits_ - 1);
    if (rem >= cutoff_) rem = ((rem << 1) | r.get(1)) - cutoff_;
    return rem;
  }

  // Length in bits of the code of v.
  uint64_t code_length(uint64_t v) const noexcept {
    const uint64_t q = v / divisor_, r = v % divisor_;
    return q + 1 + (r < cutoff_ ? bits_ - 1 : bits_);
  }

  // Reads one value. Throws Errc::truncated at the end of the stream, Errc::corrupt for
  // a value beyond 64 bits.
  uint64_t decode(BitReader& r) const {
    const uint64_t q = r.get_run(unary_ones_);
    const uint64_t rem = decode_remainder(r);
    if (q > (UINT64_MAX - rem) / divisor_) throw Error(Errc::corrupt, "Golomb code of a value beyond 64 bits");
    return q * divisor_ + rem;
  }

 private:
  uint64_t divisor_;
  bool unary_ones_;
  unsigned bits_;
  uint64_t cutoff_;
};

}  // namespace amq::detail
