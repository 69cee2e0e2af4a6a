// GolombCodedSet: build, bucketed queries, iteration and the amq container (Kind::gcs).
#include "amq/golomb_coded_set.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "amq/detail/bit_stream.hpp"
#include "amq/detail/byte_io.hpp"
#include "amq/detail/cpu.hpp"
#include "amq/detail/golomb_code.hpp"
#include "amq/detail/prefetch.hpp"
#include "amq/error.hpp"
#include "amq/format.hpp"
#include "checks.hpp"

namespace amq {
namespace {

// Zero bytes around the stream in memory (not in files): queries read whole words
// around a bucket, a byte-layout query up to 32 bytes before a bucket's end and 288
// after its start.
constexpr size_t kGuardBytes = 32;
constexpr size_t kTailGuardBytes = 288;
constexpr uint64_t kMaxRangePerKey = uint64_t{1} << 40;

uint64_t range_per_key_for(double fpp) {
  detail::check_fpp(fpp, 0.5, true, "Golomb-coded set: ");
  const double m = std::round(1.0 / fpp);
  if (m > static_cast<double>(kMaxRangePerKey))
    throw Error(Errc::invalid_argument, "false-positive probability " + detail::number_text(fpp) + " is below 2^-40");
  return static_cast<uint64_t>(m);
}

uint64_t divisor_for(uint64_t m, GolombCodedSet::Coding coding) {
  return coding == GolombCodedSet::Coding::golomb ? optimal_golomb_divisor(static_cast<double>(m))
                                                  : uint64_t{1} << optimal_rice_bits(static_cast<double>(m));
}

// Bucket width W = k·M, at most the whole range.
uint64_t width_for(uint64_t m, uint64_t range, GolombCodedSet::Coding coding) {
  const uint64_t k = coding == GolombCodedSet::Coding::golomb ? GolombCodedSet::kGolombBucketKeys
                                                              : GolombCodedSet::kRiceBucketKeys;
  const unsigned __int128 w = static_cast<unsigned __int128>(m) * k;
  return w > range ? range : static_cast<uint64_t>(w);
}

// The byte layout: Rice with a 7-bit remainder, and buckets no wider than 128 · 256
// (so a real code's quotient sum stays below 256: four unary words answer a query).
bool byte_layout_for(GolombCodedSet::Coding coding, uint64_t divisor, uint64_t m) {
  return coding == GolombCodedSet::Coding::rice && divisor == 128 && m <= 256;
}

}  // namespace

GolombCodedSet::GolombCodedSet() : GolombCodedSet(from_hashes({}, Options{})) {}

namespace {

// Hasher ids a Golomb-coded set may record: amq's own (1 XXH3-64, 2 XXH64, 3 murmur3)
// and user hashers (>= 1000). 0 names no hasher; 4..999 are kept for amq's own.
bool valid_hasher_id(uint32_t id) noexcept { return (id >= 1 && id <= 3) || id >= 1000; }

}  // namespace

GolombCodedSet GolombCodedSet::from_hashes(std::vector<uint64_t> hashes, const Options& options, uint32_t hasher_id) {
  if (options.coding != Coding::golomb && options.coding != Coding::rice)
    throw Error(Errc::invalid_argument, "unknown Golomb coding");
  if (!valid_hasher_id(hasher_id))
    throw Error(Errc::invalid_argument, "hasher id " + std::to_string(hasher_id) +
                                            " is not a hasher's (1, 2, 3, or >= 1000 for a user hasher)");
  GolombCodedSet s{Raw{}};
  s.m_ = range_per_key_for(options.fpp);
  s.coding_ = options.coding;
  s.seed_ = options.seed;
  s.hasher_id_ = hasher_id;
  std::sort(hashes.begin(), hashes.end());
  hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
  s.keys_ = hashes.size();
  const unsigned __int128 range = static_cast<unsigned __int128>(std::max<uint64_t>(s.keys_, 1)) * s.m_;
  if (range > (static_cast<unsigned __int128>(1) << 63))
    throw Error(Errc::too_large, "a Golomb-coded set of " + std::to_string(s.keys_) + " keys at this rate needs more than 63-bit hashes");
  s.range_ = static_cast<uint64_t>(range);
  s.divisor_ = divisor_for(s.m_, s.coding_);
  s.width_ = width_for(s.m_, s.range_, s.coding_);
  s.buckets_ = (s.range_ - 1) / s.width_ + 1;
  // Multiply-shift reduction is monotone: sorted hashes give sorted values.
  for (uint64_t& h : hashes) h = reduce(h, s.range_);
  hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
  s.values_ = hashes.size();

  s.byte_layout_ = byte_layout_for(s.coding_, s.divisor_, s.m_);
  const detail::GolombCode code(s.divisor_);
  detail::BitWriter w;
  std::vector<uint64_t> offsets(s.buckets_ + 1);
  std::vector<uint64_t> gaps;
  size_t i = 0;
  for (uint64_t b = 0; b < s.buckets_; ++b) {
    offsets[b] = w.bit_size();
    uint64_t prev = b * s.width_;
    const uint64_t limit = b + 1 == s.buckets_ ? s.range_ : (b + 1) * s.width_;
    gaps.clear();
    for (; i < hashes.size() && hashes[i] < limit; ++i) {
      gaps.push_back(hashes[i] - prev);
      prev = hashes[i];
    }
    if (s.byte_layout_) {
      // A byte per code (the quotient's first unary bit, then the value's low 7 bits);
      // the rest of the nonzero quotients' unary codes last one first, ending on a byte.
      uint64_t rest = 0, value = 0;
      for (uint64_t g : gaps) {
        value += g;
        w.put((g >= 128 ? 0x80 : 0) | (value & 127), 8);
        rest += g >> 7;
      }
      w.put_run(false, (8 - rest % 8) % 8);
      for (size_t j = gaps.size(); j-- > 0;) {
        if (gaps[j] < 128) continue;
        w.put_bit(false);
        w.put_run(true, (gaps[j] >> 7) - 1);
      }
      continue;
    }
    // The remainders forward from the bucket's start, then the unary quotients last
    // one first, so that read backwards from the bucket's end they come in order.
    for (uint64_t g : gaps) code.encode_remainder(w, g % s.divisor_);
    for (size_t j = gaps.size(); j-- > 0;) {
      w.put_bit(false);
      w.put_run(true, gaps[j] / s.divisor_);
    }
  }
  offsets[s.buckets_] = w.bit_size();
  s.stream_bits_ = w.bit_size();
  const auto bytes = w.take();
  s.set_stream(bytes);
  s.rem_bits_ = code.remainder_bits();
  s.cutoff_ = code.cutoff();
  s.build_index(offsets);
  s.prepare_queries();
  return s;
}

void GolombCodedSet::set_stream(std::span<const std::byte> bytes) {
  stream_.assign(bytes.size() + kGuardBytes + kTailGuardBytes, std::byte{0});
  if (!bytes.empty()) std::memcpy(stream_.data() + kGuardBytes, bytes.data(), bytes.size());
}

void GolombCodedSet::build_index(const std::vector<uint64_t>& offsets) {
  const uint64_t entries = buckets_ + 1;
  super_.assign((entries + kSuperblockBuckets - 1) / kSuperblockBuckets, 0);
  uint64_t max_rel = 0;
  for (uint64_t b = 0; b < entries; ++b) {
    if (b % kSuperblockBuckets == 0) super_[b / kSuperblockBuckets] = offsets[b];
    max_rel = std::max(max_rel, offsets[b] - super_[b / kSuperblockBuckets]);
  }
  wide_ = max_rel > UINT16_MAX;
  rel16_.clear();
  rel32_.clear();
  for (uint64_t b = 0; b < entries; ++b) {
    const uint64_t r = offsets[b] - super_[b / kSuperblockBuckets];
    if (wide_) rel32_.push_back(static_cast<uint32_t>(r));
    else rel16_.push_back(static_cast<uint16_t>(r));
  }
}

uint64_t GolombCodedSet::hash_key_other(KeyView key) const {
  if (hasher_id_ == Xxh64Hasher::id) return Xxh64Hasher{seed_}(key.bytes());
  throw Error(Errc::unsupported, "this Golomb-coded set was built with a custom hasher (id " +
                                     std::to_string(hasher_id_) + "): query it with contains_hash()");
}

namespace {

// Bits [e - 57, e) of the stream, bit e - 1 in the lowest place: the 8 bytes that end
// with the byte holding bit e - 1 (for e = 0, the guard bytes before the stream),
// shifted so that at least 57 valid bits remain.
inline uint64_t load_back(const std::byte* p, uint64_t e) noexcept {
  return detail::load_be64(p + ((e + 7) >> 3) - 8) >> ((0 - e) & 7);
}

// Bits [s, s + 57) of the stream, bit s in the highest place.
inline uint64_t load_fwd(const std::byte* p, uint64_t s) noexcept {
  return detail::load_be64(p + (s >> 3)) << (s & 7);
}

constexpr uint64_t kLow57 = (uint64_t{1} << 57) - 1;

// kSelectInByte[b][j]: the position of the (j+1)-th set bit of byte b (8 if none).
constexpr auto kSelectInByte = [] {
  std::array<std::array<uint8_t, 8>, 256> t{};
  for (unsigned b = 0; b < 256; ++b) {
    unsigned j = 0;
    for (auto& e : t[b]) e = 8;
    for (unsigned i = 0; i < 8; ++i)
      if (b >> i & 1) t[b][j++] = static_cast<uint8_t>(i);
  }
  return t;
}();

// Position of the (k+1)-th set bit of x (k < 64), or 64 if x has fewer: BMI2's pdep
// deposits bit k at it; the portable path counts bits per byte, finds the byte by a
// SWAR comparison of the running counts, and looks the bit up in that byte.
template <bool Bmi2>
[[gnu::always_inline]] inline unsigned select_in_word(uint64_t x, unsigned k) noexcept {
#if defined(__x86_64__)
  if constexpr (Bmi2) {
    uint64_t r;
    asm("pdep %2, %1, %0" : "=r"(r) : "r"(uint64_t{1} << k), "rm"(x));
    return static_cast<unsigned>(std::countr_zero(r));
  }
#endif
  constexpr uint64_t kOnes = 0x0101010101010101, kHigh = 0x8080808080808080;
  uint64_t c = x - ((x >> 1) & 0x5555555555555555);
  c = (c & 0x3333333333333333) + ((c >> 2) & 0x3333333333333333);
  c = (c + (c >> 4)) & 0x0f0f0f0f0f0f0f0f;
  const uint64_t upto = c * kOnes;  // byte i: set bits in bytes 0..i
  // Bytes whose running count is <= k come before the one holding the bit.
  const uint64_t before = (((k * kOnes) | kHigh) - upto) & kHigh;
  const unsigned byte = static_cast<unsigned>(((before >> 7) * kOnes) >> 56);
  if (byte >= 8) return 64;
  const unsigned skipped = byte == 0 ? 0 : static_cast<unsigned>(upto >> (8 * byte - 8)) & 0xff;
  return 8 * byte + kSelectInByte[(x >> (8 * byte)) & 0xff][k - skipped];
}

}  // namespace

// Calls f(value) for the values of bucket b in order until f returns false. A bucket
// is two streams read at once: remainders forward from its start, unary quotients
// backwards from its end; they meet after the last code. Each is read through a
// 64-bit window refilled only when needed, and the truncated-binary choice is made
// without a branch.
template <class F>
inline void GolombCodedSet::scan_bucket(uint64_t b, F&& f) const noexcept {
  if (byte_layout_) {
    scan_bytes(b, f);
    return;
  }
  uint64_t rpos = bucket_offset(b), upos = bucket_offset(b + 1);
  uint64_t cur = b * width_;
  const std::byte* p = stream_.data() + kGuardBytes;
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
// while loading): they hold the gap's remainder instead. A code is real while its byte and its unary bits do
// not overlap. Returns the bits left between the last code's byte and the unary bits
// read (a well-formed bucket: 0-7, all zero), or 0 when f stopped the scan.
template <bool GapBytes, class F>
inline uint64_t GolombCodedSet::scan_bytes(uint64_t b, F&& f) const noexcept {
  const uint64_t begin = bucket_offset(b), end = bucket_offset(b + 1);
  const std::byte* p = stream_.data() + kGuardBytes;
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

// ---- Rice queries: skipping G codes at a time ------------------------------------------
//
// With Rice coding every remainder has c bits, so the G = min(8, 56 / c) remainders of a
// group are one 56-bit load and their sum a few SWAR operations; the G quotients of the
// group end at the G-th zero of the unary stream (read backwards from the bucket's end),
// found with one select-in-word, and sum to that zero's position + 1 - G. A search adds a
// whole group at a time while the group's last value stays below the target, then
// decodes the (at most G) codes of the group that reaches it.

void GolombCodedSet::prepare_queries() {
  width_inverse_ = ~uint64_t{0} / width_;
  width_shift_ = width_ > 1 && std::has_single_bit(width_) ? static_cast<unsigned>(std::countr_zero(width_)) : 0;
  const unsigned c = rem_bits_;
  // 0: not Rice (or the byte layout), no group search
  group_ = !byte_layout_ && cutoff_ == 0 && c >= 1 && c <= 56 ? std::min(8u, 56u / c) : 0;
  block_inverse_ = static_cast<uint32_t>((uint64_t{1} << 32) / (16 * m_));
  mean_bucket_bits_ = stream_bits_ / buckets_;
  bmi2_ = detail::cpu_has_fast_pdep();
  simd_ = byte_layout_ && detail::cpu_has_avx2();
  choose_query();
}

bool GolombCodedSet::use_bmi2(bool enable) noexcept {
  bmi2_ = enable && detail::cpu_has_fast_pdep();
  choose_query();
  return bmi2_;
}

bool GolombCodedSet::use_simd(bool enable) noexcept {
  simd_ = enable && byte_layout_ && detail::cpu_has_avx2();
  choose_query();
  return simd_;
}

struct GolombCodedSet::Kernel {
  // C != 0: the remainder width as a constant, for the widths whose group remainders
  // are summed by SWAR (c = 3 ..= 14, each compiled apart, so shifts, masks and the
  // group loop fold); C == 0: the other widths, read from the set, summed field by field.
  template <unsigned C>
  static unsigned rem_bits(const GolombCodedSet& s) noexcept {
    if constexpr (C != 0) return C;
    else return s.rem_bits_;
  }
  template <unsigned C>
  static unsigned group(const GolombCodedSet& s) noexcept {
    if constexpr (C != 0) return std::min(8u, 56u / C);
    else return s.group_;
  }
  static constexpr bool swar_width(unsigned c) noexcept { return c >= 3 && c <= 14; }
  // Pairs of fields into 2c-bit slots, then one multiply adds the slots into the top one:
  // exact while 2c·ceil(G/2) <= 64 and G·(2^c - 1) < 2^(2c), that is for swar_width(c).
  struct Swar {
    uint64_t even = 0, mul = 0;
    unsigned shift = 0;
    uint64_t mask = 0;
  };
  static constexpr Swar swar_constants(unsigned c) noexcept {
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
  static uint64_t remainder_sum(const GolombCodedSet& s, uint64_t y) noexcept {
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
  static bool seek_slow(const GolombCodedSet& s, Cursor at, uint64_t target) noexcept {
    const std::byte* p = s.stream_.data() + kGuardBytes;
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
  [[gnu::always_inline]] static inline bool group_has(const GolombCodedSet& s, uint64_t zeros, uint64_t y, uint64_t rpos,
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

  // One step of a search: two groups from one window. Returns 0 after passing both
  // groups (their last value is below the target), else 1 + whether `target` is coded,
  // leaving `at` at the start of the group holding the first value >= target.
  template <unsigned C, bool Bmi2>
  [[gnu::always_inline]] static inline int step(const GolombCodedSet& s, Cursor& at, uint64_t target) noexcept {
    const std::byte* p = s.stream_.data() + kGuardBytes;
    const unsigned c = rem_bits<C>(s), g = group<C>(s);
    const uint64_t gbits = uint64_t{g} * c;
    const uint64_t rpos = at.rpos, upos = at.upos, cur = at.cur;
    const uint64_t zeros = ~load_back(p, upos) & kLow57;
    const unsigned z1 = select_in_word<Bmi2>(zeros, g - 1);  // group 1's last quotient ends at bit z1
    const unsigned z2 = select_in_word<Bmi2>(zeros, 2 * g - 1);
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
  [[gnu::always_inline]] static inline bool seek(const GolombCodedSet& s, Cursor& at, uint64_t target) noexcept {
    for (;;)
      if (const int r = step<C, Bmi2>(s, at, target)) return r - 1;
  }

  // Two searches at once: their steps' dependency chains overlap.
  template <unsigned C, bool Bmi2>
  [[gnu::always_inline]] static inline void seek2(const GolombCodedSet& s, Cursor& a, uint64_t ta, Cursor& b,
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

  // One group per step (when two groups' quotients do not fit one window).
  template <unsigned C>
  static bool seek_one(const GolombCodedSet& s, Cursor& at, uint64_t target) noexcept {
    const std::byte* p = s.stream_.data() + kGuardBytes;
    const unsigned c = rem_bits<C>(s), g = group<C>(s);
    const uint64_t gbits = uint64_t{g} * c;
    uint64_t rpos = at.rpos, upos = at.upos, cur = at.cur;
    for (;;) {
      const uint64_t zeros = ~load_back(p, upos) & kLow57;
      const unsigned z = select_in_word<false>(zeros, g - 1);
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
  static constexpr unsigned kStartWindows = 8;  // 456 unary bits, ~150 codes
  static constexpr double kStartMargin = 2.0;   // tried 0.5 to 3: 1.5 to 2.5 alike
  static constexpr unsigned kStartSlots = 64;   // the target's place in its bucket, in 64ths
  static constexpr double sqrt_newton(double x) {
    double r = x > 1 ? x : 1;
    for (int i = 0; i < 40; ++i) r = 0.5 * (r + x / r);
    return x > 0 ? r : 0;
  }
  // start_table<G>[i]: the group to enter for a target in the i-th 64th of a bucket of
  // ~kRiceBucketKeys codes.
  template <unsigned G>
  static constexpr std::array<uint8_t, kStartSlots> start_table = [] {
    std::array<uint8_t, kStartSlots> t{};
    for (unsigned i = 0; i < kStartSlots; ++i) {
      const double j = static_cast<double>(i * kRiceBucketKeys) / kStartSlots;
      const double start = j - kStartMargin * sqrt_newton(j);
      t[i] = static_cast<uint8_t>(start <= 0 ? 0 : static_cast<unsigned>(start) / G);
    }
    return t;
  }();

  template <unsigned C, bool Bmi2>
  [[gnu::always_inline]] static inline bool contains(const GolombCodedSet& s, uint64_t v) noexcept {
    const uint64_t b = s.bucket_of(v);
    const uint64_t rpos0 = s.bucket_offset(b), upos0 = s.bucket_offset(b + 1), target = v - b * s.width_;
    const std::byte* p = s.stream_.data() + kGuardBytes;
    // Both ends of the bucket are read first: ask for all its lines at once.
    for (uint64_t a = rpos0 >> 3; a <= (upos0 >> 3) + 8; a += 64) detail::prefetch(p + a);
    Cursor at{rpos0, upos0, 0};
    if constexpr (C != 0) {  // the other widths search from the bucket's start
      constexpr unsigned g = std::min(8u, 56u / C);
      constexpr uint64_t gbits = uint64_t{g} * C;
      // The start group g0, and the (g0·G - 1)-th zero of the unary stream.
      const uint64_t slot = static_cast<uint64_t>((static_cast<unsigned __int128>(target * kStartSlots) * s.width_inverse_) >> 64);
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
        const unsigned z = 57 * i + select_in_word<Bmi2>(w, (k - cum) & 63);
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

  // Golomb coding: code by code.
  static bool contains_scan(const GolombCodedSet& s, uint64_t v) noexcept {
    bool found = false;
    s.scan_bucket(s.bucket_of(v), [&](uint64_t cur) {
      if (cur < v) return true;
      found = cur == v;
      return false;
    });
    return found;
  }

  // ---- byte-layout queries (Rice, c = 7) ------------------------------------------------
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
  struct Unary {
    uint64_t zeros[5];  // the first 256 bits read back from the bucket's end; zeros as ones
    uint32_t before[5];  // zeros in the words before each
    // Of the bucket at q, bits long (byte-aligned: its unary words end at its last byte).
    [[gnu::always_inline]] Unary(const uint8_t* q, uint64_t bits) noexcept {
      const std::byte* end = reinterpret_cast<const std::byte*>(q) + bits / 8;
      before[0] = 0;
#pragma GCC unroll 4  // (left a loop, it counted and branched at run time: ~10% of a lookup)
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
  [[gnu::always_inline]] static bool below(const Unary& u, uint32_t f, uint32_t w, uint32_t l, uint32_t H,
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
  [[gnu::always_inline]] static inline Window judge(const uint8_t* q, uint64_t bits, const Unary& u, unsigned k0,
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
  [[gnu::always_inline]] static bool next_window(unsigned& k0, uint64_t bits, Window way) noexcept {
    if (way == kEarlier) {
      k0 = k0 >= 3 ? k0 - 3 : 0;
      return true;
    }
    k0 += 3;
    return 16 * k0 < bits / 8;
  }
  // The first window: the block of the ~t/M-th code, and one block back.
  [[gnu::always_inline]] static unsigned first_window(const GolombCodedSet& s, uint64_t t) noexcept {
    const unsigned expected = static_cast<unsigned>((t * s.block_inverse_) >> 32);
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
  [[gnu::always_inline]] static Search search_of(const GolombCodedSet& s, uint64_t begin, uint64_t end,
                                                 uint64_t t) noexcept {
    return {reinterpret_cast<const uint8_t*>(s.stream_.data() + kGuardBytes + begin / 8), end - begin,
            static_cast<uint32_t>(t >> 7), static_cast<uint32_t>(t & 127), first_window(s, t)};
  }
  // Asks for the lines where bucket b probably lies (its superblock's offset plus the
  // mean bucket size times its place) while its index entry is read. The guess is off
  // by ~41 bytes (standard deviation, at ε = 1/256) and a bucket is ~153 bytes long:
  // five lines from 48 bytes before the guess hold the whole bucket for 93% of
  // queries (four lines from 64 before held it for 55%).
  [[gnu::always_inline]] static void prefetch_bucket(const GolombCodedSet& s, uint64_t b) noexcept {
    const uint64_t guess = (s.super_[b / kSuperblockBuckets] + (b % kSuperblockBuckets) * s.mean_bucket_bits_) / 8;
    // Separate calls, not a loop over a list of offsets: GCC put the list on the stack
    // with a vector store, and the kernel then aligned its frame (~25 instructions a
    // query).
    const std::byte* p = s.stream_.data() + kGuardBytes;
    detail::prefetch_guess(p, guess - 48);
    detail::prefetch_guess(p, guess + 16);
    detail::prefetch_guess(p, guess + 80);
    detail::prefetch_guess(p, guess + 144);
    detail::prefetch_guess(p, guess + 208);
  }

  // The masks 8 bytes at a time in 64-bit words (SWAR): CPUs without AVX2 and other
  // architectures. With 7-bit lanes nothing carries across bytes: low7 + 0x7f sets the
  // high bit exactly when low7 != 0, and (0x80 | a) - b keeps it exactly when a >= b.
  static constexpr uint64_t kHighBits = 0x8080808080808080, kLow7Bits = 0x7f7f7f7f7f7f7f7f;
  // Byte i's high bit as bit i.
  [[gnu::always_inline]] static uint32_t gather_high(uint64_t v) noexcept {
    return static_cast<uint32_t>(((v & kHighBits) * 0x0002040810204081) >> 56);
  }
  struct SwarWord {
    uint64_t flags, wraps, low;  // as high bits of bytes; the low 7 bits of each byte
  };
  [[gnu::always_inline]] static SwarWord swar_word(const uint8_t* at) noexcept {
    const uint64_t w = detail::load_le64(reinterpret_cast<const std::byte*>(at));
    const uint64_t low = w & kLow7Bits, prev = detail::load_le64(reinterpret_cast<const std::byte*>(at - 1)) & kLow7Bits;
    return {w & kHighBits, ~((low | kHighBits) - prev) & kHighBits, low};
  }
  [[gnu::always_inline]] static Masks masks_swar(const uint8_t* q, unsigned k0, uint32_t L) noexcept {
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
  [[gnu::noinline]] static bool move_window_swar(const uint8_t* q, uint64_t bits, unsigned k0, uint32_t t,
                                                 Window way) noexcept {
    const Unary u(q, bits);
    const uint32_t H = t >> 7, L = t & 127;
    while (next_window(k0, bits, way)) {
      way = judge(q, bits, u, k0, H, L, masks_swar(q, k0, L));
      if (way < kEarlier) return way == kFound;
    }
    return false;
  }
  [[gnu::always_inline]] static inline bool bytes_hold_swar(const GolombCodedSet& s, uint64_t b, uint64_t begin,
                                                            uint64_t end, uint64_t t) noexcept {
    if (end - begin > 8 * 256) [[unlikely]]
      return contains_scan(s, b * s.width_ + t);
    const Search f = search_of(s, begin, end, t);
    const Window r = judge(f.q, f.bits, Unary(f.q, f.bits), f.k0, f.H, f.L,
                           masks_swar(f.q, f.k0, f.L));
    if (r < kEarlier) [[likely]]
      return r == kFound;
    return move_window_swar(f.q, f.bits, f.k0, static_cast<uint32_t>(t), r);
  }
  static bool contains_bytes_swar(const GolombCodedSet& s, uint64_t v) noexcept {
    const uint64_t b = s.bucket_of(v);
    prefetch_bucket(s, b);
    return bytes_hold_swar(s, b, s.bucket_offset(b), s.bucket_offset(b + 1), v - b * s.width_);
  }

#if defined(__x86_64__) && defined(__GNUC__)
  // The masks with AVX2. Every function of this kernel carries the target: without
  // -march, an inlined helper without it could not use the AVX2 intrinsics. That is why
  // move_window and bytes_hold below are twins of the _swar ones (a target cannot
  // depend on a template parameter); all they share lives in the helpers above.
#define AMQ_GCS_AVX2 __attribute__((target("avx2,popcnt")))
  // Bit i set when byte i's low 7 bits are below byte i - 1's (a wrap).
  [[gnu::always_inline]] AMQ_GCS_AVX2 static inline uint32_t wraps32(const uint8_t* at, __m256i low7) noexcept {
    const __m256i x = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(at)), low7);
    const __m256i prev = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(at - 1)), low7);
    return static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpgt_epi8(prev, x)));
  }
  // kBefore[k][i]: the bits of 64-code pair i of chunks that lie before code 16·k.
  static constexpr auto kBefore = [] {
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
  [[gnu::always_inline]] AMQ_GCS_AVX2 static inline Masks masks_avx2(const uint8_t* q, unsigned k0, uint32_t L) noexcept {
    const unsigned len = 16 * k0;
    const __m256i low7 = _mm256_set1_epi8(0x7f);
    uint32_t f0 = 0, w0 = 0;  // flags and wraps of codes 0 .. len - 1
    auto flags32 = [](const uint8_t* at) AMQ_GCS_AVX2 {
      return static_cast<uint64_t>(static_cast<uint32_t>(
          _mm256_movemask_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(at)))));
    };
#pragma GCC unroll 8  // (GCC 12 kept the loop and its per-chunk branches otherwise)
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
  // arguments, not seven, none goes on the stack, and the caller's frame set-up is ~7
  // instructions shorter a query (callgrind).
  [[gnu::noinline]] AMQ_GCS_AVX2 static bool move_window(const uint8_t* q, uint64_t bits, unsigned k0, uint32_t t,
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
  [[gnu::always_inline]] AMQ_GCS_AVX2 static inline bool bytes_hold(const GolombCodedSet& s, uint64_t b, uint64_t begin,
                                                                    uint64_t end, uint64_t t) noexcept {
    if (end - begin > 8 * 256) [[unlikely]]
      return contains_scan(s, b * s.width_ + t);
    const Search f = search_of(s, begin, end, t);
    const Window r = judge(f.q, f.bits, Unary(f.q, f.bits), f.k0, f.H, f.L,
                           masks_avx2<3>(f.q, f.k0, f.L));
    if (r < kEarlier) [[likely]]
      return r == kFound;
    return move_window(f.q, f.bits, f.k0, static_cast<uint32_t>(t), r);
  }
  // W15: the default ε = 1/256, where W = 2^15 and the index entries are 16-bit: known
  // here rather than tested at each query (15 instructions a lookup).
  template <bool W15>
  AMQ_GCS_AVX2 static bool contains_bytes(const GolombCodedSet& s, uint64_t v) noexcept {
    const uint64_t b = W15 ? v >> 15 : s.bucket_of(v);
    prefetch_bucket(s, b);
    const auto offset = [&](uint64_t x) {
      return W15 ? s.super_[x / kSuperblockBuckets] + s.rel16_[x] : s.bucket_offset(x);
    };
    return bytes_hold(s, b, offset(b), offset(b + 1), W15 ? v & ((uint64_t{1} << 15) - 1) : v - b * s.width_);
  }
  // For batches, which read the index entries and prefetched the buckets themselves.
  AMQ_GCS_AVX2 static bool contains_bytes_at(const GolombCodedSet& s, uint64_t b, uint64_t begin, uint64_t end,
                                             uint64_t t) noexcept {
    return bytes_hold(s, b, begin, end, t);
  }
#undef AMQ_GCS_AVX2
#define AMQ_GCS_HAS_AVX2_KERNEL 1
#endif

  // Answers a batch in the caller's order, software-pipelined: the index entries of a
  // chunk are prefetched, then the buckets' lines, then the chunk is searched.
  template <unsigned C, bool Bmi2>
  [[gnu::always_inline]] static inline size_t many_sparse(const GolombCodedSet& s, std::span<const uint64_t> hashes,
                                                         std::span<bool> out) noexcept {
    constexpr size_t kChunk = 32;
    const std::byte* p = s.stream_.data() + kGuardBytes;
    size_t found = 0;
    uint64_t target[kChunk], bucket[kChunk];
    Cursor at[kChunk];
    for (size_t base = 0; base < hashes.size(); base += kChunk) {
      const size_t m = std::min(kChunk, hashes.size() - base);
      for (size_t i = 0; i < m; ++i) {
        const uint64_t v = reduce(hashes[base + i], s.range_);
        const uint64_t b = s.bucket_of(v);
        target[i] = v - b * s.width_;
        bucket[i] = b;
        detail::prefetch(s.wide_ ? static_cast<const void*>(&s.rel32_[b]) : static_cast<const void*>(&s.rel16_[b]));
      }
      for (size_t i = 0; i < m; ++i) {
        at[i] = {s.bucket_offset(bucket[i]), s.bucket_offset(bucket[i] + 1), 0};
        for (uint64_t a = at[i].rpos >> 3; a <= (at[i].upos >> 3) + 8; a += 64) detail::prefetch(p + a);
      }
      if (group<C>(s) != 0) {
        size_t i = 0;
        for (; i + 1 < m; i += 2) {
          bool r0, r1;
          seek2<C, Bmi2>(s, at[i], target[i], at[i + 1], target[i + 1], r0, r1);
          out[base + i] = r0;
          out[base + i + 1] = r1;
          found += r0 + r1;
        }
        if (i < m) found += out[base + i] = seek<C, Bmi2>(s, at[i], target[i]);
        continue;
      }
      // The byte layout's kernels, on the offsets read above.
#ifdef AMQ_GCS_HAS_AVX2_KERNEL
      if (s.simd_) {
        for (size_t i = 0; i < m; ++i)
          found += out[base + i] = contains_bytes_at(s, bucket[i], at[i].rpos, at[i].upos, target[i]);
        continue;
      }
#endif
      if (s.byte_layout_) {
        for (size_t i = 0; i < m; ++i)
          found += out[base + i] = bytes_hold_swar(s, bucket[i], at[i].rpos, at[i].upos, target[i]);
        continue;
      }
      // Golomb coding: code by code.
      for (size_t i = 0; i < m; ++i) found += out[base + i] = s.query_(s, bucket[i] * s.width_ + target[i]);
    }
    return found;
  }

  // A batch with several queries per bucket: sorted, then one pass over the buckets,
  // each searched once for all its queries in ascending order.
  template <unsigned C, bool Bmi2>
  [[gnu::always_inline]] static inline size_t many_sorted(const GolombCodedSet& s, std::span<const uint64_t> hashes,
                                                         std::span<bool> out) {
    struct Q {
      uint64_t v;
      size_t i;
    };
    std::vector<Q> qs(hashes.size());
    for (size_t i = 0; i < hashes.size(); ++i) qs[i] = {reduce(hashes[i], s.range_), i};
    std::sort(qs.begin(), qs.end(), [](const Q& a, const Q& b) { return a.v < b.v; });
    size_t found = 0;
    for (size_t at = 0; at < qs.size();) {
      const uint64_t b = s.bucket_of(qs[at].v);
      const uint64_t start = b * s.width_, limit = start + s.width_;
      size_t stop = at;
      while (stop < qs.size() && qs[stop].v < limit) out[qs[stop++].i] = false;
      if (group<C>(s) != 0) {
        Cursor c{s.bucket_offset(b), s.bucket_offset(b + 1), 0};
        for (; at < stop; ++at) {
          const bool hit = seek<C, Bmi2>(s, c, qs[at].v - start);
          out[qs[at].i] = hit;
          found += hit;
        }
        continue;
      }
      size_t next = at;
      s.scan_bucket(b, [&](uint64_t cur) {
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

#if defined(__x86_64__) && defined(__GNUC__)
#define AMQ_GCS_BMI2 __attribute__((target("bmi,bmi2,lzcnt,popcnt")))
#else
#define AMQ_GCS_BMI2
#endif
  // Calls f.template operator()<C>() with C = the set's remainder width when it is one
  // compiled apart (a Rice set with swar_width(c)), else C = 0 (read from the set;
  // Golomb coding too, whose searches take the per-code path).
  template <class F>
  static decltype(auto) with_width(const GolombCodedSet& s, F&& f) {
    const unsigned c = s.group_ != 0 ? s.rem_bits_ : 0;
    switch (c) {
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
  template <unsigned C>
  AMQ_GCS_BMI2 static bool contains_bmi2(const GolombCodedSet& s, uint64_t v) noexcept {
    return contains<C, true>(s, v);
  }
  template <unsigned C>
  static bool contains_portable(const GolombCodedSet& s, uint64_t v) noexcept {
    return contains<C, false>(s, v);
  }
  AMQ_GCS_BMI2 static size_t many_sparse_bmi2(const GolombCodedSet& s, std::span<const uint64_t> h, std::span<bool> out) noexcept {
    return with_width(s, [&]<unsigned C>() { return many_sparse<C, true>(s, h, out); });
  }
  static size_t many_sparse_portable(const GolombCodedSet& s, std::span<const uint64_t> h, std::span<bool> out) noexcept {
    return with_width(s, [&]<unsigned C>() { return many_sparse<C, false>(s, h, out); });
  }
  AMQ_GCS_BMI2 static size_t many_sorted_bmi2(const GolombCodedSet& s, std::span<const uint64_t> h, std::span<bool> out) {
    return with_width(s, [&]<unsigned C>() { return many_sorted<C, true>(s, h, out); });
  }
  static size_t many_sorted_portable(const GolombCodedSet& s, std::span<const uint64_t> h, std::span<bool> out) {
    return with_width(s, [&]<unsigned C>() { return many_sorted<C, false>(s, h, out); });
  }
#undef AMQ_GCS_BMI2
};

void GolombCodedSet::choose_query() noexcept {
  if (byte_layout_) {
#ifdef AMQ_GCS_HAS_AVX2_KERNEL
    query_ = !simd_                             ? &Kernel::contains_bytes_swar
             : width_shift_ == 15 && !wide_ ? &Kernel::contains_bytes<true>
                                                 : &Kernel::contains_bytes<false>;
#else
    query_ = &Kernel::contains_bytes_swar;  // (simd_ is never set here)
#endif
    return;
  }
  if (group_ == 0) {
    query_ = &Kernel::contains_scan;
    return;
  }
  query_ = Kernel::with_width(*this, [&]<unsigned C>() -> QueryFn {
    return bmi2_ ? &Kernel::contains_bmi2<C> : &Kernel::contains_portable<C>;
  });
}

size_t GolombCodedSet::contains_many_hashes(std::span<const uint64_t> hashes, std::span<bool> out) const {
  // Sorting pays when buckets share many queries; a sparser batch is answered in order,
  // its cache misses overlapped by prefetching. The two tie at about 8-16 queries a
  // bucket (docs/decisions/0034).
  if (hashes.size() >= std::max<uint64_t>(buckets_ * 8, 2))
    return bmi2_ ? Kernel::many_sorted_bmi2(*this, hashes, out) : Kernel::many_sorted_portable(*this, hashes, out);
  return bmi2_ ? Kernel::many_sparse_bmi2(*this, hashes, out) : Kernel::many_sparse_portable(*this, hashes, out);
}

std::vector<uint64_t> GolombCodedSet::decode_all() const {
  std::vector<uint64_t> out;
  out.reserve(values_);
  for (uint64_t v : *this) out.push_back(v);
  return out;
}

void GolombCodedSet::const_iterator::load_bucket() noexcept {
  const GolombCodedSet& s = *set_;
  values_.clear();
  at_ = 0;
  for (; bucket_ < s.buckets_; ++bucket_) {
    s.scan_bucket(bucket_, [&](uint64_t v) {
      values_.push_back(v);
      return true;
    });
    if (!values_.empty()) {
      value_ = values_[0];
      return;
    }
  }
  value_ = 0;
}

GolombCodedSet::const_iterator& GolombCodedSet::const_iterator::operator++() noexcept {
  if (++at_ < values_.size()) {
    value_ = values_[at_];
  } else {
    ++bucket_;
    load_bucket();
  }
  return *this;
}

GolombCodedSet::const_iterator GolombCodedSet::begin() const noexcept {
  const_iterator it;
  it.set_ = this;
  it.load_bucket();
  return it;
}

GolombCodedSet::const_iterator GolombCodedSet::end() const noexcept {
  const_iterator it;
  it.set_ = this;
  it.bucket_ = buckets_;
  return it;
}

uint64_t GolombCodedSet::size_in_bytes() const noexcept {
  return (stream_bits_ + 7) / 8 + super_.size() * 8 + (wide_ ? rel32_.size() * 4 : rel16_.size() * 2);
}

double GolombCodedSet::expected_fpp() const noexcept {
  if (values_ == 0) return 0.0;
  return -std::expm1(static_cast<double>(values_) * std::log1p(-1.0 / static_cast<double>(range_)));
}

bool GolombCodedSet::operator==(const GolombCodedSet& o) const noexcept {
  return keys_ == o.keys_ && values_ == o.values_ && m_ == o.m_ && range_ == o.range_ && divisor_ == o.divisor_ &&
         coding_ == o.coding_ && seed_ == o.seed_ && hasher_id_ == o.hasher_id_ && stream_bits_ == o.stream_bits_ &&
         stream_ == o.stream_;
}

// ---- the amq container -------------------------------------------------------------
//
// params: u32 hasher id, u8 coding, u8 offset width (16/32), u16 layout (0: split,
//         2: value bytes; 1: gap bytes, still read), u64 seed,
//         u64 keys, u64 values, u64 M, u64 range, u64 divisor, u64 bucket width,
//         u64 stream bits
// payload: stream (ceil(bits/8) bytes, zero-padded to 8), u64 superblock offsets
//          (ceil((B+1)/32)), u16/u32 relative bucket offsets (B+1), zero-padded to 8.

std::vector<std::byte> GolombCodedSet::serialize() const {
  detail::ByteWriter params;
  params.buffer().reserve(96);
  params.u32(hasher_id_);
  params.u8(static_cast<uint8_t>(coding_));
  params.u8(wide_ ? 32 : 16);
  params.u16(byte_layout_ ? 2 : 0);
  params.u64(seed_);
  params.u64(keys_);
  params.u64(values_);
  params.u64(m_);
  params.u64(range_);
  params.u64(divisor_);
  params.u64(width_);
  params.u64(stream_bits_);
  detail::ByteWriter payload;
  payload.bytes(std::span(stream_).subspan(kGuardBytes, (stream_bits_ + 7) / 8));
  payload.pad_to(8);
  for (uint64_t s : super_) payload.u64(s);
  if (wide_)
    for (uint32_t r : rel32_) payload.u32(r);
  else
    for (uint16_t r : rel16_) payload.u16(r);
  payload.pad_to(8);
  return write_container(Kind::gcs, params.buffer(), payload.buffer());
}

GolombCodedSet GolombCodedSet::load(std::span<const std::byte> file) {
  const Container c = parse_container(file, Kind::gcs);
  detail::ByteReader p(c.params, "Golomb-coded set params");
  GolombCodedSet s{Raw{}};
  s.hasher_id_ = p.u32();
  const uint8_t coding = p.u8();
  const uint8_t width_bits = p.u8();
  const uint16_t layout = p.u16();
  s.seed_ = p.u64();
  s.keys_ = p.u64();
  s.values_ = p.u64();
  s.m_ = p.u64();
  s.range_ = p.u64();
  s.divisor_ = p.u64();
  s.width_ = p.u64();
  s.stream_bits_ = p.u64();
  p.expect_end();
  auto bad = [](const std::string& what) { return Error(Errc::corrupt, "Golomb-coded set: " + what); };
  if (s.hasher_id_ == 0) throw bad("hasher id 0 names no hasher");
  if (!valid_hasher_id(s.hasher_id_))
    throw Error(Errc::unsupported, "Golomb-coded set: hasher id " + std::to_string(s.hasher_id_) +
                                       " is reserved for amq's own hashers and unknown to this version");
  if (coding > 1) throw bad("unknown coding " + std::to_string(coding));
  s.coding_ = static_cast<Coding>(coding);
  if (width_bits != 16 && width_bits != 32) throw bad("offset width " + std::to_string(width_bits) + " is not 16 or 32");
  s.wide_ = width_bits == 32;
  if (layout > 2) throw bad("unknown layout " + std::to_string(layout));
  if (s.m_ < 2 || s.m_ > kMaxRangePerKey) throw bad("range per key " + std::to_string(s.m_) + " out of 2..2^40");
  const unsigned __int128 range = static_cast<unsigned __int128>(std::max<uint64_t>(s.keys_, 1)) * s.m_;
  if (range > (static_cast<unsigned __int128>(1) << 63) || static_cast<uint64_t>(range) != s.range_)
    throw bad("range " + std::to_string(s.range_) + " is not keys x range per key");
  if (s.values_ > s.keys_) throw bad("more values than keys");
  if (s.divisor_ != divisor_for(s.m_, s.coding_)) throw bad("divisor " + std::to_string(s.divisor_) + " does not match M");
  if (s.width_ != width_for(s.m_, s.range_, s.coding_)) throw bad("bucket width does not match M");
  if (layout != 0 && !byte_layout_for(s.coding_, s.divisor_, s.m_))
    throw bad("the byte layout needs Rice coding with divisor 128 and M <= 256");
  s.byte_layout_ = layout != 0;
  s.buckets_ = (s.range_ - 1) / s.width_ + 1;
  if (s.values_ > s.stream_bits_) throw bad("more values than coded bits");
  // Sizes are checked against the real payload before anything is allocated.
  const unsigned __int128 stream_bytes = (static_cast<unsigned __int128>(s.stream_bits_) + 7) / 8;
  const unsigned __int128 entries = static_cast<unsigned __int128>(s.buckets_) + 1;
  const unsigned __int128 supers = (entries + kSuperblockBuckets - 1) / kSuperblockBuckets;
  auto pad8 = [](unsigned __int128 x) { return (x + 7) / 8 * 8; };
  const unsigned __int128 expected = pad8(stream_bytes) + supers * 8 + pad8(entries * (s.wide_ ? 4 : 2));
  if (expected != c.payload.size())
    throw Error(c.payload.size() < expected ? Errc::truncated : Errc::corrupt,
                "Golomb-coded set: payload of " + std::to_string(c.payload.size()) + " bytes, the parameters need " +
                    std::to_string(static_cast<uint64_t>(expected)));
  detail::ByteReader r(c.payload, "Golomb-coded set payload");
  const auto stream = r.bytes(static_cast<uint64_t>(stream_bytes));
  for (std::byte b : r.bytes(static_cast<uint64_t>(pad8(stream_bytes) - stream_bytes)))
    if (b != std::byte{0}) throw bad("nonzero padding after the stream");
  if (s.stream_bits_ % 8 && (static_cast<uint8_t>(stream.back()) & (0xffu >> (s.stream_bits_ % 8))))
    throw bad("nonzero padding bits after the stream");
  s.set_stream(stream);
  s.super_.resize(static_cast<size_t>(supers));
  for (uint64_t& x : s.super_) x = r.u64();
  if (s.wide_) {
    s.rel32_.resize(static_cast<size_t>(entries));
    for (uint32_t& x : s.rel32_) x = r.u32();
  } else {
    s.rel16_.resize(static_cast<size_t>(entries));
    for (uint16_t& x : s.rel16_) x = r.u16();
  }
  while (r.remaining())
    if (r.u8() != 0) throw bad("nonzero padding after the index");
  const detail::GolombCode code(s.divisor_);
  s.rem_bits_ = code.remainder_bits();
  s.cutoff_ = code.cutoff();
  s.prepare_queries();
  s.validate(layout == 1);
  if (layout == 1) s.convert_gap_bytes();
  return s;
}

// Layout 1 (written from 2026-11-21 until layout 2 replaced it) held each code's gap
// remainder where layout 2 holds its value's low 7 bits; the codes' sizes and so the
// index are the same. Rewrites the low 7 bits of every code's byte.
void GolombCodedSet::convert_gap_bytes() {
  std::byte* p = stream_.data() + kGuardBytes;
  std::vector<uint64_t> values;
  for (uint64_t b = 0; b < buckets_; ++b) {
    values.clear();
    scan_bytes<true>(b, [&](uint64_t v) {
      values.push_back(v);
      return true;
    });
    std::byte* q = p + bucket_offset(b) / 8;
    for (size_t j = 0; j < values.size(); ++j)
      q[j] = (q[j] & std::byte{0x80}) | static_cast<std::byte>((values[j] - b * width_) & 127);
  }
}

// A byte-layout bucket: byte-aligned, its codes (scan_bytes) ascending inside the
// bucket, then fewer than 8 bits left between the bytes and the unary bits, all zero.
// Returns the number of codes.
uint64_t GolombCodedSet::validate_bytes(uint64_t b, uint64_t limit, std::span<const std::byte> bytes,
                                        bool gap_bytes) const {
  auto bad = [&](const std::string& what) {
    return Error(Errc::corrupt, "Golomb-coded set: bucket " + std::to_string(b) + " " + what);
  };
  const uint64_t begin = bucket_offset(b), end = bucket_offset(b + 1);
  if (begin % 8 || end % 8) throw bad("is not byte-aligned");
  uint64_t n = 0, prev = 0;
  const char* error = nullptr;
  auto check = [&](uint64_t v) {
    if (n > 0 && v == prev) error = "repeats a value";
    else if (v >= limit) error = "has a value beyond its range";
    prev = v;
    ++n;
    return error == nullptr;
  };
  const uint64_t left = gap_bytes ? scan_bytes<true>(b, check) : scan_bytes(b, check);
  if (error) throw bad(error);
  if (left >= 8) throw bad("has a unary code running into its bytes");
  for (uint64_t t = begin + 8 * n; t < begin + 8 * n + left; ++t)
    if ((static_cast<uint8_t>(bytes[t >> 3]) >> (7 - (t & 7))) & 1)
      throw bad("has nonzero bits between its bytes and its unary codes");
  return n;
}

// Every bucket offset in order and inside the stream, every bucket decoding to exactly
// its bits with ascending values inside the bucket, and the value count right.
void GolombCodedSet::validate(bool gap_bytes) const {
  auto bad = [](const std::string& what) { return Error(Errc::corrupt, "Golomb-coded set: " + what); };
  for (uint64_t j = 0; j < super_.size(); ++j)
    if ((wide_ ? rel32_[j * kSuperblockBuckets] : rel16_[j * kSuperblockBuckets]) != 0)
      throw bad("superblock " + std::to_string(j) + " does not start at its first bucket");
  if (bucket_offset(0) != 0) throw bad("the first bucket does not start at bit 0");
  if (bucket_offset(buckets_) != stream_bits_) throw bad("the last bucket does not end at the stream's end");
  const detail::GolombCode code(divisor_);
  const std::span<const std::byte> bytes(stream_.data() + kGuardBytes, (stream_bits_ + 7) / 8);
  uint64_t count = 0;
  for (uint64_t b = 0; b < buckets_; ++b) {
    const uint64_t begin = bucket_offset(b), end = bucket_offset(b + 1);
    if (end < begin || end > stream_bits_) throw bad("bucket " + std::to_string(b) + " has offsets out of order");
    uint64_t cur = b * width_;
    const uint64_t limit = b + 1 == buckets_ ? range_ : (b + 1) * width_;
    if (byte_layout_) {
      count += validate_bytes(b, limit, bytes, gap_bytes);
      if (count > values_) throw bad("more coded values than announced");
      continue;
    }
    bool first = true;
    uint64_t rpos = begin, upos = end;
    auto bit = [&](uint64_t t) { return (static_cast<uint8_t>(bytes[t >> 3]) >> (7 - (t & 7))) & 1; };
    while (rpos < upos) {
      uint64_t d;
      try {
        uint64_t q = 0;
        while (upos > rpos && bit(upos - 1)) {
          --upos;
          ++q;
        }
        if (upos == rpos) throw Error(Errc::truncated, "a unary quotient runs into the remainders");
        --upos;  // its 0
        detail::BitReader rd(bytes, rpos, upos);
        const uint64_t r = code.decode_remainder(rd);
        rpos = rd.position();
        if (q > (UINT64_MAX - r) / divisor_) throw Error(Errc::corrupt, "a value beyond 64 bits");
        d = q * divisor_ + r;
      } catch (const Error& e) {
        throw bad("bucket " + std::to_string(b) + ": " + e.what());
      }
      if (!first && d == 0) throw bad("bucket " + std::to_string(b) + " repeats a value");
      if (d >= limit - cur) throw bad("bucket " + std::to_string(b) + " has a value beyond its range");
      cur += d;
      first = false;
      if (++count > values_) throw bad("more coded values than announced");
    }
  }
  if (count != values_)
    throw bad(std::to_string(count) + " coded values, " + std::to_string(values_) + " announced");
}

}  // namespace amq
