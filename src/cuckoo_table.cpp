#include "amq/detail/cuckoo_table.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "amq/detail/prefetch.hpp"
#include "amq/error.hpp"

namespace amq::detail {

uint64_t CuckooTable::buckets_for(uint64_t capacity, uint32_t b, uint32_t f) noexcept {
  const double want = std::ceil(static_cast<double>(std::max<uint64_t>(capacity, 1)) / (b * design_load(b, f)));
  if (!(want < static_cast<double>(kMaxBuckets))) return kMaxBuckets;
  uint64_t m = static_cast<uint64_t>(want);
  m += m % 2;
  return std::max<uint64_t>(m, 2);
}

CuckooTable::CuckooTable(uint64_t num_buckets, uint32_t fingerprint_bits, uint32_t bucket_size, uint64_t rng_seed,
                         uint32_t alt_bits)
    : m_(num_buckets), f_(fingerprint_bits), b_(bucket_size), alt_bits_(alt_bits) {
  if (!valid_geometry(num_buckets, fingerprint_bits, bucket_size) || alt_bits > fingerprint_bits)
    throw Error(Errc::invalid_argument,
                "cuckoo table: need an even bucket count in 2..2^32, fingerprint bits in 4..32 and bucket size 2, 4 "
                "or 8 (got " +
                    std::to_string(num_buckets) + " buckets, " + std::to_string(fingerprint_bits) + " bits, " +
                    std::to_string(bucket_size) + " slots)");
  fmask_ = static_cast<uint32_t>(low_mask(f_));
  mod_m_ = FastMod64(m_);
  chunk_slots_ = chunk_slots_for(f_, b_);
  ones_ = lane_ones(f_, chunk_slots_);
  highs_ = ones_ << (f_ - 1);
  chunk_mask_ = low_mask(f_ * chunk_slots_);
  // A window of `bits` starting at multiples of `step` bits is shifted by up to
  // 8 - gcd(step, 8) bits within its 64-bit load.
  const auto fits = [](uint64_t bits, uint64_t step) { return bits + (8 - std::gcd<uint64_t>(step, 8)) <= 64; };
  bucket_bits_ = uint64_t{b_} * f_;
  if (bucket_bits_ % 8 == 0 && bucket_bits_ <= 64) {
    path_ = Path::byte_window;
    bucket_bytes_ = bucket_bits_ / 8;
    window_slots_ = b_;
  } else if (fits(bucket_bits_, bucket_bits_)) {
    path_ = Path::bit_window;
    window_slots_ = b_;
  } else if (b_ == 8 && fits(4 * f_, 4 * f_)) {
    path_ = Path::split_window;
    window_slots_ = 4;
  }
  if (path_ != Path::generic) {
    wones_ = lane_ones(f_, window_slots_);
    whighs_ = wones_ << (f_ - 1);
  }
  plain_byte_window_ = alt_bits_ == 0 && path_ == Path::byte_window;
  f12_b4_ = plain_byte_window_ && f_ == 12 && b_ == 4;
  words_.assign((bytes() + 7) / 8 + 1, 0);
  if (alt_bits_ == 0 && f_ <= kAltTableMaxBits && bytes() >= kAltTableRatio * sizeof(uint32_t) << f_) {
    alt_h_.resize(size_t{1} << f_);
    for (uint32_t fp = 0; fp < alt_h_.size(); ++fp) alt_h_[fp] = static_cast<uint32_t>(plain_h(fp));
  }
  rng_ ^= rng_seed * 0xD6E8FEB86659FD93ULL ^ num_buckets;
  if (rng_ == 0) rng_ = 1;
}

bool CuckooTable::contains_hash_other(uint64_t h) const noexcept { return test(probe(h)); }

bool CuckooTable::test_other(uint64_t i1, uint64_t i2, uint32_t fp) const noexcept {
  if (path_ == Path::bit_window) {
    const uint64_t pattern = wones_ * fp;
    return (window_match(i1 * bucket_bits_, pattern) | window_match(i2 * bucket_bits_, pattern)) != 0;
  }
  if (path_ == Path::split_window) {
    const uint64_t pattern = wones_ * fp;
    const uint64_t half = uint64_t{4} * f_;
    const uint64_t a = i1 * bucket_bits_, c = i2 * bucket_bits_;
    return (window_match(a, pattern) | window_match(a + half, pattern) | window_match(c, pattern) |
            window_match(c + half, pattern)) != 0;
  }
  return (static_cast<int>(bucket_has<0, 0>(i1, fp)) | static_cast<int>(bucket_has<0, 0>(i2, fp))) != 0;  // both, no branch
}

bool CuckooTable::insert_other(uint64_t i1, uint32_t fp) {
  const uint64_t i2 = alt(i1, fp);
  if (place(i2, fp)) return true;
  // Both buckets hold nothing but this fingerprint (2b copies of it): no eviction can
  // make room, since every victim's other bucket is one of these two.
  if (count_in(i1, fp) + count_in(i2, fp) == 2 * b_) return false;

  // Kick chain. Each step first looks for a fingerprint of the current (full) bucket
  // that can move to a free slot of its other bucket; failing that it evicts a random
  // one and carries it to its other bucket. Every eviction is logged so a chain that
  // fails can be undone exactly.
  moves_.clear();
  uint64_t cur = (next_random() & 1) ? i1 : i2;
  uint32_t carried = fp;
  for (uint32_t kick = 0; kick < kMaxKicks; ++kick) {
    for (uint32_t s = 0; s < b_; ++s) {
      const uint32_t g = get(cur, s);
      if (put(alt(cur, g), g)) {
        set(cur, s, carried);
        ++count_;
        return true;
      }
    }
    const uint32_t s = static_cast<uint32_t>(next_random() % b_);
    const uint32_t g = get(cur, s);
    moves_.push_back({cur, s, g});
    set(cur, s, carried);
    carried = g;
    cur = alt(cur, g);
  }
  for (auto it = moves_.rbegin(); it != moves_.rend(); ++it) set(it->bucket, it->slot, it->old);
  return false;
}

bool CuckooTable::erase_at(uint64_t i1, uint32_t fp) noexcept {
  int s = find(i1, fp);
  uint64_t bucket = i1;
  if (s < 0) {
    bucket = alt(i1, fp);
    s = find(bucket, fp);
    if (s < 0) return false;
  }
  set(bucket, static_cast<uint32_t>(s), 0);
  --count_;
  return true;
}

void CuckooTable::clear() noexcept {
  std::fill(words_.begin(), words_.end(), 0);
  count_ = 0;
}

void CuckooTable::load_table(std::span<const std::byte> in, uint64_t expected_count, const char* what) {
  if (in.size() != bytes())
    throw Error(Errc::corrupt, std::string(what) + ": table of " + std::to_string(in.size()) + " bytes, expected " +
                                   std::to_string(bytes()));
  std::fill(words_.begin(), words_.end(), 0);
  std::memcpy(bytes_ptr(), in.data(), in.size());
  const uint64_t bits = m_ * b_ * f_;
  if (bits % 8 != 0 && (static_cast<uint8_t>(in.back()) >> (bits % 8)) != 0)
    throw Error(Errc::corrupt, std::string(what) + ": non-zero padding bits after the last slot");
  uint64_t occupied = 0;
  for (uint64_t i = 0; i < m_; ++i)
    for (uint32_t s = 0; s < b_; ++s) occupied += get(i, s) != 0;
  if (occupied != expected_count)
    throw Error(Errc::corrupt, std::string(what) + ": header says " + std::to_string(expected_count) +
                                   " fingerprints, table holds " + std::to_string(occupied));
  count_ = occupied;
}

}  // namespace amq::detail
