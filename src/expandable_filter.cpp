#include "amq/expandable_filter.hpp"

#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "amq/detail/byte_io.hpp"
#include "amq/error.hpp"
#include "amq/format.hpp"

namespace amq {
namespace {

constexpr double kMinFpp = 1e-5;
constexpr double kMaxFpp = 0.5;
// A 16-bit table widens when filling it after a doubling would take the bound past
// this share of the target, leaving the rest for the 32-bit generations that follow.
constexpr double kWidenAt = 0.9;
// A failed kick chain grows the table at this load or above, and is stashed below it.
constexpr double kGrowOnFailLoad = 0.75;
// A stashed entry in the file: its bucket (u64) and its slot value (u64, < 2^W).
constexpr size_t kStashEntryBytes = 16;

}  // namespace

ExpandableFilter::ExpandableFilter(uint64_t capacity, double fpp, uint64_t seed)
    : fpp_(fpp), seed_(seed), rng_(detail::splitmix64(seed) | 1) {
  if (!(fpp >= kMinFpp && fpp <= kMaxFpp))
    throw Error(Errc::invalid_argument,
                "expandable filter: false-positive rate must be in [1e-05, 0.5], got " + std::to_string(fpp));
  capacity = std::max<uint64_t>(capacity, 1);
  while (kMaxLoad * static_cast<double>(slots()) < static_cast<double>(capacity)) {
    if (level_ >= kMaxLevel)
      throw Error(Errc::too_large, "expandable filter: capacity " + std::to_string(capacity) +
                                       " needs more than 2^36 buckets");
    ++level_;
  }
  wide_ = projected_bound(level_, false, 0.0, 0) > kWidenAt * fpp_;
  if (wide_) t32_.assign(slots(), 0);
  else t16_.assign(slots(), 0);
}

double ExpandableFilter::projected_bound(uint32_t level, bool wide, double bound, uint64_t entries) const noexcept {
  const double m = std::ldexp(1.0, static_cast<int>(level));
  const double room = std::max(0.0, kMaxLoad * kBucketSize * m - static_cast<double>(entries));
  const int bits = static_cast<int>(kTagBits + new_remainder_bits(level, wide));
  return bound + room * std::ldexp(1.0, -bits) / m;
}

double ExpandableFilter::fpp_bound() const noexcept {
  double sum = 0;
  for (size_t l = 0; l < hist_.size(); ++l)
    sum += static_cast<double>(hist_[l]) * std::ldexp(1.0, -static_cast<int>(kTagBits + l));
  return sum / static_cast<double>(num_buckets());
}

bool ExpandableFilter::insert_hash(uint64_t h) {
  if (static_cast<double>(entries_ + 1) > kMaxLoad * static_cast<double>(slots())) {
    if (level_ >= kMaxLevel)
      throw Error(Errc::too_large, "expandable filter: the table has 2^36 buckets and cannot grow further");
    grow();
  }
  if (!(wide_ ? insert_in(t32_, h) : insert_in(t16_, h))) return false;
  ++items_;
  return true;
}

template <class S>
bool ExpandableFilter::place_free(Table<S>& t, uint64_t bucket, uint32_t v) noexcept {
  S* b = t.data() + bucket * kBucketSize;
  for (uint32_t j = 0; j < kBucketSize; ++j)
    if (b[j] == 0) {
      b[j] = static_cast<S>(v);
      return true;
    }
  return false;
}

// Places entry v in `bucket`, evicting entries to their other bucket as needed. On
// failure (the kick limit), bucket and v name the entry left without a slot.
template <class S>
bool ExpandableFilter::place(Table<S>& t, uint64_t& bucket, uint32_t& v) noexcept {
  constexpr uint32_t W = sizeof(S) * 8;
  if (place_free(t, bucket, v)) return true;
  for (uint32_t kick = 0; kick < kMaxKicks; ++kick) {
    S& slot = t[bucket * kBucketSize + next_random() % kBucketSize];
    const uint32_t evicted = slot;
    slot = static_cast<S>(v);
    v = evicted;
    bucket ^= top(kMasks[(v >> (W - 1 - kTagBits)) & (kTags - 1)], level_);
    v ^= uint32_t{1} << (W - 1);
    if (place_free(t, bucket, v)) return true;
  }
  return false;
}

template <class S>
bool ExpandableFilter::insert_in(Table<S>& t, uint64_t h) {
  constexpr uint32_t W = sizeof(S) * 8;
  const Probe<S> p = probe<S>(h);
  const uint32_t len = new_remainder_bits(level_, wide_);
  // The key's pattern cut after `len` remainder bits, then the end marker.
  uint32_t v = (p.k1 & ~((uint32_t{1} << (W - 1 - kTagBits - len)) - 1)) | (uint32_t{1} << (W - kOverheadBits - len));
  // Two distinct buckets full of exactly this entry (the key's own copies, but for a
  // collision of all its bits): they all move as the key would at every doubling, so
  // no growth makes room. (While the two buckets are one, doubling separates them.)
  if (p.b1 != p.b2 && full_of_copies(t, p, v)) return false;
  // Room for one entry in the stash, taken before anything changes: from here on
  // nothing allocates until the entry left over by a kick chain has a place.
  if (stash_.size() == stash_.capacity()) stash_.reserve(2 * stash_.size() + 1);
  ++hist_[len];
  ++entries_;
  if (place_free(t, p.b1, v)) return true;
  v |= uint32_t{1} << (W - 1);
  uint64_t bucket = p.b2;
  if (place(t, bucket, v)) return true;
  // The entry left over goes to the stash. Below kGrowOnFailLoad a kick chain fails
  // only where entries that cannot move apart (void copies, one key's copies) fill a
  // bucket pair, which no doubling undoes; above it, a doubling takes the stash's
  // entries back into the table (and if it throws std::bad_alloc, the entry is safe
  // in the stash).
  stash_.push_back({bucket, v});
  if (load_factor() >= kGrowOnFailLoad && level_ < kMaxLevel) grow();
  return true;
}

template <class S>
bool ExpandableFilter::full_of_copies(const Table<S>& t, const Probe<S>& p, uint32_t v) const noexcept {
  constexpr uint32_t side = uint32_t{1} << (sizeof(S) * 8 - 1);
  for (uint32_t j = 0; j < kBucketSize; ++j)
    if (t[p.b1 * kBucketSize + j] != v || t[p.b2 * kBucketSize + j] != (v | side)) return false;
  return true;
}

template <class S>
size_t ExpandableFilter::count_in(const Table<S>& t, uint64_t h) const noexcept {
  const Probe<S> p = probe<S>(h);
  size_t n = 0;
  for (uint32_t j = 0; j < kBucketSize; ++j) {
    n += matches(t[p.b1 * kBucketSize + j], p.k1);
    n += matches(t[p.b2 * kBucketSize + j], p.k2);
  }
  for (const Homeless& e : stash_)
    n += (e.bucket == p.b1 && matches(e.value, p.k1)) || (e.bucket == p.b2 && matches(e.value, p.k2));
  return n;
}

template <class S>
bool ExpandableFilter::erase_in(Table<S>& t, uint64_t h) noexcept {
  constexpr uint32_t W = sizeof(S) * 8;
  const Probe<S> p = probe<S>(h);
  S* best = nullptr;
  uint32_t best_len = 0;
  auto scan = [&](uint64_t bucket, uint32_t k) {
    S* b = t.data() + bucket * kBucketSize;
    for (uint32_t j = 0; j < kBucketSize; ++j) {
      if (!matches(b[j], k)) continue;
      const uint32_t len = W - kOverheadBits - static_cast<uint32_t>(std::countr_zero(static_cast<uint32_t>(b[j])));
      if (!best || len > best_len) {
        best = b + j;
        best_len = len;
      }
    }
  };
  scan(p.b1, p.k1);
  scan(p.b2, p.k2);
  size_t stashed = stash_.size();
  for (size_t i = 0; i < stash_.size(); ++i) {
    const Homeless& e = stash_[i];
    if (!((e.bucket == p.b1 && matches(e.value, p.k1)) || (e.bucket == p.b2 && matches(e.value, p.k2)))) continue;
    const uint32_t len = W - kOverheadBits - static_cast<uint32_t>(std::countr_zero(e.value));
    if ((!best && stashed == stash_.size()) || len > best_len) {
      stashed = i;
      best_len = len;
    }
  }
  if (stashed != stash_.size()) stash_.erase(stash_.begin() + static_cast<std::ptrdiff_t>(stashed));
  else if (best) *best = 0;
  else return false;
  --hist_[best_len];
  --entries_;
  if (items_) --items_;
  return true;
}

bool ExpandableFilter::erase_hash(uint64_t h) noexcept { return wide_ ? erase_in(t32_, h) : erase_in(t16_, h); }
size_t ExpandableFilter::count_hash(uint64_t h) const noexcept {
  return wide_ ? count_in(t32_, h) : count_in(t16_, h);
}

// Where entry v of old bucket i goes in the doubled table, re-encoded as a D slot:
// one child (its first remainder bit becomes an address bit), or both children for
// an entry with no remainder left.
template <class S, class D>
void ExpandableFilter::move_entry(uint64_t i, uint32_t v, uint64_t out[2], uint32_t vals[2], int& n) const noexcept {
  constexpr uint32_t WS = sizeof(S) * 8, WD = sizeof(D) * 8;
  uint32_t w = v << (WD - WS);  // the same fields in a wider slot, if it is wider
  if (static_cast<uint32_t>(std::countr_zero(w)) == WD - kOverheadBits) {
    out[0] = 2 * i;
    out[1] = 2 * i + 1;
    vals[0] = vals[1] = w;
    n = 2;
    return;
  }
  const uint32_t side = w >> (WD - 1);
  const uint32_t tag = (w >> (WD - 1 - kTagBits)) & (kTags - 1);
  const uint32_t bit = (w >> (WD - kOverheadBits)) & 1;
  const uint32_t mask_bit = static_cast<uint32_t>(kMasks[tag] >> (63 - level_)) & 1;
  const uint32_t high = w & ~((uint32_t{1} << (WD - 1 - kTagBits)) - 1);
  const uint32_t rest = w & ((uint32_t{1} << (WD - kOverheadBits)) - 1);
  out[0] = 2 * i + (side ? bit ^ mask_bit : bit);
  vals[0] = high | (rest << 1);
  n = 1;
}

template <class S, class D>
void ExpandableFilter::double_into(const Table<S>& from, Table<D>& to) {
  const uint64_t m = num_buckets();
  for (uint64_t i = 0; i < m; ++i) {
    const S* b = from.data() + i * kBucketSize;
    for (uint32_t j = 0; j < kBucketSize; ++j) {
      if (b[j] == 0) continue;
      uint64_t out[2];
      uint32_t vals[2];
      int n = 0;
      move_entry<S, D>(i, b[j], out, vals, n);
      // A child receives entries of bucket i only, so it always has room.
      for (int k = 0; k < n; ++k) (void)place_free(to, out[k], vals[k]);
    }
  }
}

void ExpandableFilter::grow() {
  // The bound is unchanged by doubling; filling the doubled table adds to it.
  const uint64_t after = entries_ + hist_[0];
  const bool widen = !wide_ && projected_bound(level_ + 1, false, fpp_bound(), after) > kWidenAt * fpp_;
  std::vector<Homeless> moved;
  auto move_stash = [&]<class S, class D>() {
    for (const Homeless& h : stash_) {
      uint64_t out[2];
      uint32_t vals[2];
      int n = 0;
      move_entry<S, D>(h.bucket, h.value, out, vals, n);
      for (int k = 0; k < n; ++k) moved.push_back({out[k], vals[k]});
    }
    // Room for every moved entry before the stash is emptied, so entries that find no
    // slot below go back without allocating once the tables are swapped.
    stash_.reserve(moved.size());
    stash_.clear();
  };
  const size_t new_slots = 2 * slots();
  if (wide_) {
    Table<uint32_t> to(new_slots, 0);
    double_into(t32_, to);
    move_stash.template operator()<uint32_t, uint32_t>();
    t32_ = std::move(to);
  } else if (widen) {
    Table<uint32_t> to(new_slots, 0);
    double_into(t16_, to);
    move_stash.template operator()<uint16_t, uint32_t>();
    Table<uint16_t>().swap(t16_);
    t32_ = std::move(to);
    wide_ = true;
  } else {
    Table<uint16_t> to(new_slots, 0);
    double_into(t16_, to);
    move_stash.template operator()<uint16_t, uint16_t>();
    t16_ = std::move(to);
  }
  ++level_;
  Histogram h{};
  for (size_t l = 1; l < hist_.size(); ++l) h[l - 1] = hist_[l];
  h[0] += 2 * hist_[0];
  entries_ = after;
  hist_ = h;
  // The entries a failed kick chain left without a slot, and the stash's, go in now
  // (inserts in a table at most half full). One that fails once more is kept in the
  // stash: buckets filled by void copies of the oldest entries stay full at every
  // doubling, so growing again would not make room for it.
  for (Homeless e : moved) {
    const bool ok = wide_ ? place(t32_, e.bucket, e.value) : place(t16_, e.bucket, e.value);
    if (!ok) stash_.push_back(e);
  }
}

bool ExpandableFilter::stash_matches(uint64_t b1, uint64_t b2, uint32_t k1, uint32_t k2) const noexcept {
  for (const Homeless& e : stash_)
    if ((e.bucket == b1 && matches(e.value, k1)) || (e.bucket == b2 && matches(e.value, k2))) return true;
  return false;
}

void ExpandableFilter::recount() {
  hist_ = {};
  entries_ = 0;
  const uint32_t w = slot_bits();
  const uint32_t max_len = new_remainder_bits(level_, wide_);
  auto check = [&](uint32_t v) {
    if (v == 0) return;
    const uint32_t z = static_cast<uint32_t>(std::countr_zero(v));
    if (z > w - kOverheadBits || w - kOverheadBits - z > max_len)
      throw Error(Errc::corrupt, "expandable filter: a slot holds an impossible entry (" + std::to_string(v) + ")");
    ++hist_[w - kOverheadBits - z];
    ++entries_;
  };
  if (wide_)
    for (uint32_t v : t32_) check(v);
  else
    for (uint16_t v : t16_) check(v);
  for (const Homeless& e : stash_) check(e.value);
}

std::vector<std::byte> ExpandableFilter::serialize() const {
  detail::ByteWriter p;
  p.u32(Xxh3Hasher::id);
  p.u32(slot_bits());
  p.u32(kBucketSize);
  p.u32(level_);
  p.u64(seed_);
  p.f64(fpp_);
  p.u64(items_);
  p.u64(entries_);
  p.u64(stash_.size());
  const std::span<const std::byte> table = table_bytes();
  const size_t payload = table.size() + kStashEntryBytes * stash_.size();
  std::vector<std::byte> out(container_size(p.buffer().size(), payload));
  write_container_to(out, Kind::expandable, p.buffer(), payload, [&](std::span<std::byte> to) {
    if (!table.empty()) std::memcpy(to.data(), table.data(), table.size());
    std::byte* at = to.data() + table.size();
    for (const Homeless& e : stash_) {
      detail::store_le64(at, e.bucket);
      detail::store_le64(at + 8, e.value);
      at += kStashEntryBytes;
    }
  });
  return out;
}

ExpandableFilter ExpandableFilter::load(std::span<const std::byte> file) {
  const Container c = parse_container(file, Kind::expandable);
  detail::ByteReader p(c.params, "expandable filter params");
  const uint32_t hasher_id = p.u32();
  const uint32_t bits = p.u32();
  const uint32_t bucket_size = p.u32();
  const uint32_t level = p.u32();
  const uint64_t seed = p.u64();
  const double fpp = p.f64();
  const uint64_t items = p.u64();
  const uint64_t entries = p.u64();
  const uint64_t stashed = p.u64();
  p.expect_end();
  if (hasher_id != Xxh3Hasher::id)
    throw Error(Errc::incompatible, "expandable filter: file was made with hasher " +
                                        std::string(hasher_name(hasher_id)) + " (id " + std::to_string(hasher_id) +
                                        "), this type hashes with xxh3 (id 1)");
  if (bits != 16 && bits != 32)
    throw Error(Errc::corrupt, "expandable filter: slots of " + std::to_string(bits) + " bits (16 or 32)");
  if (bucket_size != kBucketSize)
    throw Error(Errc::corrupt, "expandable filter: buckets of " + std::to_string(bucket_size) + " slots (4)");
  if (level > kMaxLevel)
    throw Error(Errc::corrupt, "expandable filter: 2^" + std::to_string(level) + " buckets (at most 2^36)");
  if (!(fpp >= kMinFpp && fpp <= kMaxFpp))
    throw Error(Errc::corrupt, "expandable filter: target false-positive rate " + std::to_string(fpp) +
                                   " outside [1e-05, 0.5]");
  const uint64_t table = (uint64_t{kBucketSize} << level) * (bits / 8);
  // The payload's length is checked before anything is allocated (the stash count is
  // bounded by the payload's real size first, so the product cannot overflow).
  if (stashed > c.payload.size() / kStashEntryBytes || c.payload.size() != table + kStashEntryBytes * stashed)
    throw Error(Errc::corrupt, "expandable filter: payload of " + std::to_string(c.payload.size()) +
                                   " bytes, 2^" + std::to_string(level) + " buckets of " + std::to_string(bits) +
                                   "-bit slots and " + std::to_string(stashed) + " stashed entries need " +
                                   std::to_string(table) + " + " + std::to_string(kStashEntryBytes) + " x " +
                                   std::to_string(stashed));
  ExpandableFilter f;
  f.fpp_ = fpp;
  f.seed_ = seed;
  f.rng_ = detail::splitmix64(seed) | 1;
  f.level_ = level;
  f.wide_ = bits == 32;
  Table<uint16_t>().swap(f.t16_);
  if (f.wide_) {
    f.t32_.resize(f.slots());
    std::memcpy(f.t32_.data(), c.payload.data(), table);
  } else {
    f.t16_.resize(f.slots());
    std::memcpy(f.t16_.data(), c.payload.data(), table);
  }
  const std::byte* at = c.payload.data() + table;
  for (uint64_t i = 0; i < stashed; ++i, at += kStashEntryBytes) {
    const uint64_t bucket = detail::load_le64(at), value = detail::load_le64(at + 8);
    if (bucket >= f.num_buckets() || value == 0 || value >> bits != 0)
      throw Error(Errc::corrupt, "expandable filter: stashed entry " + std::to_string(i) + " is impossible");
    f.stash_.push_back({bucket, static_cast<uint32_t>(value)});
  }
  f.recount();
  if (f.entries_ != entries)
    throw Error(Errc::corrupt, "expandable filter: header counts " + std::to_string(entries) +
                                   " entries, the table holds " + std::to_string(f.entries_));
  if (items > entries)
    throw Error(Errc::corrupt, "expandable filter: " + std::to_string(items) + " keys in " +
                                   std::to_string(entries) + " entries");
  f.items_ = items;
  return f;
}

}  // namespace amq
