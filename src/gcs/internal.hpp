// src/gcs/internal.hpp — what the Golomb-coded set's sources share: the stream's guard
// bytes and window loads, the friend through which kernels read a set, the bucket
// scans, the batch pipeline's first stages, and the table of kernels one instruction
// set provides for one layout.
//
// Files: golomb_coded_set.cpp (build, kernel selection, iteration), gcs/serialize.cpp
// (the container: write, load, validate), gcs/rice_search.hpp and gcs/byte_search.hpp
// (the two layouts' searches, shared by their kernels), gcs/kernel_portable.cpp,
// gcs/kernel_bmi2.cpp and gcs/kernel_avx2.cpp (one instruction set each).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "amq/detail/bit_stream.hpp"
#include "amq/detail/byte_io.hpp"
#include "amq/detail/dispatch.hpp"
#include "amq/detail/prefetch.hpp"
#include "amq/golomb_coded_set.hpp"

// The x86-64 kernels (BMI2's pdep, AVX2) are compiled where GCC or Clang targets x86-64.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define AMQ_GCS_X86 1
#else
#define AMQ_GCS_X86 0
#endif

namespace amq::detail::gcs {

// Zero bytes around the stream in memory (not in files): queries read whole words
// around a bucket, a byte-layout query up to 32 bytes before a bucket's end and 288
// after its start.
inline constexpr size_t kGuardBytes = 32;
inline constexpr size_t kTailGuardBytes = 288;

// Bits [e - 57, e) of the stream, bit e - 1 in the lowest place: the 8 bytes that end
// with the byte holding bit e - 1 (for e = 0, the guard bytes before the stream),
// shifted so that at least 57 valid bits remain.
[[gnu::always_inline]] inline uint64_t load_back(const std::byte* p, uint64_t e) noexcept {
  return load_be64(p + ((e + 7) >> 3) - 8) >> ((0 - e) & 7);
}

// Bits [s, s + 57) of the stream, bit s in the highest place.
[[gnu::always_inline]] inline uint64_t load_fwd(const std::byte* p, uint64_t s) noexcept {
  return load_be64(p + (s >> 3)) << (s & 7);
}

inline constexpr uint64_t kLow57 = (uint64_t{1} << 57) - 1;

// ---- shared by build and load ----------------------------------------------------

inline constexpr uint64_t kMaxRangePerKey = uint64_t{1} << 40;

inline uint64_t divisor_for(uint64_t m, GolombCodedSet::Coding coding) {
  return coding == GolombCodedSet::Coding::golomb ? optimal_golomb_divisor(static_cast<double>(m))
                                                  : uint64_t{1} << optimal_rice_bits(static_cast<double>(m));
}

// Bucket width W = k·M, at most the whole range.
inline uint64_t width_for(uint64_t m, uint64_t range, GolombCodedSet::Coding coding) {
  const uint64_t k = coding == GolombCodedSet::Coding::golomb ? GolombCodedSet::kGolombBucketKeys
                                                              : GolombCodedSet::kRiceBucketKeys;
  const unsigned __int128 w = static_cast<unsigned __int128>(m) * k;
  return w > range ? range : static_cast<uint64_t>(w);
}

// The byte layout: Rice with a 7-bit remainder, and buckets no wider than 128 · 256
// (so a real code's quotient sum stays below 256: four unary words answer a query).
inline bool byte_layout_for(GolombCodedSet::Coding coding, uint64_t divisor, uint64_t m) {
  return coding == GolombCodedSet::Coding::rice && divisor == 128 && m <= 256;
}

// Hasher ids a Golomb-coded set may record: amq's own (1 XXH3-64, 2 XXH64, 3 murmur3)
// and user hashers (>= 1000). 0 names no hasher; 4..999 are kept for amq's own.
inline bool valid_hasher_id(uint32_t id) noexcept { return (id >= 1 && id <= 3) || id >= 1000; }

// The set's internals, for the kernels (GolombCodedSet's friend).
struct Access {
  using Set = GolombCodedSet;
  // The first byte of the coded stream (after the leading guard bytes).
  static const std::byte* bits(const Set& s) noexcept { return s.stream_.data() + kGuardBytes; }
  static uint64_t offset(const Set& s, uint64_t b) noexcept { return s.bucket_offset(b); }
  static uint64_t bucket_of(const Set& s, uint64_t v) noexcept { return s.bucket_of(v); }
  static uint64_t width(const Set& s) noexcept { return s.width_; }
  static uint64_t width_inverse(const Set& s) noexcept { return s.width_inverse_; }
  static unsigned width_shift(const Set& s) noexcept { return s.width_shift_; }
  static unsigned rem_bits(const Set& s) noexcept { return s.rem_bits_; }
  static unsigned group(const Set& s) noexcept { return s.group_; }
  static uint32_t block_inverse(const Set& s) noexcept { return s.block_inverse_; }
  static uint64_t mean_bucket_bits(const Set& s) noexcept { return s.mean_bucket_bits_; }
  static bool wide(const Set& s) noexcept { return s.wide_; }
  static const uint64_t* super(const Set& s) noexcept { return s.super_.data(); }
  static const uint16_t* rel16(const Set& s) noexcept { return s.rel16_.data(); }
  static const uint32_t* rel32(const Set& s) noexcept { return s.rel32_.data(); }
  static bool query(const Set& s, uint64_t v) noexcept { return s.query_(s, v); }
  template <class F>
  static void scan_bucket(const Set& s, uint64_t b, F&& f) noexcept {
    s.scan_bucket(b, f);
  }
};

// The kernels one instruction set provides for one layout, chosen once per set (when it
// is built or loaded) with select_kernel (amq/detail/dispatch.hpp).
using QueryFn = bool (*)(const GolombCodedSet&, uint64_t) noexcept;
using ManyFn = size_t (*)(const GolombCodedSet&, std::span<const uint64_t>, std::span<bool>);
struct Kernels {
  Isa isa;
  QueryFn (*query_for)(const GolombCodedSet&) noexcept;  // the single-query kernel for this set
  ManyFn many_sparse;                                     // a batch in the caller's order
  // A batch sorted, each bucket searched once; null where the in-order batch measured
  // faster at every density (the Rice kernels, docs/decisions/0046).
  ManyFn many_sorted;
};
// kernel_portable.cpp: Rice sets in the split layout (select in 64-bit words), the byte
// layout (8 bytes at a time in 64-bit words), and the code-by-code scan (Golomb coding).
extern const Kernels kRicePortable, kBytesSwar, kScan;
#if AMQ_GCS_X86
extern const Kernels kRiceBmi2;   // kernel_bmi2.cpp: the select with BMI2's pdep
extern const Kernels kBytesAvx2;  // kernel_avx2.cpp: the byte layout 32 bytes at a time
#endif

// Whether value v (in [0, range)) is coded, code by code through its bucket: Golomb
// coding, Rice widths without a group search, and a byte-layout bucket too dense for
// the window search.
inline bool contains_scan(const GolombCodedSet& s, uint64_t v) noexcept {
  bool found = false;
  Access::scan_bucket(s, Access::bucket_of(s, v), [&](uint64_t cur) {
    if (cur < v) return true;
    found = cur == v;
    return false;
  });
  return found;
}

// A chunk of a batch answered in the caller's order: each query's bucket, its target
// relative to the bucket's start, and the bucket's bits [begin, end).
struct Chunk {
  static constexpr size_t kSize = 32;
  uint64_t target[kSize], bucket[kSize], begin[kSize], end[kSize];
};
// The batch pipeline's first stages for hashes[base, base + m): the index entries are
// prefetched while the values are reduced, then the buckets' lines while the entries
// are read. The caller then searches the chunk, its misses overlapped.
[[gnu::always_inline]] inline void fetch_chunk(const GolombCodedSet& s, const uint64_t* hashes, size_t m,
                                               Chunk& c) noexcept {
  const std::byte* p = Access::bits(s);
  const uint64_t range = s.range(), width = Access::width(s);
  for (size_t i = 0; i < m; ++i) {
    const uint64_t v = reduce(hashes[i], range);
    const uint64_t b = Access::bucket_of(s, v);
    c.target[i] = v - b * width;
    c.bucket[i] = b;
    prefetch(Access::wide(s) ? static_cast<const void*>(Access::rel32(s) + b)
                             : static_cast<const void*>(Access::rel16(s) + b));
  }
  for (size_t i = 0; i < m; ++i) {
    c.begin[i] = Access::offset(s, c.bucket[i]);
    c.end[i] = Access::offset(s, c.bucket[i] + 1);
    for (uint64_t a = c.begin[i] >> 3; a <= (c.end[i] >> 3) + 8; a += 64) prefetch(p + a);
  }
}

// A batch in the caller's order, chunk by chunk: each chunk fetched (fetch_chunk), then
// each query answered by hold(bucket, begin, end, target).
template <class Hold>
[[gnu::always_inline]] inline size_t many_in_order(const GolombCodedSet& s, std::span<const uint64_t> hashes,
                                                   std::span<bool> out, Hold&& hold) {
  size_t found = 0;
  Chunk c;
  for (size_t base = 0; base < hashes.size(); base += Chunk::kSize) {
    const size_t m = std::min(Chunk::kSize, hashes.size() - base);
    fetch_chunk(s, hashes.data() + base, m, c);
    for (size_t i = 0; i < m; ++i) found += out[base + i] = hold(c.bucket[i], c.begin[i], c.end[i], c.target[i]);
  }
  return found;
}

// A batch's values with their places in the batch, ascending.
struct SortedQuery {
  uint64_t v;
  size_t i;
};
inline std::vector<SortedQuery> sorted_queries(const GolombCodedSet& s, std::span<const uint64_t> hashes) {
  std::vector<SortedQuery> qs(hashes.size());
  for (size_t i = 0; i < hashes.size(); ++i) qs[i] = {reduce(hashes[i], s.range()), i};
  std::sort(qs.begin(), qs.end(), [](const SortedQuery& a, const SortedQuery& b) { return a.v < b.v; });
  return qs;
}

// A batch with several queries per bucket, for sets without a group search: sorted,
// then one pass over the buckets, each scanned once for all its queries.
size_t many_sorted_scan(const GolombCodedSet& s, std::span<const uint64_t> hashes, std::span<bool> out);

}  // namespace amq::detail::gcs

namespace amq {

// Calls f(value) for the values of bucket b in order until f returns false. A bucket
// is two streams read at once: remainders forward from its start, unary quotients
// backwards from its end; they meet after the last code. Each is read through a
// 64-bit window refilled only when needed, and the truncated-binary choice is made
// without a branch. (One loop over both streams, so that their windows and fill counts
// stay in registers: hence its length.)
template <class F>
inline void GolombCodedSet::scan_bucket(uint64_t b, F&& f) const noexcept {
  using detail::gcs::load_back;
  if (byte_layout_) {
    scan_bytes(b, f);
    return;
  }
  uint64_t rpos = bucket_offset(b), upos = bucket_offset(b + 1);
  uint64_t cur = b * width_;
  const std::byte* p = stream_.data() + detail::gcs::kGuardBytes;
  // A bucket is ~150 bytes: ask for all its cache lines at once, so their misses overlap.
  for (uint64_t at = rpos >> 3; at <= (upos >> 3) + 8; at += 64) detail::prefetch(p + at);
  if (rpos >= upos) return;
  const unsigned c = rem_bits_;
  const uint64_t u = cutoff_, d = divisor_;
  // Short remainder iff its top c - 1 bits are below u, i.e. the window < u << (65 - c).
  const uint64_t u_top = u == 0 ? 0 : u << (65 - c);
  uint64_t x = load_back(p, upos);
  unsigned uav = 57;
  uint64_t w = detail::load_be64(p + (rpos >> 3)) << (rpos & 7);
  unsigned rav = 57;
  while (rpos < upos) {
    unsigned q = static_cast<unsigned>(std::countr_one(x));
    uint64_t quotient = 0;
    if (q >= uav) [[unlikely]] {  // the run may go past the window: reload here
      x = load_back(p, upos);
      q = static_cast<unsigned>(std::countr_one(x));
      while (q >= 57) {  // a run longer than a window
        quotient += 57;
        upos -= 57;
        x = load_back(p, upos);
        q = static_cast<unsigned>(std::countr_one(x));
      }
      uav = 57;
    }
    quotient += q;
    upos -= q + 1;
    uav -= q + 1;
    x >>= q + 1;
    uint64_t r = 0;
    if (u == 0) {  // Rice: fixed-width remainders, each loaded on its own (no refill branch)
      if (c != 0) r = (detail::load_be64(p + (rpos >> 3)) << (rpos & 7)) >> (64 - c);
      rpos += c;
    } else {
      if (rav < c) {
        w = detail::load_be64(p + (rpos >> 3)) << (rpos & 7);
        rav = 57;
      }
      const uint64_t top = w >> (64 - c);
      const uint64_t short_code = w < u_top;  // 0 or 1, as data
      const uint64_t mask = 0 - short_code;
      r = ((top >> 1) & mask) | ((top - u) & ~mask);
      const unsigned len = c - static_cast<unsigned>(short_code);
      w <<= len;
      rav -= len;
      rpos += len;
    }
    cur += quotient * d + r;
    if (!f(cur)) return;
  }
}

// The byte layout's codes in order until f returns false: code j is its byte (bit 7: the
// quotient is not zero; bits 0-6: the value's low 7 bits L_j) and, for a nonzero
// quotient q, q - 1 ones and a zero read backwards from the bucket's end. The value's
// high part H_j = v_j >> 7 grows by q_j, plus one when L_j < L_{j-1} (the gap's
// remainder carried; L_{-1} = 0). With GapBytes, the bytes of a file of layout 1 (only
// while loading): they hold the gap's remainder instead. A code is real while its byte
// and its unary bits do not overlap. Returns the bits left between the last code's byte
// and the unary bits read (a well-formed bucket: 0-7, all zero), or 0 when f stopped
// the scan.
template <bool GapBytes, class F>
inline uint64_t GolombCodedSet::scan_bytes(uint64_t b, F&& f) const noexcept {
  using detail::gcs::load_back;
  const uint64_t begin = bucket_offset(b), end = bucket_offset(b + 1);
  const std::byte* p = stream_.data() + detail::gcs::kGuardBytes;
  const uint64_t bits = end - begin;
  uint64_t cur = b * width_, used = 0;  // unary bits read back from the end
  uint64_t high = 0, low = 0, j = 0;     // H_{j-1}, L_{j-1}
  for (; 8 * (j + 1) + used <= bits; ++j) {
    const uint8_t x = static_cast<uint8_t>(p[begin / 8 + j]);
    uint64_t q = 0, u = used;
    if (x & 0x80) {
      q = 1;
      for (;;) {  // the run of ones, a window at a time
        const unsigned t = static_cast<unsigned>(std::countr_one(load_back(p, end - u)));
        if (t < 57) {
          q += t;
          u += t + 1;
          break;
        }
        q += 57;
        u += 57;
        if (u > bits) return bits - 8 * j - used;
      }
    }
    if (8 * (j + 1) + u > bits) return bits - 8 * j - used;
    used = u;
    if constexpr (GapBytes) {
      cur += q * 128 + (x & 127);
    } else {
      high += q + ((x & 127u) < low);
      low = x & 127u;
      cur = b * width_ + 128 * high + low;
    }
    if (!f(cur)) return 0;
  }
  return bits - 8 * j - used;
}

}  // namespace amq
