// Searches of a node's labels, of the 256-bit label maps and of a chain's labels: the
// innermost steps of SuccinctSet's descents. Internal to src/succinct/.
#pragma once

#include <cstdint>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "amq/detail/byte_io.hpp"
#include "amq/detail/rank_select.hpp"
#include "layout.hpp"

namespace amq::detail::succinct {

// Nodes have about one label each, so the labels of node j + 1 start near label index
// (the index of sample j's one, sp = louds_.sample(j)) plus the nodes between.
constexpr uint64_t label_guess(uint64_t j, uint64_t sp) noexcept {
  return (sp - (j & ~kLoudsSampleMask)) + (j & kLoudsSampleMask);
}

// The position in [lab, lab + k) of byte c, or k. Sixteen labels at a time with SSE2
// (part of x86-64) while the loads stay inside [.., safe_end); then byte by byte.
[[gnu::always_inline]] inline uint64_t find_label(const uint8_t* lab, uint64_t k, uint8_t c,
                                                  const uint8_t* safe_end) noexcept {
  uint64_t o = 0;
#if defined(__SSE2__)
  const __m128i needle = _mm_set1_epi8(static_cast<char>(c));
  if (k <= 16 && lab + 16 <= safe_end) [[likely]] {
    // Most nodes: one compare, and bit k set so that "absent" comes out as k.
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(lab));
    const uint32_t m = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, needle)));
    return static_cast<uint64_t>(__builtin_ctz((m | (1u << k)) & ((2u << k) - 1)));
  }
  if (k > 16 && k <= 64 && lab + 64 <= safe_end) {
    // A wide node (the top levels): four compares, one 64-bit mask, no branches.
    auto eq = [&](int at) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(lab + at));
      return static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, needle))));
    };
    uint64_t m = eq(0) | eq(16) << 16 | eq(32) << 32 | eq(48) << 48;
    if (k < 64) m &= (uint64_t{1} << k) - 1;
    return m ? static_cast<uint64_t>(__builtin_ctzll(m)) : k;
  }
  for (; o < k && lab + o + 16 <= safe_end; o += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(lab + o));
    uint32_t m = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, needle)));
    if (k - o < 16) m &= (1u << (k - o)) - 1;
    if (m) return o + static_cast<uint64_t>(__builtin_ctz(m));
  }
  if (o >= k) return k;
#else
  (void)safe_end;  // the byte loop below never reads past the labels
#endif
  // A byte loop, not memchr: a call here (reached only near the payload's end) made
  // every value live across the label search go to a callee-saved register or the
  // stack, and the descent spilled its own state to the stack at every level.
  for (; o < k; ++o)
    if (lab[o] == c) return o;
  return k;
}

// The position in [lab, lab + k) of the first label >= c (labels ascend), or k: as
// find_label, sixteen at a time with SSE2 while the loads stay below safe_end.
[[gnu::always_inline]] inline uint64_t lower_label(const uint8_t* lab, uint64_t k, uint8_t c,
                                                   const uint8_t* safe_end) noexcept {
  uint64_t o = 0;
#if defined(__SSE2__)
  const __m128i needle = _mm_set1_epi8(static_cast<char>(c));
  for (; o < k && lab + o + 16 <= safe_end; o += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(lab + o));
    // x >= c where max(x, c) == x
    uint32_t m = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(x, needle), x)));
    if (k - o < 16) m |= 1u << (k - o);
    if (m) return o + static_cast<uint64_t>(__builtin_ctz(m));  // <= k (bit k - o is set when k - o < 16)
  }
  if (o >= k) return k;
#else
  (void)safe_end;
#endif
  for (; o < k; ++o)
    if (lab[o] >= c) return o;
  return k;
}

// The ones of a 256-bit map below bit c.
template <bool Hw>
[[gnu::always_inline]] inline uint64_t rank_in_map(const uint64_t* m, uint8_t c) noexcept {
  const unsigned w = c >> 6;
  const uint64_t below = (uint64_t{1} << (c & 63)) - 1;
  uint64_t r = static_cast<uint64_t>(detail::popcount64<Hw>(m[w] & below));
  r += w > 0 ? static_cast<uint64_t>(detail::popcount64<Hw>(m[0])) : 0;
  r += w > 1 ? static_cast<uint64_t>(detail::popcount64<Hw>(m[1])) : 0;
  r += w > 2 ? static_cast<uint64_t>(detail::popcount64<Hw>(m[2])) : 0;
  return r;
}

// Whether the key's bytes at p go on with a chain's n labels at b (the caller has checked
// that the key has n bytes left): a loop, not memcmp (a call in a descent makes it spill
// its state at every level).
[[gnu::always_inline]] inline bool chain_matches(const uint8_t* p, const char* b, uint64_t n) noexcept {
  uint64_t i = 0;
  for (; i + 8 <= n; i += 8)
    if (detail::load_le64(reinterpret_cast<const std::byte*>(p + i)) !=
        detail::load_le64(reinterpret_cast<const std::byte*>(b + i)))
      return false;
  for (; i < n; ++i)
    if (p[i] != static_cast<uint8_t>(b[i])) return false;
  return true;
}

}  // namespace amq::detail::succinct
