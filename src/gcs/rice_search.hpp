// src/gcs/rice_search.hpp — the search of a Rice-coded bucket in the split layout,
// shared by the portable and the BMI2 kernels (Bmi2: the select-in-word uses pdep).
//
// With Rice coding every remainder has c bits, so the G = min(8, 56 / c) remainders of a
// group are one 56-bit load and their sum a few SWAR operations; the G quotients of the
// group end at the G-th zero of the unary stream (read backwards from the bucket's end),
// found with one select-in-word, and sum to that zero's position + 1 - G. A search adds a
// whole group at a time while the group's last value stays below the target, then
// decodes the (at most G) codes of the group that reaches it.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#include "amq/detail/select_in_word.hpp"
#include "internal.hpp"

namespace amq::detail::gcs {

// C != 0: the remainder width as a constant, for the widths whose group remainders
// are summed by SWAR (c = 3 ..= 14, each compiled apart, so shifts, masks and the
// group loop fold); C == 0: the other widths, read from the set, summed field by field.
template <unsigned C>
inline unsigned rem_bits(const GolombCodedSet& s) noexcept {
  if constexpr (C != 0) return C;
  else return Access::rem_bits(s);
}
template <unsigned C>
inline unsigned group(const GolombCodedSet& s) noexcept {
  if constexpr (C != 0) return std::min(8u, 56u / C);
  else return Access::group(s);
}
inline constexpr bool swar_width(unsigned c) noexcept { return c >= 3 && c <= 14; }
// Pairs of fields into 2c-bit slots, then one multiply adds the slots into the top one:
// exact while 2c·ceil(G/2) <= 64 and G·(2^c - 1) < 2^(2c), that is for swar_width(c).
struct Swar {
  uint64_t even = 0, mul = 0;
  unsigned shift = 0;
  uint64_t mask = 0;
};
inline constexpr Swar swar_constants(unsigned c) noexcept {
  Swar w;
  const unsigned slots = (std::min(8u, 56u / c) + 1) / 2;
  for (unsigned i = 0; i < slots; ++i) {
    w.even |= ((uint64_t{1} << c) - 1) << (2 * c * i);
    w.mul |= uint64_t{1} << (2 * c * i);
  }
  w.shift = 2 * c * (slots - 1);
  w.mask = (uint64_t{1} << (2 * c)) - 1;
  return w;
}
// A search position inside a bucket, always at a group boundary: remainders from
// rpos, quotients backwards from upos, `cur` the last value passed (relative to the
// bucket's start; 0 before the first code, whose gap is from the start).
struct Cursor {
  uint64_t rpos, upos, cur;
};

// Sum of the G c-bit fields in the low G·c bits of y.
template <unsigned C>
inline uint64_t remainder_sum(const GolombCodedSet& s, uint64_t y) noexcept {
  if constexpr (C != 0) {
    static_assert(swar_width(C));
    constexpr Swar w = swar_constants(C);
    const uint64_t pairs = (y & w.even) + ((y >> C) & w.even);
    return ((pairs * w.mul) >> w.shift) & w.mask;
  }
  const uint64_t mask = (uint64_t{1} << rem_bits<C>(s)) - 1;
  uint64_t sum = 0;
  for (unsigned i = 0; i < group<C>(s); ++i, y >>= rem_bits<C>(s)) sum += y & mask;
  return sum;
}

// One code at a time from `at` (for quotient runs too long for a window).
template <unsigned C>
inline bool seek_slow(const GolombCodedSet& s, Cursor at, uint64_t target) noexcept {
  const std::byte* p = Access::bits(s);
  const unsigned c = rem_bits<C>(s);
  while (at.rpos < at.upos) {
    uint64_t q = 0;
    for (;;) {
      const unsigned t = static_cast<unsigned>(std::countr_one(load_back(p, at.upos)));
      if (t < 57) {
        q += t;
        at.upos -= t + 1;
        break;
      }
      q += 57;
      at.upos -= 57;
    }
    at.cur += (q << c) + (load_fwd(p, at.rpos) >> (64 - c));
    at.rpos += c;
    if (at.cur >= target) return at.cur == target;
  }
  return false;
}

// The at most G codes of the group at (rpos, upos, cur) — quotients ending at the
// zeros of `zeros` (lowest first), remainders the top bits of y — without a branch:
// whether one of them is `target`. A code is real while its remainder and quotient
// do not cross (fewer than G codes may be left at the bucket's end).
template <unsigned C>
[[gnu::always_inline]] inline bool group_has(const GolombCodedSet& s, uint64_t zeros, uint64_t y, uint64_t rpos,
                                                   uint64_t upos, uint64_t cur, uint64_t target) noexcept {
  const unsigned c = rem_bits<C>(s);
  bool hit = false;
  for (unsigned i = 0; i < group<C>(s); ++i) {
    const unsigned z = static_cast<unsigned>(std::countr_zero(zeros));  // 64 past the window
    zeros &= zeros - 1;
    rpos += c;
    cur += y >> (64 - c);
    y <<= c;
    // Code i's quotients so far are the z - i ones before its zero.
    const uint64_t value = cur + (uint64_t{z - i} << c);
    hit |= (value == target) & (rpos + z + 1 <= upos);
  }
  return hit;
}

// One group per step (when two groups' quotients do not fit one window).
template <unsigned C>
inline bool seek_one(const GolombCodedSet& s, Cursor& at, uint64_t target) noexcept {
  const std::byte* p = Access::bits(s);
  const unsigned c = rem_bits<C>(s), g = group<C>(s);
  const uint64_t gbits = uint64_t{g} * c;
  uint64_t rpos = at.rpos, upos = at.upos, cur = at.cur;
  for (;;) {
    const uint64_t zeros = ~load_back(p, upos) & kLow57;
    const unsigned z = detail::select_in_word<false>(zeros, g - 1);
    if (z >= 57) {
      at = {rpos, upos, cur};
      return seek_slow<C>(s, at, target);
    }
    const uint64_t y = load_fwd(p, rpos);
    if (upos >= rpos + gbits + z + 1) {
      const uint64_t next = cur + (uint64_t{z + 1 - g} << c) + remainder_sum<C>(s, y >> (64 - gbits));
      if (next < target) {
        cur = next;
        rpos += gbits;
        upos -= z + 1;
        continue;
      }
    }
    at = {rpos, upos, cur};
    return group_has<C>(s, zeros, y, rpos, upos, cur, target);
  }
}

// One step of a search: two groups from one window. Returns 0 after passing both
// groups (their last value is below the target), else 1 + whether `target` is coded,
// leaving `at` at the start of the group holding the first value >= target.
template <unsigned C, bool Bmi2>
[[gnu::always_inline]] inline int step(const GolombCodedSet& s, Cursor& at, uint64_t target) noexcept {
  const std::byte* p = Access::bits(s);
  const unsigned c = rem_bits<C>(s), g = group<C>(s);
  const uint64_t gbits = uint64_t{g} * c;
  const uint64_t rpos = at.rpos, upos = at.upos, cur = at.cur;
  const uint64_t zeros = ~load_back(p, upos) & kLow57;
  const unsigned z1 = detail::select_in_word<Bmi2>(zeros, g - 1);  // group 1's last quotient ends at bit z1
  const unsigned z2 = detail::select_in_word<Bmi2>(zeros, 2 * g - 1);
  const uint64_t y1 = load_fwd(p, rpos), y2 = load_fwd(p, rpos + gbits);
  if (z2 >= 57) [[unlikely]]
    return 1 + seek_one<C>(s, at, target);
  // Group 2 (1) complete: not fewer than 2G (G) codes left, else the zero found lies
  // in the remainders or beyond.
  const uint64_t sum1 = remainder_sum<C>(s, y1 >> (64 - gbits));
  const uint64_t next2 = cur + (uint64_t{z2 + 1 - 2 * g} << c) + sum1 + remainder_sum<C>(s, y2 >> (64 - gbits));
  if (upos >= rpos + 2 * gbits + z2 + 1 && next2 < target) {
    at = {rpos + 2 * gbits, upos - z2 - 1, next2};
    return 0;
  }
  // The answer is in group 1 or, if group 1 ends below the target, group 2.
  const bool full1 = upos >= rpos + gbits + z1 + 1;
  const uint64_t next1 = cur + (uint64_t{z1 + 1 - g} << c) + sum1;
  const uint64_t second = 0 - static_cast<uint64_t>(full1 & (next1 < target));
  const unsigned shift = static_cast<unsigned>((z1 + 1) & second);
  at = {rpos + (gbits & second), upos - shift, (next1 & second) | (cur & ~second)};
  const uint64_t y = (y2 & second) | (y1 & ~second);
  return 1 + group_has<C>(s, zeros >> shift, y, at.rpos, at.upos, at.cur, target);
}

// Whether `target` (relative to the bucket's start, >= at.cur) is a value of the
// bucket at or after `at`; `at` is left as step() leaves it, so a larger target can
// continue from there.
template <unsigned C, bool Bmi2>
[[gnu::always_inline]] inline bool seek(const GolombCodedSet& s, Cursor& at, uint64_t target) noexcept {
  for (;;)
    if (const int r = step<C, Bmi2>(s, at, target)) return r - 1;
}

// Two searches at once: their steps' dependency chains overlap.
template <unsigned C, bool Bmi2>
[[gnu::always_inline]] inline void seek2(const GolombCodedSet& s, Cursor& a, uint64_t ta, Cursor& b,
                                                uint64_t tb, bool& ra, bool& rb) noexcept {
  int da = 0, db = 0;
  while (da == 0 && db == 0) {
    da = step<C, Bmi2>(s, a, ta);
    db = step<C, Bmi2>(s, b, tb);
  }
  while (da == 0) da = step<C, Bmi2>(s, a, ta);
  while (db == 0) db = step<C, Bmi2>(s, b, tb);
  ra = da - 1;
  rb = db - 1;
}

// ---- single queries: enter the bucket near the target ---------------------------------
//
// Code j's remainder is at a known place (c bits each), so the group starting at code
// g·G can be entered directly: the remainders before it sum to g SWAR sums of
// fixed-place words, and its quotients start after the (g·G)-th zero of the unary
// stream, found by counting the zeros of 57-bit windows back from the bucket's end and
// one select-in-word. About t/M codes come before a target t (Poisson: deviation
// sqrt(t/M)), so a search entering kStartMargin deviations before that mostly ends in
// one or two steps instead of ~4 from the bucket's start. A start past the target, or
// one the windows do not reach (a bucket far denser than ~128 codes), starts at 0.
inline constexpr unsigned kStartWindows = 8;  // 456 unary bits, ~150 codes
inline constexpr double kStartMargin = 2.0;   // (1.5 to 2.5 do as well)
inline constexpr unsigned kStartSlots = 64;   // the target's place in its bucket, in 64ths
inline constexpr double sqrt_newton(double x) {
  double r = x > 1 ? x : 1;
  for (int i = 0; i < 40; ++i) r = 0.5 * (r + x / r);
  return x > 0 ? r : 0;
}
// start_table<G>[i]: the group to enter for a target in the i-th 64th of a bucket of
// ~kRiceBucketKeys codes.
template <unsigned G>
inline constexpr std::array<uint8_t, kStartSlots> start_table = [] {
  std::array<uint8_t, kStartSlots> t{};
  for (unsigned i = 0; i < kStartSlots; ++i) {
    const double j = static_cast<double>(i * GolombCodedSet::kRiceBucketKeys) / kStartSlots;
    const double start = j - kStartMargin * sqrt_newton(j);
    t[i] = static_cast<uint8_t>(start <= 0 ? 0 : static_cast<unsigned>(start) / G);
  }
  return t;
}();

template <unsigned C, bool Bmi2>
[[gnu::always_inline]] inline bool contains(const GolombCodedSet& s, uint64_t v) noexcept {
  const uint64_t b = Access::bucket_of(s, v);
  const uint64_t rpos0 = Access::offset(s, b), upos0 = Access::offset(s, b + 1), target = v - b * Access::width(s);
  const std::byte* p = Access::bits(s);
  // Both ends of the bucket are read first: ask for all its lines at once.
  for (uint64_t a = rpos0 >> 3; a <= (upos0 >> 3) + 8; a += 64) detail::prefetch(p + a);
  Cursor at{rpos0, upos0, 0};
  if constexpr (C != 0) {  // the other widths search from the bucket's start
    constexpr unsigned g = std::min(8u, 56u / C);
    constexpr uint64_t gbits = uint64_t{g} * C;
    // The start group g0, and the (g0·G - 1)-th zero of the unary stream.
    const uint64_t slot = static_cast<uint64_t>((static_cast<unsigned __int128>(target * kStartSlots) * Access::width_inverse(s)) >> 64);
    const unsigned g0 = start_table<g>[std::min<uint64_t>(slot, kStartSlots - 1)];
    if (g0 != 0) {
      const unsigned k = g0 * g - 1;
      unsigned cum = 0, i = 0;
      uint64_t w;
      for (;; ++i) {
        w = ~load_back(p, upos0 - std::min<uint64_t>(upos0, 57 * i)) & kLow57;
        const unsigned n = static_cast<unsigned>(std::popcount(w));
        if (k < cum + n || i == kStartWindows) break;
        cum += n;
      }
      const unsigned z = 57 * i + detail::select_in_word<Bmi2>(w, (k - cum) & 63);
      uint64_t rsum = 0;
      // Clamped to the bucket: past it (fewer than g0·G codes) the start is rejected below.
      for (unsigned j = 0; j < g0; ++j)
        rsum += remainder_sum<C>(s, load_fwd(p, std::min(rpos0 + j * gbits, upos0)) >> (64 - gbits));
      const uint64_t rpos = rpos0 + g0 * gbits, cur = (uint64_t{z - k} << C) + rsum;
      // A real zero (not past the windows, not among the remainders) and a value below
      // the target: else the bucket's start.
      if ((i < kStartWindows) & (rpos + z + 1 <= upos0) & (cur < target)) at = {rpos, upos0 - z - 1, cur};
    }
  }
  return seek<C, Bmi2>(s, at, target);
}

// A batch in the caller's order, two searches at a time (their steps' dependency chains
// overlap), each chunk's index entries and buckets fetched first (fetch_chunk).
template <unsigned C, bool Bmi2>
[[gnu::always_inline]] inline size_t many_sparse(const GolombCodedSet& s, std::span<const uint64_t> hashes,
                                                 std::span<bool> out) noexcept {
  size_t found = 0;
  Chunk c;
  for (size_t base = 0; base < hashes.size(); base += Chunk::kSize) {
    const size_t m = std::min(Chunk::kSize, hashes.size() - base);
    fetch_chunk(s, hashes.data() + base, m, c);
    size_t i = 0;
    for (; i + 1 < m; i += 2) {
      Cursor a{c.begin[i], c.end[i], 0}, b{c.begin[i + 1], c.end[i + 1], 0};
      bool r0, r1;
      seek2<C, Bmi2>(s, a, c.target[i], b, c.target[i + 1], r0, r1);
      out[base + i] = r0;
      out[base + i + 1] = r1;
      found += r0 + r1;
    }
    if (i < m) {
      Cursor a{c.begin[i], c.end[i], 0};
      found += out[base + i] = seek<C, Bmi2>(s, a, c.target[i]);
    }
  }
  return found;
}

// Calls f.template operator()<C>() with C = the set's remainder width when it is one
// compiled apart (swar_width(c)), else C = 0 (read from the set).
template <class F>
inline decltype(auto) with_width(const GolombCodedSet& s, F&& f) {
  switch (Access::rem_bits(s)) {
    case 3: return f.template operator()<3>();
    case 4: return f.template operator()<4>();
    case 5: return f.template operator()<5>();
    case 6: return f.template operator()<6>();
    case 7: return f.template operator()<7>();
    case 8: return f.template operator()<8>();
    case 9: return f.template operator()<9>();
    case 10: return f.template operator()<10>();
    case 11: return f.template operator()<11>();
    case 12: return f.template operator()<12>();
    case 13: return f.template operator()<13>();
    case 14: return f.template operator()<14>();
    default: return f.template operator()<0>();
  }
}

}  // namespace amq::detail::gcs
