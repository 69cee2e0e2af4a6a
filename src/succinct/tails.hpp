// SuccinctSet::Tails, the inline part: a leaf's tail found in the tail bitmap (a 1 per
// tail index, then a 0 per byte of its tail) and compared with the rest of a key.
// Internal to src/succinct/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "amq/detail/byte_io.hpp"
#include "rooms.hpp"

namespace amq {

// The childless nodes before node v >= 1 (version 2), whose labels start at bit st of
// the label bitmap. Node u >= 1 is childless when the bit after node u - 1's one is a
// one too, so they are the pairs "11" ending before st (the root, childless only in a
// set of one node, as if a one stood before bit 0): the pairs up to node v - 1's
// sample from the table, then those of the words from the sample to st. The select
// that found st has just read the window's words from the sample's on, so they are
// counted without a branch per word, as it counts them; a loop where st lies further.
template <bool Hw>
[[gnu::always_inline]] inline uint64_t SuccinctSet::Tails::childless_before(const SuccinctSet& self, uint64_t v,
                                                                           uint64_t st) noexcept {
  constexpr uint64_t kWindow = LoudsBits::kWindow;
  const uint64_t s = v - 1, j = s >> LoudsBits::kSampleShift, sp = self.louds_.sample(s);
  uint64_t r = self.childless_base_[j >> kChildlessGroupShift] + self.childless_at_[j];
  const uint64_t* words = self.louds_.words();
  const uint64_t w = sp >> 6, last = (st - 1) >> 6;  // pairs end at (sp, st - 1]; st - 1 >= sp
  const uint64_t first_mask = (~uint64_t{0} << (sp & 63)) << 1, last_mask = ~uint64_t{0} >> (63 - ((st - 1) & 63));
  if (last < w + kWindow && w + kWindow <= self.louds_words_) [[likely]] {
    uint64_t carry = 0;
#pragma GCC unroll 8
    for (uint64_t i = 0; i < kWindow; ++i) {
      const uint64_t x = words[w + i];
      uint64_t m = x & ((x << 1) | carry);
      carry = x >> 63;
      if (i == 0) m &= first_mask;
      m &= w + i < last ? ~uint64_t{0} : w + i == last ? last_mask : 0;
      r += static_cast<uint64_t>(detail::popcount64<Hw>(m));
    }
    return r;
  }
  uint64_t x = words[w];
  uint64_t m = x & (x << 1) & first_mask;
  for (uint64_t i = w; i < last;) {
    r += static_cast<uint64_t>(detail::popcount64<Hw>(m));
    const uint64_t y = words[++i];
    m = y & ((y << 1) | (x >> 63));
    x = y;
  }
  return r + static_cast<uint64_t>(detail::popcount64<Hw>(m & last_mask));
}

// The tail index of childless node v whose labels start at st: v itself (version 1)
// or its rank among the childless nodes (version 2).
template <bool Hw>
[[gnu::always_inline]] inline uint64_t SuccinctSet::Tails::tail_index(const SuccinctSet& self, uint64_t v,
                                                                     uint64_t st) noexcept {
  if (!self.tails_childless_ || v == 0) return v;
  return Tails::childless_before<Hw>(self, v, st);
}

// A guess of node v's tail index, were it childless (for prefetches; v < nodes_): its
// share of the childless nodes (no load: it is made at every level near a key's end).
[[gnu::always_inline]] inline uint64_t SuccinctSet::Tails::guess_index(const SuccinctSet& self, uint64_t v) noexcept {
  if (!self.tails_childless_) return v;
  return (v * self.childless_ratio_) >> 16;
}

// Where the tail bitmap's select for tail index t's one starts: the quarter of its
// sample's span that t lies in; rem ones are left to pass from sp.
[[gnu::always_inline]] inline void SuccinctSet::Tails::tail_select_start(const SuccinctSet& self, uint64_t t,
                                                                         uint64_t& sp, uint64_t& rem) noexcept {
  sp = self.tail_map_.sample(t);
  rem = t & detail::succinct::kTailSampleMask;
  if (self.tail_mids_) {
    sp += self.tail_mids_[t >> kTailQuarterShift];
    rem &= (uint64_t{1} << kTailQuarterShift) - 1;
  }
}

template <bool Hw>
[[gnu::always_inline]] inline std::string_view SuccinctSet::Tails::tail_of_t(const SuccinctSet& self,
                                                                             uint64_t t) noexcept {
  // Tail index t's 1 in the tail bitmap is followed by a 0 per tail byte; most tails
  // end in the word of that 1 (`after`).
  uint64_t after, sp, rem;
  Tails::tail_select_start(self, t, sp, rem);
  const uint64_t at = self.tail_map_.select_after<Hw>(sp, rem, after);
  const uint64_t len = after ? static_cast<uint64_t>(__builtin_ctzll(after)) : self.tail_map_.next_one(at + 1) - at - 1;
  return {reinterpret_cast<const char*>(self.tail_ + (at - t)), len};
}

template <bool Hw>
[[gnu::always_inline]] inline bool SuccinctSet::Tails::tail_equals(const SuccinctSet& self, uint64_t ti,
                                                                   const uint8_t* p, size_t n) noexcept {
  const std::string_view t = Tails::tail_of_t<Hw>(self, ti);
  const auto* c = reinterpret_cast<const uint8_t*>(t.data());
  if (!self.syms_.empty()) [[unlikely]]
    return self.syms_.equals(c, t.size(), p, n);
  return t.size() == n && detail::short_bytes_equal(c, p, n);  // tails are short: a byte or two on average
}

}  // namespace amq
