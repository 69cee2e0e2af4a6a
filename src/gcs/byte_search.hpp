// src/gcs/byte_search.hpp — the search of a bucket in the byte layout (Rice coding with
// divisor 128 and M <= 256), shared by the SWAR and the AVX2 kernels, which differ only
// in how they compute a window's masks (and so each has its own bytes_hold).
//
// Code j's byte holds its value's low 7 bits L_j and a flag (its quotient q_j is not
// zero). Its value is v_j = 128·H_j + L_j with H_j = Q_j + W_j: Q_j sums the quotients
// of codes 0..j and W_j counts its wraps, the codes i <= j with L_i < L_{i-1}. Q_j is
// also the place just after the F_j-th zero of the unary stream (F_j: flags of codes
// 0..j). A value below the bucket's width has Q < 256: the first 256 unary bits (four
// words) answer every question about real codes, by rank alone. So code j holds the
// target t = 128·H + L when L_j = L and the F_j-th zero ends at H - W_j: candidates are
// one byte compare, 32 codes at once with AVX2 and 8 (a 64-bit word) without. A query
// looks at 48 codes around the ~t/M-th (one block of 16 before the block it is expected
// in, two from it): it counts the flags and wraps of the bytes before them, checks with
// one rank at each end that the target lies among them, and checks each candidate with
// one more. Targets outside the 48 codes (~2%) move 48 codes at a time; buckets over
// 256 bytes, far denser than ~128 codes, are scanned.
#pragma once

#include <bit>
#include <cstdint>

#include "amq/detail/prefetch.hpp"
#include "internal.hpp"

namespace amq::detail::gcs {

struct Unary {
  uint64_t zeros[5];  // the first 256 bits read back from the bucket's end; zeros as ones
  uint32_t before[5];  // zeros in the words before each
  // Of the bucket at q, bits long (byte-aligned: its unary words end at its last byte).
  [[gnu::always_inline]] Unary(const uint8_t* q, uint64_t bits) noexcept {
    const std::byte* end = reinterpret_cast<const std::byte*>(q) + bits / 8;
    before[0] = 0;
#pragma GCC unroll 4  // (left a loop, it counts and branches at run time)
    for (unsigned w = 0; w < 4; ++w) {
      zeros[w] = ~detail::load_be64(end - 8 - 8 * w);
      before[w + 1] = before[w] + static_cast<uint32_t>(std::popcount(zeros[w]));
    }
    zeros[4] = 0;
  }
  // Zeros among the first h unary bits (h <= 256).
  [[gnu::always_inline]] uint32_t rank0(uint64_t h) const noexcept {
    return before[h >> 6] + static_cast<uint32_t>(std::popcount(zeros[h >> 6] & ((uint64_t{1} << (h & 63)) - 1)));
  }
  // Whether Q = h for a code with f flags so far: the f-th zero ends at h (or f = h = 0).
  [[gnu::always_inline]] bool quotients_end_at(uint64_t h, uint32_t f) const noexcept {
    return rank0(h) == f && (h == 0 || ((zeros[(h - 1) >> 6] >> ((h - 1) & 63)) & 1));
  }
};
// Whether code j (f flags and w wraps in codes 0..j, low bits l) is below t = 128·H + L:
// H_j < H, or H_j = H and l < L, that is Q_j <= h = H - w - (l >= L), that is at least
// f zeros among the first h unary bits. Codes past the bucket's last (the bytes after
// it) count at least its flags and wraps, so they never seem below t unless it is.
[[gnu::always_inline]] inline bool below(const Unary& u, uint32_t f, uint32_t w, uint32_t l, uint32_t H,
                                         uint32_t L) noexcept {
  const int32_t h = static_cast<int32_t>(H) - static_cast<int32_t>(w) - static_cast<int32_t>(l >= L);
  return h >= 0 && u.rank0(static_cast<uint64_t>(h)) >= f;
}
enum Window { kAbsent = 0, kFound = 1, kEarlier = 2, kLater = 3 };
// What a search knows of codes 16·k0 .. 16·k0 + 47 (its window): the flags and wraps
// of the codes before them, and as 48-bit masks their candidates (L_j = L), flags and
// wraps.
struct Masks {
  uint32_t f0, w0;
  uint64_t cand, flags, wraps;
};
// Searches the window of the bucket at q (bits bits long) for t = 128·H + L.
[[gnu::always_inline]] inline Window judge(const uint8_t* q, uint64_t bits, const Unary& u, unsigned k0,
                                                  uint32_t H, uint32_t L, Masks m) noexcept {
  const unsigned len = 16 * k0;
  const uint8_t* x = q + len;
  // (Both ends computed without a branch on k0: which blocks start at 0 is random.)
  const bool start_below = (k0 == 0) | below(u, m.f0, m.w0, x[-1] & 127u, H, L);
  if (!start_below) return kEarlier;
  if (below(u, m.f0 + static_cast<uint32_t>(std::popcount(m.flags)),
            m.w0 + static_cast<uint32_t>(std::popcount(m.wraps)), x[47] & 127u, H, L))
    return kLater;
  for (uint64_t cand = m.cand; cand;) {
    const unsigned i = static_cast<unsigned>(std::countr_zero(cand));
    cand &= cand - 1;
    const uint64_t upto = (uint64_t{2} << i) - 1;
    const uint32_t fi = m.f0 + static_cast<uint32_t>(std::popcount(m.flags & upto));
    const int32_t h = static_cast<int32_t>(H - m.w0) - static_cast<int32_t>(std::popcount(m.wraps & upto));
    // Code j is real when its byte and its h unary bits do not overlap.
    if (h >= 0 && u.quotients_end_at(static_cast<uint64_t>(h), fi) && 8 * (len + i + 1) + static_cast<uint64_t>(h) <= bits)
      return kFound;
  }
  return kAbsent;
}
// The window after the one that said `way`, 48 codes on (k0 in blocks of 16); false
// past the bucket's bytes.
[[gnu::always_inline]] inline bool next_window(unsigned& k0, uint64_t bits, Window way) noexcept {
  if (way == kEarlier) {
    k0 = k0 >= 3 ? k0 - 3 : 0;
    return true;
  }
  k0 += 3;
  return 16 * k0 < bits / 8;
}
// The first window: the block of the ~t/M-th code, and one block back.
[[gnu::always_inline]] inline unsigned first_window(const GolombCodedSet& s, uint64_t t) noexcept {
  const unsigned expected = static_cast<unsigned>((t * Access::block_inverse(s)) >> 32);
  return expected - (expected > 0);
}
// Where the search of a bucket, whose bits [begin, end) the caller read from the index,
// for t starts: its bytes, its length in bits, t's high and low parts, its first window.
struct Search {
  const uint8_t* q;
  uint64_t bits;
  uint32_t H, L;
  unsigned k0;
};
[[gnu::always_inline]] inline Search search_of(const GolombCodedSet& s, uint64_t begin, uint64_t end,
                                               uint64_t t) noexcept {
  return {reinterpret_cast<const uint8_t*>(Access::bits(s) + begin / 8), end - begin,
          static_cast<uint32_t>(t >> 7), static_cast<uint32_t>(t & 127), first_window(s, t)};
}
// Asks for the lines where bucket b probably lies (its superblock's offset plus the
// mean bucket size times its place) while its index entry is read. The guess is off
// by ~41 bytes (standard deviation, at ε = 1/256) and a bucket is ~153 bytes long:
// five lines from 48 bytes before the guess hold the whole bucket for 93% of
// queries.
[[gnu::always_inline]] inline void prefetch_bucket(const GolombCodedSet& s, uint64_t b) noexcept {
  constexpr uint64_t kSuper = GolombCodedSet::kSuperblockBuckets;
  const uint64_t guess = (Access::super(s)[b / kSuper] + (b % kSuper) * Access::mean_bucket_bits(s)) / 8;
  // Separate calls, not a loop over a list of offsets: the compiler puts such a list
  // on the stack, and the kernel then aligns its frame.
  const std::byte* p = Access::bits(s);
  detail::prefetch_guess(p, guess - 48);
  detail::prefetch_guess(p, guess + 16);
  detail::prefetch_guess(p, guess + 80);
  detail::prefetch_guess(p, guess + 144);
  detail::prefetch_guess(p, guess + 208);
}

}  // namespace amq::detail::gcs
