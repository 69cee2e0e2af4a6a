// src/gcs/kernel_portable.cpp — the kernels every CPU runs: Rice sets in the split
// layout with the select-in-word in 64-bit words, the byte layout 8 bytes at a time in
// 64-bit words (SWAR), and the code-by-code scan (Golomb coding, and Rice widths with no
// group search). Nothing here assumes x86.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>

#include "amq/detail/byte_io.hpp"
#include "byte_search.hpp"
#include "internal.hpp"
#include "rice_search.hpp"

namespace amq::detail::gcs {
namespace {

// ---- Rice, split layout ------------------------------------------------------------

template <unsigned C>
bool contains_rice(const GolombCodedSet& s, uint64_t v) noexcept {
  return contains<C, false>(s, v);
}
QueryFn rice_query_for(const GolombCodedSet& s) noexcept {
  return with_width(s, []<unsigned C>() -> QueryFn { return &contains_rice<C>; });
}
size_t rice_many_sparse(const GolombCodedSet& s, std::span<const uint64_t> h, std::span<bool> out) {
  return with_width(s, [&]<unsigned C>() { return many_sparse<C, false>(s, h, out); });
}

// ---- the byte layout, in 64-bit words -------------------------------------------------

// The masks 8 bytes at a time in 64-bit words (SWAR): CPUs without AVX2 and other
// architectures. With 7-bit lanes nothing carries across bytes: low7 + 0x7f sets the
// high bit exactly when low7 != 0, and (0x80 | a) - b keeps it exactly when a >= b.
inline constexpr uint64_t kHighBits = 0x8080808080808080, kLow7Bits = 0x7f7f7f7f7f7f7f7f;
// Byte i's high bit as bit i.
[[gnu::always_inline]] inline uint32_t gather_high(uint64_t v) noexcept {
  return static_cast<uint32_t>(((v & kHighBits) * 0x0002040810204081) >> 56);
}
struct SwarWord {
  uint64_t flags, wraps, low;  // as high bits of bytes; the low 7 bits of each byte
};
[[gnu::always_inline]] inline SwarWord swar_word(const uint8_t* at) noexcept {
  const uint64_t w = detail::load_le64(reinterpret_cast<const std::byte*>(at));
  const uint64_t low = w & kLow7Bits, prev = detail::load_le64(reinterpret_cast<const std::byte*>(at - 1)) & kLow7Bits;
  return {w & kHighBits, ~((low | kHighBits) - prev) & kHighBits, low};
}
[[gnu::always_inline]] inline Masks masks_swar(const uint8_t* q, unsigned k0, uint32_t L) noexcept {
  const unsigned len = 16 * k0;
  uint32_t f0 = 0, w0 = 0;
  for (unsigned i = 0; i < len; i += 8) {
    const SwarWord sw = swar_word(q + i);
    f0 += static_cast<uint32_t>(std::popcount(sw.flags));
    // Code 0 never wraps (L_{-1} = 0): the byte before it is another bucket's.
    w0 += static_cast<uint32_t>(std::popcount(sw.wraps & (i == 0 ? ~uint64_t{0x80} : ~uint64_t{0})));
  }
  Masks m{f0, w0, 0, 0, 0};
  const uint64_t lv = uint64_t{L} * 0x0101010101010101;
  for (unsigned i = 0; i < 6; ++i) {
    const SwarWord sw = swar_word(q + len + 8 * i);
    m.cand |= uint64_t{gather_high(~((sw.low ^ lv) + kLow7Bits))} << (8 * i);
    m.flags |= uint64_t{gather_high(sw.flags)} << (8 * i);
    m.wraps |= uint64_t{gather_high(sw.wraps)} << (8 * i);
  }
  if (len == 0) m.wraps &= ~uint64_t{1};
  return m;
}
[[gnu::noinline]] bool move_window_swar(const uint8_t* q, uint64_t bits, unsigned k0, uint32_t t,
                                               Window way) noexcept {
  const Unary u(q, bits);
  const uint32_t H = t >> 7, L = t & 127;
  while (next_window(k0, bits, way)) {
    way = judge(q, bits, u, k0, H, L, masks_swar(q, k0, L));
    if (way < kEarlier) return way == kFound;
  }
  return false;
}
[[gnu::always_inline]] inline bool bytes_hold_swar(const GolombCodedSet& s, uint64_t b, uint64_t begin,
                                                          uint64_t end, uint64_t t) noexcept {
  if (end - begin > 8 * 256) [[unlikely]]
    return contains_scan(s, b * Access::width(s) + t);
  const Search f = search_of(s, begin, end, t);
  const Window r = judge(f.q, f.bits, Unary(f.q, f.bits), f.k0, f.H, f.L,
                         masks_swar(f.q, f.k0, f.L));
  if (r < kEarlier) [[likely]]
    return r == kFound;
  return move_window_swar(f.q, f.bits, f.k0, static_cast<uint32_t>(t), r);
}
bool contains_bytes_swar(const GolombCodedSet& s, uint64_t v) noexcept {
  const uint64_t b = Access::bucket_of(s, v);
  prefetch_bucket(s, b);
  return bytes_hold_swar(s, b, Access::offset(s, b), Access::offset(s, b + 1), v - b * Access::width(s));
}

size_t bytes_many_sparse(const GolombCodedSet& s, std::span<const uint64_t> hashes, std::span<bool> out) {
  return many_in_order(s, hashes, out, [&](uint64_t b, uint64_t begin, uint64_t end, uint64_t t) {
    return bytes_hold_swar(s, b, begin, end, t);
  });
}
QueryFn bytes_query_for(const GolombCodedSet&) noexcept { return &contains_bytes_swar; }

// ---- code by code -------------------------------------------------------------------

QueryFn scan_query_for(const GolombCodedSet&) noexcept { return &contains_scan; }
size_t scan_many_sparse(const GolombCodedSet& s, std::span<const uint64_t> hashes, std::span<bool> out) {
  return many_in_order(s, hashes, out, [&](uint64_t b, uint64_t, uint64_t, uint64_t t) {
    return contains_scan(s, b * Access::width(s) + t);
  });
}

}  // namespace

size_t many_sorted_scan(const GolombCodedSet& s, std::span<const uint64_t> hashes, std::span<bool> out) {
  const std::vector<SortedQuery> qs = sorted_queries(s, hashes);
  size_t found = 0;
  for (size_t at = 0; at < qs.size();) {
    const uint64_t b = Access::bucket_of(s, qs[at].v);
    const uint64_t limit = (b + 1) * Access::width(s);
    size_t stop = at;
    while (stop < qs.size() && qs[stop].v < limit) out[qs[stop++].i] = false;
    size_t next = at;
    Access::scan_bucket(s, b, [&](uint64_t cur) {
      while (next < stop && qs[next].v < cur) ++next;
      while (next < stop && qs[next].v == cur) {
        out[qs[next++].i] = true;
        ++found;
      }
      return next < stop;
    });
    at = stop;
  }
  return found;
}

const Kernels kRicePortable{Isa::portable, &rice_query_for, &rice_many_sparse, nullptr};
const Kernels kBytesSwar{Isa::portable, &bytes_query_for, &bytes_many_sparse, nullptr};
const Kernels kScan{Isa::portable, &scan_query_for, &scan_many_sparse, &many_sorted_scan};

}  // namespace amq::detail::gcs
