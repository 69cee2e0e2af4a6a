// amq/detail/rank_select.hpp — bit vectors with rank and select directories that can
// live in a memory-mapped file.
//
//  * BitVector: an owning, append-only bit vector (the builder side).
//  * RankSelect<L0Shift>: a read-only view over a bit vector's 64-bit words and its
//    directories, laid out poppy-style (Zhou, Andersen, Kaminsky, "Space-efficient,
//    high-performance rank & select structures", SEA 2013):
//      l0    one uint64 per 2^L0Shift bits: the ones before that chunk (64-bit
//            positions, so bit vectors beyond 2^32 bits work);
//      l12   one uint64 per 2048-bit superblock (plus a sentinel): bits 0..31 the
//            ones before the superblock counted from its l0 chunk, bits 32..61 the
//            popcounts of its first three 512-bit basic blocks (10 bits each);
//      sel   one uint64 per 512 ones: the position of one number 512*i.
//    That is 64 bits per 2048 (3.1%) for rank, plus 64 bits per 512 ones where
//    select is wanted (3.1% of a half-full bit vector such as a LOUDS bitmap).
//    rank1 is one directory word and the popcounts of its basic block's words before
//    it (with AVX2: a nibble-table count of the block's two halves, masked, and one
//    popcount; else eight masked popcounts). select1 starts at the
//    sample before the wanted one and counts words forward, which is about one cache
//    line where ones are not rare; where the samples lie far apart it narrows down
//    through the superblock and basic-block counts instead.
//  * SelectBits<SampleShift, Compact>: a view with a select directory only, dense
//    enough that select1 is a sample load and a word or two of popcounts (see below).
//  * build_directory() computes the directories; verify_directory() recomputes them
//    against stored ones without allocating, so a loader can trust a view.
//
// L0Shift is 32 in every file; tests instantiate small values to reach the l0 code.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "amq/detail/cpu.hpp"
#include "amq/detail/select_in_word.hpp"
#include "amq/error.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace amq::detail {

// The "Hw" template parameters below mean: the popcnt and BMI2 instructions may be used
// (by default only when the whole build targets them; the succinct set dispatches at
// run time on cpu_has_fast_pdep(), amq/detail/cpu.hpp).
#if defined(__POPCNT__) && defined(__BMI2__)
inline constexpr bool kHwPopcount = true;
#else
inline constexpr bool kHwPopcount = false;
#endif

// Hw: the popcnt instruction (callers compiled for it, e.g. inside a function with
// __attribute__((target("popcnt")))); otherwise a broadword count.
template <bool Hw = kHwPopcount>
[[gnu::always_inline]] inline int popcount64(uint64_t x) noexcept {
  if constexpr (Hw) {
    return __builtin_popcountll(x);
  } else {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return static_cast<int>((x * 0x0101010101010101ULL) >> 56);
  }
}

// The choice at the end of a six-word select window (SelectBits::select_after): with
// c[k] the ones in words 0..k of the window, x its first word (masked) and p the
// window's words, the word y holding one number rem, the word z after it, the ones
// before y and y's index. Each step is one compare and three conditional moves from
// memory (the words were just counted) and an add of the borrow, all in one asm block:
// which word holds the one is data, so these must not become branches (GCC made two
// of the three choices branches, mispredicted about half the time), and a compare and
// conditional move per value (four compares a step, the step number in a register,
// the words and counts held in registers and partly spilled) took ~25 more
// instructions a select.
struct WindowPick {
  uint64_t y, z, before, at;
};
[[gnu::always_inline]] inline WindowPick window_pick(const uint64_t* p, uint64_t x, const uint64_t* c,
                                                     uint64_t rem) noexcept {
  uint64_t y = x, z = p[1], before = 0, at = 0;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define AMQ_WINDOW_STEP(k, d1, d2)       \
  "cmpq %[c" #k "], %[rem]\n\t"         \
  "cmovaeq " #d1 "(%[p]), %[y]\n\t"     \
  "cmovaeq " #d2 "(%[p]), %[z]\n\t"     \
  "cmovaeq %[c" #k "], %[before]\n\t"   \
  "sbbq $-1, %[at]\n\t" /* at + 1 - borrow = at + (c <= rem) */
  asm(AMQ_WINDOW_STEP(0, 8, 16) AMQ_WINDOW_STEP(1, 16, 24) AMQ_WINDOW_STEP(2, 24, 32)
          AMQ_WINDOW_STEP(3, 32, 40) AMQ_WINDOW_STEP(4, 40, 48)
      : [y] "+r"(y), [z] "+r"(z), [before] "+r"(before), [at] "+r"(at)
      : [p] "r"(p), [c0] "r"(c[0]), [c1] "r"(c[1]), [c2] "r"(c[2]), [c3] "r"(c[3]), [c4] "r"(c[4]),
        [rem] "r"(rem), "m"(*reinterpret_cast<const uint64_t(*)[7]>(p))
      : "cc");
#undef AMQ_WINDOW_STEP
#else
  for (int k = 0; k < 5; ++k) {
    const bool past = c[k] <= rem;
    y = past ? p[k + 1] : y;
    z = past ? p[k + 2] : z;
    before = past ? c[k] : before;
    at += past;
  }
#endif
  return {y, z, before, at};
}

// A select window's choice (WindowPick) and the count of all its six words.
struct WindowCount {
  uint64_t y, z, before, at, total;
};

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// window_pick with the counts taken inside the asm block, for callers compiled with
// popcnt: each step adds one word's popcount (read from memory) to a running count and
// then makes the same choice, so the five counts never occupy registers at once (with
// them held for window_pick, the succinct set's descent had more live values than
// registers and spilled its own state, `this` included, to the stack every level).
[[gnu::always_inline]] inline WindowCount window_count_popcnt(const uint64_t* p, uint64_t x, uint64_t rem) noexcept {
  uint64_t y = x, z = p[1], before = 0, at = 0, acc, t;
#define AMQ_WINDOW_COUNT_STEP(d1, d2)    \
  "cmpq %[acc], %[rem]\n\t"             \
  "cmovaeq " #d1 "(%[p]), %[y]\n\t"     \
  "cmovaeq " #d2 "(%[p]), %[z]\n\t"     \
  "cmovaeq %[acc], %[before]\n\t"       \
  "sbbq $-1, %[at]\n\t"                 \
  "popcntq " #d1 "(%[p]), %[t]\n\t"     \
  "addq %[t], %[acc]\n\t"
  asm("popcntq %[y], %[acc]\n\t" AMQ_WINDOW_COUNT_STEP(8, 16) AMQ_WINDOW_COUNT_STEP(16, 24)
          AMQ_WINDOW_COUNT_STEP(24, 32) AMQ_WINDOW_COUNT_STEP(32, 40) AMQ_WINDOW_COUNT_STEP(40, 48)
      : [y] "+r"(y), [z] "+r"(z), [before] "+r"(before), [at] "+r"(at), [acc] "=&r"(acc), [t] "=&r"(t)
      : [p] "r"(p), [rem] "r"(rem), "m"(*reinterpret_cast<const uint64_t(*)[7]>(p))
      : "cc");
#undef AMQ_WINDOW_COUNT_STEP
  return {y, z, before, at, acc};
}
#endif

// The position of the (rem+1)-th one at or after bit p of words[0, nw): counts eight
// words at a time, the word holding the one being the number of running sums <= rem
// (no branch per word), then finishes word by word. The one must exist.
template <bool Hw = false>
[[gnu::always_inline]] inline uint64_t select_forward(const uint64_t* words, uint64_t nw, uint64_t p,
                                                      uint64_t rem) noexcept {
  uint64_t w = p >> 6;
  uint64_t first = words[w] & (~uint64_t{0} << (p & 63));
  while (w + 8 <= nw) {
    uint64_t sum[8];
    uint64_t acc = 0, at = 0;
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      acc += static_cast<uint64_t>(popcount64<Hw>(k == 0 ? first : words[w + k]));
      sum[k] = acc;
      at += acc <= rem;
    }
    if (at < 8) {
      const uint64_t x = at == 0 ? first : words[w + at];
      const uint64_t before = at == 0 ? 0 : sum[at - 1];
      return ((w + at) << 6) + static_cast<uint64_t>(select_in_word<Hw>(x, static_cast<int>(rem - before)));
    }
    rem -= acc;
    w += 8;
    first = w < nw ? words[w] : 0;
  }
  uint64_t x = first;
  for (;;) {
    const uint64_t c = static_cast<uint64_t>(popcount64<Hw>(x));
    if (rem < c) break;
    rem -= c;
    x = words[++w];
  }
  return (w << 6) + static_cast<uint64_t>(select_in_word<Hw>(x, static_cast<int>(rem)));
}

class BitVector {
 public:
  void push_back(bool bit) {
    if ((size_ & 63) == 0) words_.push_back(0);
    if (bit) words_.back() |= uint64_t{1} << (size_ & 63);
    ++size_;
  }
  bool operator[](uint64_t i) const noexcept { return (words_[i >> 6] >> (i & 63)) & 1; }
  uint64_t size() const noexcept { return size_; }
  const std::vector<uint64_t>& words() const noexcept { return words_; }
  uint64_t count_ones() const noexcept {
    uint64_t n = 0;
    for (uint64_t w : words_) n += static_cast<uint64_t>(popcount64(w));
    return n;
  }
  std::string to_string() const {
    std::string s;
    for (uint64_t i = 0; i < size_; ++i) s += (*this)[i] ? '1' : '0';
    return s;
  }

 private:
  std::vector<uint64_t> words_;
  uint64_t size_ = 0;
};

struct DirectoryShape {
  uint64_t words = 0;  // bit vector words
  uint64_t l12 = 0;    // superblock entries, sentinel included
  uint64_t l0 = 0;     // chunk entries
  uint64_t sel = 0;    // select samples (0 when select is not wanted)
  uint64_t directory_words() const noexcept { return l12 + l0 + sel; }
};

template <int L0Shift = 32>
class RankSelect {
  static_assert(L0Shift >= 11 && L0Shift <= 32, "an l0 chunk holds whole superblocks and < 2^32 ones");

 public:
  static constexpr int kSuperShift = 11;  // 2048-bit superblocks
  static constexpr int kSelShift = 9;     // a sample every 512 ones
  static constexpr uint64_t kScanBits = 2048;  // count words up to this far from a sample

  // Sizes, in 64-bit words, of a bit vector of `bits` bits with `ones` ones.
  static DirectoryShape shape(uint64_t bits, uint64_t ones, bool with_select) noexcept {
    DirectoryShape s;
    s.words = (bits + 63) / 64;
    s.l12 = (bits >> kSuperShift) + 1;
    s.l0 = (bits >> L0Shift) + 1;
    s.sel = with_select ? (ones + (uint64_t{1} << kSelShift) - 1) >> kSelShift : 0;
    return s;
  }

  // The directories (l12, then l0, then sel) of `words` holding `bits` bits.
  static std::vector<uint64_t> build_directory(std::span<const uint64_t> words, uint64_t bits, bool with_select) {
    uint64_t ones = 0;
    for (uint64_t w : words) ones += static_cast<uint64_t>(popcount64(w));
    const DirectoryShape s = shape(bits, ones, with_select);
    std::vector<uint64_t> out(s.directory_words());
    uint64_t at = 0;
    walk(words, bits, with_select, [&](uint64_t v) {
      out[at++] = v;
      return true;
    });
    return out;
  }

  // True if `dir` is exactly what build_directory would produce, and the bits past
  // `bits` in the last word are zero.
  static bool verify_directory(std::span<const uint64_t> words, uint64_t bits, std::span<const uint64_t> dir,
                               bool with_select) noexcept {
    if (words.size() != (bits + 63) / 64) return false;
    if ((bits & 63) && (words.back() >> (bits & 63)) != 0) return false;
    uint64_t at = 0;
    bool ok = walk(words, bits, with_select, [&](uint64_t v) {
      if (at >= dir.size() || dir[at] != v) return false;
      ++at;
      return true;
    });
    return ok && at == dir.size();
  }

  RankSelect() = default;
  // A view; `dir` must have passed verify_directory for these words.
  RankSelect(std::span<const uint64_t> words, uint64_t bits, std::span<const uint64_t> dir, bool with_select) noexcept
      : words_(words.data()), bits_(bits), nw_(words.size()) {
    const DirectoryShape s0 = shape(bits, 0, false);
    l12_ = dir.data();
    l0_ = dir.data() + s0.l12;
    nsb_ = s0.l12 - 1;
    ones_ = rank1(bits);
    if (with_select) {
      sel_ = l0_ + s0.l0;
      nsel_ = shape(bits, ones_, true).sel;
    }
  }

  uint64_t size() const noexcept { return bits_; }
  uint64_t ones() const noexcept { return ones_; }
  const uint64_t* words() const noexcept { return words_; }

  bool get(uint64_t i) const noexcept { return (words_[i >> 6] >> (i & 63)) & 1; }

  // Ones in [0, i), for i <= size().
  template <bool Hw = kHwPopcount>
  [[gnu::always_inline]] uint64_t rank1(uint64_t i) const noexcept {
    const uint64_t sb = i >> kSuperShift;
    const uint64_t e = l12_[sb];
    uint64_t r = l0_[i >> L0Shift] + static_cast<uint32_t>(e);
    const uint64_t bb = (i >> 9) & 3;
    if (bb >= 1) r += (e >> 32) & 1023;
    if (bb >= 2) r += (e >> 42) & 1023;
    if (bb >= 3) r += (e >> 52) & 1023;
    // The words of i's basic block before i (word off of the block holds i), without a
    // data-dependent loop.
    const uint64_t base = (i >> 9) << 3, off = (i >> 6) & 7;
    const uint64_t part = (uint64_t{1} << (i & 63)) - 1;
#if defined(__AVX2__)
    if (base + 8 <= nw_) [[likely]] {
      // The block's words before word off in two 256-bit halves, counted a nibble at a
      // time through a table (AVX2 has no popcount), then word off's bits below i:
      // ~20 instructions against ~55 for the eight masked popcounts.
      const __m256i lut = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1,
                                           2, 2, 3, 2, 3, 3, 4);
      const __m256i nib = _mm256_set1_epi8(0x0f);
      const __m256i o = _mm256_set1_epi64x(static_cast<long long>(off));
      const __m256i lo = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(words_ + base)),
                                          _mm256_cmpgt_epi64(o, _mm256_setr_epi64x(0, 1, 2, 3)));
      const __m256i hi = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(words_ + base + 4)),
                                          _mm256_cmpgt_epi64(o, _mm256_setr_epi64x(4, 5, 6, 7)));
      auto count = [&](__m256i x) {
        return _mm256_add_epi8(_mm256_shuffle_epi8(lut, _mm256_and_si256(x, nib)),
                               _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(x, 4), nib)));
      };
      const __m256i sums = _mm256_sad_epu8(_mm256_add_epi8(count(lo), count(hi)), _mm256_setzero_si256());
      const __m128i s2 = _mm_add_epi64(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1));
      r += static_cast<uint64_t>(_mm_cvtsi128_si64(s2)) + static_cast<uint64_t>(_mm_extract_epi64(s2, 1));
      return r + static_cast<uint64_t>(popcount64<Hw>(words_[base + off] & part));
    }
#endif
    // Eight masked popcounts (indexes clamped to the last word, masked to nothing there).
    if (nw_ == 0) return r;
    const uint64_t last = nw_ - 1;
#pragma GCC unroll 8
    for (uint64_t k = 0; k < 8; ++k) {
      const uint64_t mask = k < off ? ~uint64_t{0} : (k == off ? part : 0);
      const uint64_t w = base + k < last ? base + k : last;
      r += static_cast<uint64_t>(popcount64<Hw>(words_[w] & mask));
    }
    return r;
  }
  uint64_t rank0(uint64_t i) const noexcept { return i - rank1<>(i); }

  // Ones in [x, y), for x <= y <= size(): where y is within 64 bits of x, a popcount of
  // the (at most two) words that hold them, without the directory.
  template <bool Hw = kHwPopcount>
  [[gnu::always_inline]] uint64_t rank1_between(uint64_t x, uint64_t y) const noexcept {
    const uint64_t n = y - x;
    if (n > 64) return rank1<Hw>(y) - rank1<Hw>(x);
    if (n == 0) return 0;
    const uint64_t w = x >> 6, s = x & 63;
    uint64_t b = words_[w] >> s;
    if (s + n > 64) b |= words_[w + 1] << (64 - s);  // the range runs into the next word
    if (n < 64) b &= (uint64_t{1} << n) - 1;
    return static_cast<uint64_t>(popcount64<Hw>(b));
  }

  // The position of the j-th one (0-based), for j < ones(). Needs with_select.
  template <bool Hw = kHwPopcount>
  [[gnu::always_inline]] uint64_t select1(uint64_t j) const noexcept {
    const uint64_t s = j >> kSelShift;
    const uint64_t p = sel_[s];
    uint64_t rem = j & ((uint64_t{1} << kSelShift) - 1);
    const uint64_t limit = s + 1 < nsel_ ? sel_[s + 1] : bits_;
    if (limit - p <= kScanBits) {
      // Count forward from the sample (select_forward: eight words at a time).
      return select_forward<Hw>(words_, nw_, p, rem);
    }
    // Far apart: the last superblock in [p's, limit's] whose earlier ones are <= j.
    uint64_t lo = p >> kSuperShift, hi = (limit >> kSuperShift) + 1;
    if (hi > nsb_ + 1) hi = nsb_ + 1;
    while (hi - lo > 8) {
      const uint64_t mid = lo + (hi - lo) / 2;
      if (cum(mid) <= j) lo = mid;
      else hi = mid;
    }
    while (lo + 1 < hi && cum(lo + 1) <= j) ++lo;
    rem = j - cum(lo);
    const uint64_t e = l12_[lo];
    uint64_t w = lo << (kSuperShift - 6);
    for (int b = 0; b < 3; ++b) {
      const uint64_t c = (e >> (32 + 10 * b)) & 1023;
      if (rem < c) break;
      rem -= c;
      w += 8;
    }
    for (;;) {
      const uint64_t c = static_cast<uint64_t>(popcount64<Hw>(words_[w]));
      if (rem < c) break;
      rem -= c;
      ++w;
    }
    return (w << 6) + static_cast<uint64_t>(select_in_word<Hw>(words_[w], static_cast<int>(rem)));
  }

  // The first position >= i holding a one; size() if none.
  uint64_t next_one(uint64_t i) const noexcept {
    if (i >= bits_) return bits_;
    uint64_t w = i >> 6;
    uint64_t x = words_[w] & (~uint64_t{0} << (i & 63));
    const uint64_t nw = (bits_ + 63) >> 6;
    while (x == 0) {
      if (++w == nw) return bits_;
      x = words_[w];
    }
    return (w << 6) + static_cast<uint64_t>(__builtin_ctzll(x));
  }

 private:
  uint64_t cum(uint64_t sb) const noexcept {
    return l0_[sb >> (L0Shift - kSuperShift)] + static_cast<uint32_t>(l12_[sb]);
  }

  // Emits the directory words in file order (l12, l0, sel); stops when emit is false.
  template <class Emit>
  static bool walk(std::span<const uint64_t> words, uint64_t bits, bool with_select, Emit&& emit) {
    const uint64_t nsb = bits >> kSuperShift;  // full superblocks; entry nsb is the sentinel
    const uint64_t nw = words.size();
    constexpr uint64_t kWordsPerSb = uint64_t{1} << (kSuperShift - 6);
    constexpr uint64_t kSbPerChunk = uint64_t{1} << (L0Shift - kSuperShift);
    // l12
    uint64_t total = 0, chunk_base = 0;
    for (uint64_t sb = 0; sb <= nsb; ++sb) {
      if (sb % kSbPerChunk == 0) chunk_base = total;
      uint64_t e = total - chunk_base;
      for (uint64_t b = 0; b < 4; ++b) {
        uint64_t c = 0;
        for (uint64_t w = sb * kWordsPerSb + b * 8; w < sb * kWordsPerSb + b * 8 + 8 && w < nw; ++w)
          c += static_cast<uint64_t>(popcount64(words[w]));
        if (b < 3) e |= c << (32 + 10 * b);
        total += c;
      }
      if (!emit(e)) return false;
    }
    // l0
    uint64_t ones = total;
    total = 0;
    for (uint64_t c = 0; c <= (bits >> L0Shift); ++c) {
      if (!emit(total)) return false;
      const uint64_t first = c << (L0Shift - 6), end = std::min<uint64_t>(nw, (c + 1) << (L0Shift - 6));
      for (uint64_t w = first; w < end; ++w) total += static_cast<uint64_t>(popcount64(words[w]));
    }
    if (!with_select) return true;
    // sel: the position of one number k * 512
    uint64_t seen = 0, next = 0;
    for (uint64_t w = 0; w < nw && next < ones; ++w) {
      const uint64_t x = words[w];
      const uint64_t c = static_cast<uint64_t>(popcount64(x));
      while (next < ones && next < seen + c) {
        if (!emit((w << 6) + static_cast<uint64_t>(select_in_word(x, static_cast<int>(next - seen))))) return false;
        next += uint64_t{1} << kSelShift;
      }
      seen += c;
    }
    return true;
  }

  const uint64_t* words_ = nullptr;
  uint64_t bits_ = 0;
  uint64_t nw_ = 0;
  const uint64_t* l12_ = nullptr;
  const uint64_t* l0_ = nullptr;
  const uint64_t* sel_ = nullptr;
  uint64_t nsb_ = 0;  // index of the sentinel superblock entry
  uint64_t nsel_ = 0;
  uint64_t ones_ = 0;
};


// SelectBits<SampleShift, Compact>: a read-only bit vector with a select directory
// only (no rank): the position of every 2^SampleShift-th one. Compact samples are
// 32-bit offsets from a 64-bit base kept for every 1024 samples (positions stay
// 64-bit; a build whose offsets do not fit is refused, which cannot happen where no
// run of zeros is long, e.g. a LOUDS bitmap: at most 256 zeros per one); otherwise
// each sample is a 64-bit position. select1 starts at the sample and counts words
// forward, so dense samples (every 64 ones) make it one or two words.
//
// Directory layout (64-bit words): Compact: ceil(samples / 1024) bases, then the
// 32-bit offsets two per word (low half first), the last word zero-padded;
// otherwise: one word per sample.
template <int SampleShift, bool Compact>
class SelectBits {
  static_assert(SampleShift >= 0 && SampleShift <= 16);

 public:
  static constexpr uint64_t kGroupShift = 10;  // samples per base: 1024
  static constexpr int kSampleShift = SampleShift;
  static constexpr int kWindow = 6;  // select1_from counts this many words without branching

  static uint64_t samples(uint64_t ones) noexcept { return (ones + (uint64_t{1} << SampleShift) - 1) >> SampleShift; }
  static uint64_t directory_words(uint64_t ones) noexcept {
    const uint64_t n = samples(ones);
    if constexpr (Compact) return ((n + (uint64_t{1} << kGroupShift) - 1) >> kGroupShift) + (n + 1) / 2;
    return n;
  }

  // The directory of `words` holding `bits` bits. Throws Errc::invalid_argument if a
  // compact offset does not fit in 32 bits.
  static std::vector<uint64_t> build_directory(std::span<const uint64_t> words, uint64_t bits) {
    uint64_t ones = 0;
    for (uint64_t w : words) ones += static_cast<uint64_t>(popcount64(w));
    std::vector<uint64_t> out(directory_words(ones));
    uint64_t at = 0;
    if (!walk(words, bits, [&](uint64_t v) {
          out[at++] = v;
          return true;
        }))
      throw Error(Errc::invalid_argument, "select directory: a run of zeros too long for 32-bit offsets");
    return out;
  }

  // True if `dir` is exactly what build_directory would produce (and bits past `bits`
  // in the last word are zero).
  static bool verify_directory(std::span<const uint64_t> words, uint64_t bits, std::span<const uint64_t> dir) noexcept {
    if (words.size() != (bits + 63) / 64) return false;
    if ((bits & 63) && (words.back() >> (bits & 63)) != 0) return false;
    uint64_t at = 0;
    const bool ok = walk(words, bits, [&](uint64_t v) {
      if (at >= dir.size() || dir[at] != v) return false;
      ++at;
      return true;
    });
    return ok && at == dir.size();
  }

  SelectBits() = default;
  // A view; `dir` must have passed verify_directory for these words.
  SelectBits(std::span<const uint64_t> words, uint64_t bits, std::span<const uint64_t> dir) noexcept
      : words_(words.data()), bits_(bits), nw_(words.size()) {
    for (uint64_t w : words) ones_ += static_cast<uint64_t>(popcount64(w));
    const uint64_t n = samples(ones_);
    dir_ = dir.data();
    if constexpr (Compact) off_ = reinterpret_cast<const unsigned char*>(dir.data() + ((n + 1023) >> kGroupShift));
  }

  uint64_t size() const noexcept { return bits_; }
  uint64_t ones() const noexcept { return ones_; }
  const uint64_t* words() const noexcept { return words_; }
  bool get(uint64_t i) const noexcept { return (words_[i >> 6] >> (i & 63)) & 1; }

  // The position of the j-th one (0-based), for j < ones().
  template <bool Hw = kHwPopcount>
  [[gnu::always_inline]] uint64_t select1(uint64_t j) const noexcept {
    return select1_from<Hw>(sample(j), j);
  }

  // The position of one number j rounded down to a multiple of 2^SampleShift: where
  // select1(j) starts counting (for callers that prefetch what comes after it).
  [[gnu::always_inline]] uint64_t sample(uint64_t j) const noexcept {
    const uint64_t i = j >> SampleShift;
    if constexpr (Compact) {
      uint32_t o;
      std::memcpy(&o, off_ + 4 * i, 4);
      return dir_[i >> kGroupShift] + o;
    } else {
      return dir_[i];
    }
  }

  // select1(j), given p = sample(j).
  template <bool Hw = kHwPopcount>
  [[gnu::always_inline]] uint64_t select1_from(uint64_t p, uint64_t j) const noexcept {
    uint64_t after;
    return select1_from<Hw>(p, j, after);
  }
  // The same, and `after` = the bits after the answer (shifted down to bit 0), at
  // least to the end of its word and usually the next 64: the caller's
  // next_one(answer + 1) is answer + 1 + ctz(after) when after != 0.
  template <bool Hw = kHwPopcount>
  [[gnu::always_inline]] uint64_t select1_from(uint64_t p, uint64_t j, uint64_t& after) const noexcept {
    return select_after<Hw>(p, j & ((uint64_t{1} << SampleShift) - 1), after);
  }
  // The position of the (rem+1)-th one at or after position p (which holds a one, such
  // as a sample's), with `after` as in select1_from.
  template <bool Hw = kHwPopcount>
  [[gnu::always_inline]] uint64_t select_after(uint64_t p, uint64_t rem, uint64_t& after) const noexcept {
    uint64_t w = p >> 6;
    uint64_t x = words_[w] & (~uint64_t{0} << (p & 63));
    if (w + kWindow + 1 <= nw_) {
      // The first kWindow words without a branch per word: the word holding the one
      // is the number of running counts <= rem (the usual case where ones are dense:
      // a LOUDS bitmap's 128 ones span about four words, six cover nearly every
      // select). The word after is read too, so `after` spans 64 bits.
      const WindowCount r = window<Hw>(w, x, rem);
      if (rem < r.total) [[likely]] {
        const int b = select_in_word<Hw>(r.y, static_cast<int>(rem - r.before));
        after = ((r.y >> b) >> 1) | (r.z << (63 - b));
        return ((w + r.at) << 6) + static_cast<uint64_t>(b);
      }
      // The one lies further: eight words at a time from there, as samples may lie
      // far apart (a select directory over long runs of zeros).
      const uint64_t at = select_forward<Hw>(words_, nw_, (w + kWindow) << 6, rem - r.total);
      after = (words_[at >> 6] >> (at & 63)) >> 1;
      return at;
    }
    for (;;) {
      const uint64_t c = static_cast<uint64_t>(popcount64<Hw>(x));
      if (rem < c) break;
      rem -= c;
      x = words_[++w];
    }
    const int b = select_in_word<Hw>(x, static_cast<int>(rem));
    after = (x >> b) >> 1;
    return (w << 6) + static_cast<uint64_t>(b);
  }

  // select1(j) where samples lie many words apart: counts eight words at a time,
  // finding the word that holds the one without a branch per word.
  template <bool Hw = kHwPopcount>
  [[gnu::always_inline]] uint64_t select1_wide(uint64_t j) const noexcept {
    return select_forward<Hw>(words_, nw_, sample(j), j & ((uint64_t{1} << SampleShift) - 1));
  }

  // The first position >= i holding a one; size() if none.
  uint64_t next_one(uint64_t i) const noexcept {
    if (i >= bits_) return bits_;
    uint64_t w = i >> 6;
    uint64_t x = words_[w] & (~uint64_t{0} << (i & 63));
    while (x == 0) {
      if (++w == nw_) return bits_;
      x = words_[w];
    }
    return (w << 6) + static_cast<uint64_t>(__builtin_ctzll(x));
  }

 private:
  // The kWindow words from word w (x: the first, masked to the search's start): which
  // holds one number rem, and their count. With popcnt the counts are taken inside the
  // choice's asm block (window_count_popcnt); else counted first (window_pick).
  template <bool Hw>
  [[gnu::always_inline]] WindowCount window(uint64_t w, uint64_t x, uint64_t rem) const noexcept {
    static_assert(kWindow == 6, "the window's choice has five steps");
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if constexpr (Hw) return window_count_popcnt(words_ + w, x, rem);
#endif
    uint64_t c[kWindow];
    c[0] = static_cast<uint64_t>(popcount64<Hw>(x));
#pragma GCC unroll 8
    for (int k = 1; k < kWindow; ++k)
      c[k] = c[k - 1] + static_cast<uint64_t>(popcount64<Hw>(words_[w + static_cast<uint64_t>(k)]));
    const WindowPick r = window_pick(words_ + w, x, c, rem);
    return {r.y, r.z, r.before, r.at, c[kWindow - 1]};
  }

  // Emits the directory words in file order; false if emit refused or an offset overflowed.
  template <class Emit>
  static bool walk(std::span<const uint64_t> words, uint64_t bits, Emit&& emit) {
    (void)bits;
    uint64_t seen = 0, next = 0, pending = 0;
    int half = 0;
    auto emit_offset = [&](uint64_t base, uint64_t p) {
      if (p - base > 0xffffffffULL) return false;
      pending |= (p - base) << (32 * half);
      if (++half == 2) {
        half = 0;
        const uint64_t v = pending;
        pending = 0;
        return emit(v);
      }
      return true;
    };
    // Compact: bases first (one pass), then offsets (a second pass).
    for (int pass = 0; pass < (Compact ? 2 : 1); ++pass) {
      seen = 0;
      next = 0;
      uint64_t base = 0, count = 0;
      for (uint64_t w = 0; w < words.size(); ++w) {
        const uint64_t x = words[w];
        const uint64_t c = static_cast<uint64_t>(popcount64(x));
        while (next < seen + c) {
          const uint64_t p = (w << 6) + static_cast<uint64_t>(select_in_word(x, static_cast<int>(next - seen)));
          if constexpr (Compact) {
            if ((count & ((uint64_t{1} << kGroupShift) - 1)) == 0) {
              base = p;
              if (pass == 0 && !emit(p)) return false;
            }
            if (pass == 1 && !emit_offset(base, p)) return false;
          } else {
            if (!emit(p)) return false;
          }
          ++count;
          next += uint64_t{1} << SampleShift;
        }
        seen += c;
      }
    }
    if (Compact && half == 1 && !emit(pending)) return false;
    return true;
  }

  const uint64_t* words_ = nullptr;
  uint64_t bits_ = 0;
  uint64_t nw_ = 0;
  uint64_t ones_ = 0;
  const uint64_t* dir_ = nullptr;
  const unsigned char* off_ = nullptr;
};

}  // namespace amq::detail
