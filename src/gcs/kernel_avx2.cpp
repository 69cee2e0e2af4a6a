// src/gcs/kernel_avx2.cpp — the byte layout with AVX2: a window's candidates, flags and
// wraps from 32-byte compares. Every function here carries the target attribute (the
// rest of the build keeps its baseline): without -march, an inlined helper without it
// could not use the AVX2 intrinsics. That is why move_window and bytes_hold are twins
// of kernel_portable.cpp's (a target cannot depend on a template parameter); all they
// share lives in byte_search.hpp. Nothing on other architectures.
#include "internal.hpp"

#if AMQ_GCS_X86
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <span>

#include "byte_search.hpp"

#define AMQ_GCS_AVX2 __attribute__((target("avx2,popcnt")))

namespace amq::detail::gcs {
namespace {

// Bit i set when byte i's low 7 bits are below byte i - 1's (a wrap).
[[gnu::always_inline]] AMQ_GCS_AVX2 inline uint32_t wraps32(const uint8_t* at, __m256i low7) noexcept {
  const __m256i x = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(at)), low7);
  const __m256i prev = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(at - 1)), low7);
  return static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpgt_epi8(prev, x)));
}
// kBefore[k][i]: the bits of 64-code pair i of chunks that lie before code 16·k.
constexpr auto kBefore = [] {
  std::array<std::array<uint64_t, 4>, 16> m{};
  for (unsigned k = 0; k < 16; ++k)
    for (unsigned i = 0; i < 4; ++i) {
      const unsigned n = 16 * k > 64 * i ? std::min(16 * k - 64 * i, 64u) : 0;
      m[k][i] = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
    }
  return m;
}();
// Chunks 32-byte chunks cover the bytes before the window; they are counted in pairs,
// as 64-bit masks.
template <int Chunks>
[[gnu::always_inline]] AMQ_GCS_AVX2 inline Masks masks_avx2(const uint8_t* q, unsigned k0, uint32_t L) noexcept {
  const unsigned len = 16 * k0;
  const __m256i low7 = _mm256_set1_epi8(0x7f);
  uint32_t f0 = 0, w0 = 0;  // flags and wraps of codes 0 .. len - 1
  auto flags32 = [](const uint8_t* at) AMQ_GCS_AVX2 {
    return static_cast<uint64_t>(static_cast<uint32_t>(
        _mm256_movemask_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(at)))));
  };
#pragma GCC unroll 8  // (else the loop and its per-chunk branches may stay)
  for (int c = 0; c < Chunks; c += 2) {
    const uint64_t keep = kBefore[k0][c / 2];
    uint64_t flags = flags32(q + 32 * c), wraps = wraps32(q + 32 * c, low7);
    if (c + 1 < Chunks) {
      flags |= flags32(q + 32 * c + 32) << 32;
      wraps |= uint64_t{wraps32(q + 32 * c + 32, low7)} << 32;
    }
    f0 += static_cast<uint32_t>(std::popcount(flags & keep));
    // Code 0 never wraps (L_{-1} = 0): the byte before it is another bucket's.
    w0 += static_cast<uint32_t>(std::popcount(wraps & keep & (c == 0 ? ~uint64_t{1} : ~uint64_t{0})));
  }
  // The 48 codes' masks, joined from two 32-byte loads: the second covers codes
  // 16..47, and its low 16 bits repeat the first's high 16, so an or joins them.
  const uint8_t* x = q + len;
  const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x));
  const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 16));
  const __m256i lv = _mm256_set1_epi8(static_cast<char>(L));
  auto join = [](int lo, int hi) {
    return static_cast<uint32_t>(lo) | static_cast<uint64_t>(static_cast<uint32_t>(hi)) << 16;
  };
  return {f0, w0,
          join(_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(a, low7), lv)),
               _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(b, low7), lv))),
          join(_mm256_movemask_epi8(a), _mm256_movemask_epi8(b)),
          join(static_cast<int>(wraps32(x, low7)), static_cast<int>(wraps32(x + 16, low7))) &
              (len == 0 ? ~uint64_t{1} : ~uint64_t{0})};
}
// The rare case: the windows after the first, the `way` it said. It reads the unary
// words again from the bucket's end rather than take the caller's: with five
// arguments, not seven, none goes on the stack, and the caller's frame set-up stays
// short.
[[gnu::noinline]] AMQ_GCS_AVX2 bool move_window(const uint8_t* q, uint64_t bits, unsigned k0, uint32_t t,
                                                       Window way) noexcept {
  const Unary u(q, bits);
  const uint32_t H = t >> 7, L = t & 127;
  while (next_window(k0, bits, way)) {
    way = judge(q, bits, u, k0, H, L, masks_avx2<8>(q, k0, L));
    if (way < kEarlier) return way == kFound;
  }
  return false;
}
// Whether bucket b, whose bits [begin, end) the caller read from the index, holds t.
[[gnu::always_inline]] AMQ_GCS_AVX2 inline bool bytes_hold(const GolombCodedSet& s, uint64_t b, uint64_t begin,
                                                                  uint64_t end, uint64_t t) noexcept {
  if (end - begin > 8 * 256) [[unlikely]]
    return contains_scan(s, b * Access::width(s) + t);
  const Search f = search_of(s, begin, end, t);
  const Window r = judge(f.q, f.bits, Unary(f.q, f.bits), f.k0, f.H, f.L,
                         masks_avx2<3>(f.q, f.k0, f.L));
  if (r < kEarlier) [[likely]]
    return r == kFound;
  return move_window(f.q, f.bits, f.k0, static_cast<uint32_t>(t), r);
}
// W15: the default ε = 1/256, where W = 2^15 and the index entries are 16-bit: known
// here rather than tested at each query.
template <bool W15>
AMQ_GCS_AVX2 bool contains_bytes(const GolombCodedSet& s, uint64_t v) noexcept {
  const uint64_t b = W15 ? v >> 15 : Access::bucket_of(s, v);
  prefetch_bucket(s, b);
  const auto offset = [&](uint64_t x) {
    return W15 ? Access::super(s)[x / GolombCodedSet::kSuperblockBuckets] + Access::rel16(s)[x] : Access::offset(s, x);
  };
  return bytes_hold(s, b, offset(b), offset(b + 1), W15 ? v & ((uint64_t{1} << 15) - 1) : v - b * Access::width(s));
}

AMQ_GCS_AVX2 size_t bytes_many_sparse(const GolombCodedSet& s, std::span<const uint64_t> hashes,
                                      std::span<bool> out) {
  return many_in_order(s, hashes, out, [&](uint64_t b, uint64_t begin, uint64_t end, uint64_t t) AMQ_GCS_AVX2 {
    return bytes_hold(s, b, begin, end, t);
  });
}
QueryFn bytes_query_for(const GolombCodedSet& s) noexcept {
  return Access::width_shift(s) == 15 && !Access::wide(s) ? &contains_bytes<true> : &contains_bytes<false>;
}

}  // namespace

const Kernels kBytesAvx2{Isa::avx2, &bytes_query_for, &bytes_many_sparse, nullptr};

}  // namespace amq::detail::gcs

#undef AMQ_GCS_AVX2
#endif
