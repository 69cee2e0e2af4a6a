// SuccinctSet::Tails, the inline part: a leaf's tail found in the tail bitmap (each node
// a 1, then a 0 per byte of its tail) and compared with the rest of a key. Internal to
// src/succinct/.
#pragma once

#include <cstdint>
#include <string_view>

#include "amq/detail/byte_io.hpp"
#include "rooms.hpp"

namespace amq {

// Where the tail bitmap's select for node v's one starts: its sample, or the half-way
// point when v is past it (no branch); rem ones are left to pass from sp.
[[gnu::always_inline]] inline void SuccinctSet::Tails::tail_select_start(const SuccinctSet& self, uint64_t v,
                                                                         uint64_t& sp, uint64_t& rem) noexcept {
  sp = self.tail_map_.sample(v);
  rem = v & detail::succinct::kTailSampleMask;
  if (self.tail_mids_) {
    const uint64_t half = (v >> (TailBits::kSampleShift - 1)) & 1;
    sp += self.tail_mids_[v >> TailBits::kSampleShift] & (0 - half);
    rem -= half << (TailBits::kSampleShift - 1);
  }
}

template <bool Hw>
[[gnu::always_inline]] inline std::string_view SuccinctSet::Tails::tail_of_t(const SuccinctSet& self,
                                                                             uint64_t v) noexcept {
  // Node v's 1 in the tail bitmap is followed by a 0 per tail byte; most tails end
  // in the word of that 1 (`after`).
  uint64_t after, sp, rem;
  Tails::tail_select_start(self, v, sp, rem);
  const uint64_t at = self.tail_map_.select_after<Hw>(sp, rem, after);
  const uint64_t len = after ? static_cast<uint64_t>(__builtin_ctzll(after)) : self.tail_map_.next_one(at + 1) - at - 1;
  return {reinterpret_cast<const char*>(self.tail_ + (at - v)), len};
}

template <bool Hw>
[[gnu::always_inline]] inline bool SuccinctSet::Tails::tail_equals(const SuccinctSet& self, uint64_t v,
                                                                   const uint8_t* p, size_t n) noexcept {
  const std::string_view t = Tails::tail_of_t<Hw>(self, v);
  const auto* c = reinterpret_cast<const uint8_t*>(t.data());
  if (!self.syms_.empty()) [[unlikely]]
    return self.syms_.equals(c, t.size(), p, n);
  return t.size() == n && detail::short_bytes_equal(c, p, n);  // tails are short: a byte or two on average
}

}  // namespace amq
