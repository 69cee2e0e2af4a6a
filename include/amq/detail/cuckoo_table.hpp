// amq/detail/cuckoo_table.hpp — the bucketed fingerprint table behind CuckooFilter
// and each level of ScalableCuckooFilter. It works on a key's 64-bit hash h, so the
// key is hashed once per operation, whatever the hasher.
//
// Geometry: m buckets (m even, 2 <= m <= 2^32) of b slots (b in {2, 4, 8}), each slot
// an f-bit fingerprint (4 <= f <= 32), packed: slot s of bucket i is bits
// [(i b + s) f, (i b + s + 1) f) of the table, bit x being bit x % 8 (LSB first) of
// byte x / 8. Fingerprint 0 marks an empty slot.
//
// From the hash (independent bits, so the two never correlate):
//   fp = h mod 2^f, or 1 when that is 0           (the low f bits)
//   i1 = floor((h >> 32) * m / 2^32)               (the high 32 bits)
// Alternate bucket (partial-key cuckoo hashing, for any even m, not only powers of 2):
//   H(fp)     = floor(((fp * 0x9E3779B97F4A7C15 mod 2^64) >> 32) * m / 2^32) | 1
//   alt(i, fp) = (H(fp) - i) mod m
// alt is an involution (alt(alt(i)) = i), so a fingerprint can always move back to
// the other bucket of its pair knowing only where it is; and because H is odd and m
// even, alt(i) != i: every key has two distinct buckets (i1 + i2 is odd mod m).
//
// Levels of ScalableCuckooFilter use a second, "nested" form of alt (alt_bits > 0):
//   G(fp)      = splitmix64(max(1, fp mod 2^alt_bits)) | 1
//   alt(i, fp) = (G(fp) mod m - i) mod m
// which depends only on the low alt_bits of the fingerprint and commutes with
// reducing bucket numbers modulo any even divisor of m (scalable_cuckoo_filter.hpp
// explains why that matters). Also an involution without fixed points.
//
// Lookup computes i1, fp and i2 without a branch, loads each bucket with one unaligned
// 64-bit read (for the usual geometries, see Path) and tests both with SWAR, OR-ing the
// results: no data-dependent branch, so lookups of present and absent keys cost the
// same and successive lookups overlap their two cache misses each.
//
// Insert tries i1 then i2; when both are full it walks a kick chain (with a one-step
// look-ahead: before evicting, any fingerprint of the bucket that can move to a free
// slot in its other bucket does) of at most kMaxKicks evictions. If the chain fails,
// every eviction is undone in reverse order, so the table is exactly as before.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "amq/detail/fastmod.hpp"
#include "amq/detail/huge_pages.hpp"
#include "amq/hash.hpp"

#if defined(__SSE4_1__)
#include <immintrin.h>
#endif

namespace amq::detail {

// Lane constants for `slots` lanes of `bits` each: ones = 1 in each lane's low bit.
constexpr uint64_t lane_ones(uint32_t bits, uint32_t slots) noexcept {
  uint64_t v = 0;
  for (uint32_t s = 0; s < slots; ++s) v |= uint64_t{1} << (s * bits);
  return v;
}
constexpr uint64_t low_mask(uint32_t bits) noexcept { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

class CuckooTable {
 public:
  static constexpr uint64_t kMaxBuckets = uint64_t{1} << 32;
  static constexpr uint32_t kMaxKicks = 500;
  static constexpr uint32_t kMinFingerprintBits = 4;
  static constexpr uint32_t kMaxFingerprintBits = 32;

  // True for a geometry the table takes (see above).
  static bool valid_geometry(uint64_t num_buckets, uint32_t f, uint32_t b) noexcept {
    return num_buckets >= 2 && num_buckets <= kMaxBuckets && num_buckets % 2 == 0 && f >= kMinFingerprintBits &&
           f <= kMaxFingerprintBits && (b == 2 || b == 4 || b == 8);
  }
  // Bytes of the packed table: ceil(m b f / 8).
  static uint64_t table_bytes(uint64_t num_buckets, uint32_t f, uint32_t b) noexcept {
    return (num_buckets * b * f + 7) / 8;
  }
  // The least even bucket count (>= 2) whose load at `capacity` items is at most
  // design_load(b, f). Capped at kMaxBuckets.
  static uint64_t buckets_for(uint64_t capacity, uint32_t b, uint32_t f) noexcept;
  // The load up to which inserts practically never fail, used for sizing: 0.84, 0.95
  // and 0.97 for b = 2, 4, 8 with f >= 8 bits. Shorter fingerprints give fewer
  // alternate-bucket offsets (2^f - 1), and the reachable load falls (measured on
  // 2^18-bucket tables; larger tables fill a little less).
  static double design_load(uint32_t b, uint32_t f = 8) noexcept {
    static constexpr double kLoad[3][5] = {
        {0.33, 0.50, 0.78, 0.82, 0.84},  // b = 2, f = 4, 5, 6, 7, >= 8
        {0.70, 0.88, 0.92, 0.94, 0.95},  // b = 4
        {0.85, 0.95, 0.96, 0.97, 0.97},  // b = 8
    };
    const int row = b == 2 ? 0 : b == 4 ? 1 : 2;
    const int col = f >= 8 ? 4 : f <= 4 ? 0 : static_cast<int>(f) - 4;
    return kLoad[row][col];
  }

  CuckooTable() = default;
  // Throws Error(invalid_argument) for a geometry valid_geometry rejects.
  // alt_bits = 0: the plain alternate-bucket form; 1..f: the nested form.
  CuckooTable(uint64_t num_buckets, uint32_t fingerprint_bits, uint32_t bucket_size, uint64_t rng_seed = 0,
              uint32_t alt_bits = 0);

  uint32_t fingerprint_bits() const noexcept { return f_; }
  uint32_t bucket_size() const noexcept { return b_; }
  uint64_t num_buckets() const noexcept { return m_; }
  uint64_t slots() const noexcept { return m_ * b_; }
  uint64_t size() const noexcept { return count_; }
  uint64_t bytes() const noexcept { return table_bytes(m_, f_, b_); }

  // F: the fingerprint size as a constant, or 0 for the table's.
  template <uint32_t F = 0>
  uint32_t fingerprint(uint64_t h) const noexcept {
    const uint32_t mask = F != 0 ? static_cast<uint32_t>(low_mask(F)) : fmask_;
    const uint32_t fp = static_cast<uint32_t>(h) & mask;
    return fp ? fp : 1;
  }
  uint64_t index(uint64_t h) const noexcept { return ((h >> 32) * m_) >> 32; }
  uint32_t alt_bits() const noexcept { return alt_bits_; }
  uint64_t alt(uint64_t i, uint32_t fp) const noexcept {
    if (__builtin_expect(alt_bits_ == 0, 1)) return minus_mod_m(has_alt_table() ? alt_h_[fp] : plain_h(fp), i);
    return alt_nested(i, nested_g(fp, alt_bits_));
  }
  // The plain form: H(fp) = floor(((fp * golden mod 2^64) >> 32) * m / 2^32) | 1.
  uint64_t alt_plain(uint64_t i, uint32_t fp) const noexcept { return minus_mod_m(plain_h(fp), i); }
  uint64_t plain_h(uint32_t fp) const noexcept {
    const uint64_t mixed = (static_cast<uint64_t>(fp) * 0x9E3779B97F4A7C15ULL) >> 32;
    return ((mixed * m_) >> 32) | 1;
  }
  // H(fp) of the plain form for every fingerprint, kept when fingerprints are short
  // (f <= kAltTableMaxBits) and the table is at least kAltTableRatio times the size of
  // this array: a lookup then reads H from L1 instead of two dependent multiplies,
  // which lets more lookups' bucket loads be in flight at once.
  static constexpr uint32_t kAltTableMaxBits = 12;
  static constexpr uint64_t kAltTableRatio = 64;
  bool has_alt_table() const noexcept { return !alt_h_.empty(); }
  // contains_hash's fastest case: plain alt, f = 12, b = 4 and the array.
  bool f12_b4_with_alt_table() const noexcept { return f12_b4_ && has_alt_table(); }
  bool f12_b4() const noexcept { return f12_b4_; }  // plain alt, byte_window, f = 12, b = 4
  // G(fp) of the nested form, before the reduction mod m: the same in every level
  // whose alt_bits agree (ScalableCuckooFilter computes it once per key).
  static uint64_t nested_g(uint64_t fp, uint32_t alt_bits) noexcept {
    const uint64_t low = fp & ((uint64_t{1} << alt_bits) - 1);
    return splitmix64(low ? low : 1) | 1;
  }
  // The nested-form alternate bucket with G already computed.
  uint64_t alt_nested(uint64_t i, uint64_t g) const noexcept { return minus_mod_m(mod_m_.mod(g), i); }
  // (H - i) mod m for H, i < m, as a conditional move (a branch here would mispredict
  // half the time).
  uint64_t minus_mod_m(uint64_t H, uint64_t i) const noexcept {
    const uint64_t d = H - i;
    return H < i ? d + m_ : d;
  }

  // Slot access (any geometry).
  uint32_t get(uint64_t bucket, uint32_t slot) const noexcept {
    const uint64_t bit = (bucket * b_ + slot) * f_;
    return static_cast<uint32_t>(load64(bit >> 3) >> (bit & 7)) & fmask_;
  }
  void set(uint64_t bucket, uint32_t slot, uint32_t fp) noexcept {
    const uint64_t bit = (bucket * b_ + slot) * f_;
    const unsigned shift = static_cast<unsigned>(bit & 7);
    uint64_t w = load64(bit >> 3);
    w = (w & ~(static_cast<uint64_t>(fmask_) << shift)) | (static_cast<uint64_t>(fp) << shift);
    std::memcpy(bytes_ptr() + (bit >> 3), &w, 8);
  }
  // First slot of `bucket` holding `fp` (0: an empty slot), or -1.
  int find(uint64_t bucket, uint32_t fp) const noexcept {
    for (uint32_t s = 0; s < b_; ++s)
      if (get(bucket, s) == fp) return static_cast<int>(s);
    return -1;
  }
  uint32_t count_in(uint64_t bucket, uint32_t fp) const noexcept {
    uint32_t c = 0;
    for (uint32_t s = 0; s < b_; ++s) c += get(bucket, s) == fp;
    return c;
  }

  // True if the bucket holds fp (SWAR over the packed bucket, chunk by chunk). F and B
  // are compile-time fingerprint and bucket sizes, or 0 for the runtime ones. The
  // reference probe: contains_hash uses the window test below where it can.
  template <uint32_t F, uint32_t B>
  bool bucket_has(uint64_t bucket, uint32_t fp) const noexcept;
  template <uint32_t F, uint32_t B>
  bool contains_fp(uint64_t i1, uint32_t fp) const noexcept {
    return bucket_has<F, B>(i1, fp) || bucket_has<F, B>(alt(i1, fp), fp);
  }

  // How contains_hash tests a bucket:
  //  byte_window   b f is a multiple of 8 and at most 64 (f = 8, 12, 16 with b = 2 or
  //                4; f = 8 with b = 8; ...): one unaligned 64-bit load at the
  //                bucket's first byte and one SWAR "has a lane equal to fp" test;
  //  bit_window    the same with a shift, for buckets that start inside a byte and
  //                still fit one load (b = 2 with f <= 30, b = 4 with f <= 15, ...);
  //  split_window  b = 8 with 8 < f <= 16: two loads of 4 slots each;
  //  generic       the chunked bucket_has<0, 0> loop (longer fingerprints).
  // Both buckets are always tested and the results OR-ed, so a lookup has no
  // data-dependent branch: present and absent keys cost the same, and consecutive
  // lookups overlap their cache misses.
  enum class Path : uint8_t { generic, byte_window, bit_window, split_window };
  Path path() const noexcept { return path_; }

  // A key's two buckets and fingerprint, computed once (for the batched probes).
  struct Probe {
    uint64_t i1, i2;
    uint32_t fp;
  };
  Probe probe(uint64_t h) const noexcept { return probe_at(index(h), fingerprint(h)); }
  Probe probe_at(uint64_t i1, uint32_t fp) const noexcept { return {i1, alt(i1, fp), fp}; }
  bool test(const Probe& p) const noexcept {
    if (__builtin_expect(path_ == Path::byte_window, 1)) return test_byte_windows<0, 0>(p.i1, p.i2, p.fp);
    return test_other(p.i1, p.i2, p.fp);
  }
  // Path::byte_window: one 64-bit load per bucket and a SWAR "a lane equals fp" test.
  // F and B: the geometry as constants (lane constants and bucket stride fold), or 0
  // for the table's.
  template <uint32_t F, uint32_t B>
  bool test_byte_windows(uint64_t i1, uint64_t i2, uint32_t fp) const noexcept {
    uint64_t stride = bucket_bytes_, ones = wones_, highs = whighs_;
    if constexpr (F != 0) {
      stride = F * B / 8;
      ones = lane_ones(F, B);
      highs = ones << (F - 1);
    }
    const uint64_t pattern = ones * fp;
#if defined(__SSE4_1__)
    // Both windows in one 128-bit register: one xor, subtract, and-not and test for
    // the two, fewer instructions per lookup than two scalar tests.
    const __m128i w = _mm_set_epi64x(static_cast<long long>(load64(i2 * stride)),
                                     static_cast<long long>(load64(i1 * stride)));
    const __m128i x = _mm_xor_si128(w, _mm_set1_epi64x(static_cast<long long>(pattern)));
    const __m128i z = _mm_andnot_si128(x, _mm_sub_epi64(x, _mm_set1_epi64x(static_cast<long long>(ones))));
    return !_mm_testz_si128(z, _mm_set1_epi64x(static_cast<long long>(highs)));
#else
    const uint64_t x1 = load64(i1 * stride) ^ pattern;
    const uint64_t x2 = load64(i2 * stride) ^ pattern;
    return (((x1 - ones) & ~x1) | ((x2 - ones) & ~x2)) & highs;
#endif
  }
  void prefetch(const Probe& p) const noexcept {
    __builtin_prefetch(bytes_ptr() + ((p.i1 * bucket_bits_) >> 3), 0, 3);
    __builtin_prefetch(bytes_ptr() + ((p.i2 * bucket_bits_) >> 3), 0, 3);
  }

  bool contains_hash(uint64_t h) const noexcept {
    // CuckooFilter's usual case (plain alt, byte_window) behind one predictable branch,
    // so the single-key lookup loop stays short; everything else out of line. The
    // paper's geometry (f = 12, b = 4) has its lane constants and 6-byte bucket stride
    // compiled in (about a tenth faster).
    if (__builtin_expect(f12_b4_, 1)) {
      if (__builtin_expect(has_alt_table(), 1)) return contains_plain_table<12, 4>(h);
      return contains_plain<12, 4>(h);
    }
    if (__builtin_expect(plain_byte_window_, 1)) return contains_plain<0, 0>(h);
    return contains_hash_other(h);
  }
  // A plain-alt, byte_window lookup; F and B compile-time, or 0 for the table's.
  template <uint32_t F, uint32_t B>
  [[gnu::always_inline]] bool contains_plain(uint64_t h) const noexcept {
    const uint64_t i1 = index(h);
    const uint32_t fp = fingerprint<F>(h);
    return test_byte_windows<F, B>(i1, alt_plain(i1, fp), fp);
  }
  // The same reading H(fp) from the alternate-bucket array (has_alt_table()).
  template <uint32_t F, uint32_t B>
  [[gnu::always_inline]] bool contains_plain_table(uint64_t h) const noexcept {
    const uint64_t i1 = index(h);
    const uint32_t fp = fingerprint<F>(h);
    return test_byte_windows<F, B>(i1, minus_mod_m(alt_h_[fp], i1), fp);
  }
  // The same with the first bucket and the fingerprint given.
  bool contains_at(uint64_t i1, uint32_t fp) const noexcept { return test(probe_at(i1, fp)); }
  void prefetch_at(uint64_t i1, uint32_t fp) const noexcept { prefetch(probe_at(i1, fp)); }

  // Copies of fp in the key's two buckets.
  uint32_t count_hash(uint64_t h) const noexcept { return count_at(index(h), fingerprint(h)); }
  uint32_t count_at(uint64_t i1, uint32_t fp) const noexcept { return count_in(i1, fp) + count_in(alt(i1, fp), fp); }
  // Inserts the key's fingerprint; false (table unchanged) when it cannot be placed.
  bool insert_hash(uint64_t h) { return insert_at(index(h), fingerprint(h)); }
  // The first bucket's free slot inline (the usual case below the design load), the
  // rest out of line.
  bool insert_at(uint64_t i1, uint32_t fp) {
    if (__builtin_expect(f12_b4_, 1)) {
      if (!put_window<12, 4>(i1, fp)) return insert_other(i1, fp);
      ++count_;
      return true;
    }
    return place(i1, fp) || insert_other(i1, fp);
  }
  // Removes one copy of the key's fingerprint; false if there is none.
  bool erase_hash(uint64_t h) noexcept { return erase_at(index(h), fingerprint(h)); }
  bool erase_at(uint64_t i1, uint32_t fp) noexcept;
  void clear() noexcept;

  // The packed table (exactly bytes() bytes) and loading it back: throws
  // Error(corrupt) when padding bits are set or `expected_count` is not the number
  // of occupied slots.
  std::span<const std::byte> table() const noexcept { return {bytes_ptr(), static_cast<size_t>(bytes())}; }
  void load_table(std::span<const std::byte> bytes, uint64_t expected_count, const char* what);

  bool operator==(const CuckooTable& o) const noexcept {
    return m_ == o.m_ && f_ == o.f_ && b_ == o.b_ && alt_bits_ == o.alt_bits_ && count_ == o.count_ &&
           words_ == o.words_;
  }

 private:
  uint64_t load64(uint64_t byte) const noexcept {
    uint64_t w;
    std::memcpy(&w, bytes_ptr() + byte, 8);
    return w;
  }
  // The window tests: x = window ^ (fp in every lane) has a zero lane where a slot
  // holds fp, and (x - ones) & ~x & highs is nonzero exactly when some lane of the
  // window is zero (a borrow only runs upward past a zero lane, so the lowest zero
  // lane is always flagged and none is flagged without one). Bits above the window's
  // lanes (the next bucket) are not in `highs` and borrows never run down into the
  // window, so they need no masking.
  uint64_t window_match(uint64_t bit, uint64_t pattern) const noexcept {
    const uint64_t x = (load64(bit >> 3) >> (bit & 7)) ^ pattern;
    return (x - wones_) & ~x & whighs_;
  }
  bool test_other(uint64_t i1, uint64_t i2, uint32_t fp) const noexcept;  // the other paths
  bool insert_other(uint64_t i1, uint32_t fp);  // insert_at when bucket i1 is full
  bool contains_hash_other(uint64_t h) const noexcept;
  const std::byte* bytes_ptr() const noexcept { return reinterpret_cast<const std::byte*>(words_.data()); }
  std::byte* bytes_ptr() noexcept { return reinterpret_cast<std::byte*>(words_.data()); }
  bool place(uint64_t bucket, uint32_t fp) noexcept {
    if (!put(bucket, fp)) return false;
    ++count_;
    return true;
  }
  // put for Path::byte_window; F and B compile-time, or 0 for the table's. The window
  // test against 0: the lowest flagged lane is the first empty slot (see
  // window_match), its top bit at s f + f - 1.
  template <uint32_t F, uint32_t B>
  bool put_window(uint64_t bucket, uint32_t fp) noexcept {
    uint64_t stride = bucket_bytes_, ones = wones_, highs = whighs_;
    uint32_t f = f_;
    if constexpr (F != 0) {
      stride = F * B / 8;
      ones = lane_ones(F, B);
      highs = ones << (F - 1);
      f = F;
    }
    const uint64_t at = bucket * stride;
    uint64_t w = load64(at);
    const uint64_t z = (w - ones) & ~w & highs;
    if (z == 0) return false;
    w |= static_cast<uint64_t>(fp) << (std::countr_zero(z) + 1 - f);
    std::memcpy(bytes_ptr() + at, &w, 8);
    return true;
  }
  // Writes fp into the first empty slot of the bucket; false if it has none.
  bool put(uint64_t bucket, uint32_t fp) noexcept {
    if (__builtin_expect(path_ == Path::byte_window, 1)) return put_window<0, 0>(bucket, fp);
    const int s = find(bucket, 0);
    if (s < 0) return false;
    set(bucket, static_cast<uint32_t>(s), fp);
    return true;
  }
  uint64_t next_random() noexcept {  // xorshift64*
    rng_ ^= rng_ >> 12;
    rng_ ^= rng_ << 25;
    rng_ ^= rng_ >> 27;
    return rng_ * 0x2545F4914F6CDD1DULL;
  }

  struct Move {
    uint64_t bucket;
    uint32_t slot;
    uint32_t old;
  };

  uint64_t m_ = 0;
  uint32_t f_ = 0, b_ = 0;
  uint32_t fmask_ = 0;
  uint32_t alt_bits_ = 0;
  FastMod64 mod_m_{};
  uint64_t count_ = 0;
  Path path_ = Path::generic;
  // Generic SWAR probing: the bucket is read in chunks of chunk_slots_ lanes.
  uint32_t chunk_slots_ = 0;
  uint64_t ones_ = 0, highs_ = 0, chunk_mask_ = 0;
  // Window probing: bucket_bits_ = b f (bucket_bytes_ = b f / 8 for byte_window); a
  // window is window_slots_ lanes (b, or 4 for split_window), wones_ and whighs_ the
  // low and high bits of its lanes.
  uint64_t bucket_bits_ = 0, bucket_bytes_ = 0;
  uint64_t wones_ = 0, whighs_ = 0;
  uint32_t window_slots_ = 0;
  bool plain_byte_window_ = false;  // alt_bits_ == 0 and path_ == byte_window
  bool f12_b4_ = false;             // plain_byte_window_ with f = 12, b = 4
  uint64_t rng_ = 0x9E3779B97F4A7C15ULL;
  // Table bytes, then at least 8 zero bytes of slack (a window load may run past the
  // last bucket). Transparent huge pages when large: a lookup's two random bucket
  // loads then rarely miss the TLB as well as the cache.
  std::vector<uint64_t, HugePageAllocator<uint64_t>> words_;
  std::vector<Move> moves_;      // the kick chain being tried (scratch)
  std::vector<uint32_t> alt_h_;  // H(fp) for every fp < 2^f, or empty (has_alt_table)
};


// Slots per 64-bit chunk: all of them when every chunk starts on a byte, else as
// many as fit after a shift of up to 7 bits.
constexpr uint32_t chunk_slots_for(uint32_t f, uint32_t b) noexcept {
  uint32_t c = 64 / f;
  if (c >= b && (b * f) % 8 == 0) return b;
  // Byte-aligned chunks of c slots need c f % 8 == 0 and b f % 8 == 0.
  if ((b * f) % 8 == 0) {
    while (c > 1 && ((c * f) % 8 != 0 || b % c != 0)) --c;
    if ((c * f) % 8 == 0 && b % c == 0) return c;
  }
  c = 57 / f;
  return c < b ? c : b;
}

template <uint32_t F, uint32_t B>
bool CuckooTable::bucket_has(uint64_t bucket, uint32_t fp) const noexcept {
  constexpr bool fixed = F != 0;
  const uint32_t f = fixed ? F : f_;
  const uint32_t b = fixed ? B : b_;
  const uint32_t cs = fixed ? chunk_slots_for(F, B) : chunk_slots_;
  const uint64_t ones = fixed ? lane_ones(F, chunk_slots_for(F, B)) : ones_;
  const uint64_t highs = fixed ? ones << (F - 1) : highs_;
  const uint64_t cmask = fixed ? low_mask(F * chunk_slots_for(F, B)) : chunk_mask_;
  const uint64_t pattern = ones * fp;
  const uint64_t base = bucket * b * f;
  for (uint32_t s = 0; s < b; s += cs) {
    const uint64_t bit = base + static_cast<uint64_t>(s) * f;
    uint64_t w = (load64(bit >> 3) >> (bit & 7)) & cmask;
    uint32_t lanes = b - s < cs ? b - s : cs;
    uint64_t hi = highs;
    if (lanes < cs) {  // the last, partial chunk (generic path only)
      w &= low_mask(lanes * f);
      hi &= low_mask(lanes * f);
    }
    const uint64_t x = w ^ (pattern & (lanes < cs ? low_mask(lanes * f) : ~uint64_t{0}));
    const uint64_t lane_ones_v = hi >> (f - 1);
    if (((x - lane_ones_v) & ~x & hi) != 0) return true;
  }
  return false;
}

}  // namespace amq::detail
