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
// A 16-bit table widens before an insert would take the bound past this share of the
// target, leaving the rest for the 32-bit entries that follow.
constexpr double kWidenAt = 0.95;
// A failed kick chain grows the table at this load or above, and is stashed below it.
constexpr double kGrowOnFailLoad = 0.75;
// Buckets split after a failed kick chain at that load (at most; an eighth of a small table).
constexpr uint32_t kSplitsOnFail = 16;
// A stashed entry in the file: its bucket (u64) and its slot value (u64, < 2^W).
constexpr size_t kStashEntryBytes = 16;

}  // namespace

ExpandableFilter::ExpandableFilter(uint64_t capacity, double fpp, uint64_t seed)
    : fpp_(fpp), seed_(seed), rng_(detail::splitmix64(seed) | 1) {
  if (!(fpp >= kMinFpp && fpp <= kMaxFpp))
    throw Error(Errc::invalid_argument,
                "expandable filter: false-positive rate must be in [1e-05, 0.5], got " + std::to_string(fpp));
  capacity = std::max<uint64_t>(capacity, 1);
  // The fewest buckets that hold the capacity at load kMaxLoad.
  const double need = std::ceil(static_cast<double>(capacity) / (kMaxLoad * kBucketSize));
  if (need > std::ldexp(1.0, kMaxLevel))
    throw Error(Errc::too_large, "expandable filter: capacity " + std::to_string(capacity) +
                                     " needs more than 2^36 buckets");
  const uint64_t m = std::max<uint64_t>(1, static_cast<uint64_t>(need));
  level_ = static_cast<uint32_t>(std::bit_width(m) - 1);
  split_ = m - (uint64_t{1} << level_);
  widen_at_ = static_cast<Weight>(std::ldexp(kWidenAt * fpp_, 64));
  // 16-bit slots unless a table of them filled with new entries would pass the mark.
  wide_ = kMaxLoad * kBucketSize * std::ldexp(1.0, -static_cast<int>(16 - 2)) > kWidenAt * fpp_;
  if (wide_) t32_.assign(slots(), 0);
  else t16_.assign(slots(), 0);
}

double ExpandableFilter::fpp_bound() const noexcept { return std::ldexp(static_cast<double>(weight_), -64); }

void ExpandableFilter::count_entry(uint32_t known, int64_t n) noexcept {
  const Weight w = Weight{1} << (64 - kTagBits - known);
  if (n >= 0) {
    hist_[known] += static_cast<uint64_t>(n);
    weight_ += w * static_cast<uint64_t>(n);
  } else {
    hist_[known] -= static_cast<uint64_t>(-n);
    weight_ -= w * static_cast<uint64_t>(-n);
  }
}

template <class S>
ExpandableFilter::Decoded ExpandableFilter::decode(uint64_t bucket, uint32_t v) const noexcept {
  constexpr uint32_t W = sizeof(S) * 8;
  const uint32_t l = level_of(bucket);
  const uint32_t len = W - kOverheadBits - static_cast<uint32_t>(std::countr_zero(v));
  const uint32_t side = v >> (W - 1);
  const uint32_t tag = (v >> (W - 1 - kTagBits)) & (kTags - 1);
  // The bucket's address bits are the first l bits of the side's string.
  uint64_t prefix = rev64(bucket) & top_mask(l);
  if (side) prefix ^= kMasks[tag] & top_mask(l);
  if (len) prefix |= (static_cast<uint64_t>(v >> (W - 1 - kTagBits - len)) & low_mask(len)) << (64 - l - len);
  return {prefix, l + len, tag, side};
}

template <class S>
uint32_t ExpandableFilter::encode(const Decoded& d, uint32_t l) noexcept {
  constexpr uint32_t W = sizeof(S) * 8;
  const uint32_t len = std::min(d.known - l, W - kOverheadBits);
  uint32_t v = (d.side << (W - 1)) | (d.tag << (W - 1 - kTagBits)) | (uint32_t{1} << (W - kOverheadBits - len));
  if (len) v |= static_cast<uint32_t>((d.prefix << l) >> (64 - len)) << (W - 1 - kTagBits - len);
  return v;
}

uint64_t ExpandableFilter::bucket_of(const Decoded& d) const noexcept {
  const uint64_t g = rev64(d.prefix ^ (d.side ? kMasks[d.tag] : 0));
  const uint64_t i = g & low_mask(level_);
  if (i >= split_) return i;
  if (d.known <= level_) return ~uint64_t{0};
  return g & low_mask(level_ + 1);
}

template <class S>
ExpandableFilter::Moved ExpandableFilter::move_of(uint64_t bucket, uint32_t v) const noexcept {
  constexpr uint32_t W = sizeof(S) * 8;
  // The first remainder bit's place, and the bits from it down (remainder and end marker).
  constexpr uint32_t kFirst = W - kOverheadBits;
  constexpr uint32_t kTail = (uint32_t{1} << (kFirst + 1)) - 1;
  const uint32_t q = level_;
  const uint32_t l = level_of(bucket);
  const uint32_t z = static_cast<uint32_t>(std::countr_zero(v));
  const uint32_t known = l + kFirst - z;
  const uint32_t side = v >> (W - 1);
  const uint64_t mask = kRevMasks[(v >> (W - 1 - kTagBits)) & (kTags - 1)];
  // The other side: the same tag and remainder, the side bit flipped.
  const uint32_t head = (v & ~kTail) ^ (uint32_t{1} << (W - 1));
  const uint32_t tail = v & kTail;
  // The other side's string, reversed: its first l bits are the bucket's XOR the mask's.
  const uint64_t g = bucket ^ mask;
  const uint64_t i = g & low_mask(q);
  if (i >= split_) {
    if (l == q) return {i, v ^ (uint32_t{1} << (W - 1)), known, known};
    // From level q + 1 to q: the entry's next hash bit is its bucket's bit q (on the
    // hash's own string), and a full remainder drops its last bit.
    const uint32_t bit = static_cast<uint32_t>(((bucket ^ (side ? mask : 0)) >> q) & 1);
    return {i, head | (tail >> 1) | (bit << kFirst) | (z == 0), known - (z == 0), known};
  }
  if (l == q + 1) return {g & low_mask(q + 1), v ^ (uint32_t{1} << (W - 1)), known, known};
  // From level q to q + 1: the address bit is the first remainder bit (on the other
  // side's string), which the entry then gives up; a void entry cannot tell it.
  if (z == kFirst) return {~uint64_t{0}, 0, known, known};
  const uint64_t bit = ((v >> kFirst) & 1) ^ (side ? 0 : (mask >> q) & 1);
  return {i | (bit << q), head | ((tail << 1) & kTail), known, known};
}

bool ExpandableFilter::insert_hash(uint64_t h) {
  while (static_cast<double>(entries_ + 1) > kMaxLoad * static_cast<double>(slots())) {
    if (level_ >= kMaxLevel)
      throw Error(Errc::too_large, "expandable filter: the table has 2^36 buckets and cannot grow further");
    split_bucket();
  }
  if (!wide_ && weight_ + new_entry_weight() > widen_at_) widen();
  if (!(wide_ ? insert_in(t32_, h) : insert_in(t16_, h))) return false;
  ++items_;
  return true;
}

template <class S>
bool ExpandableFilter::place_free(Table<S>& t, uint64_t bucket, uint32_t v) noexcept {
  // The first empty slot, found without a branch per slot: in each 64-bit word, the
  // lowest lane whose value is 0 is the lowest whose (x - 1) & ~x has its top bit set.
  constexpr uint32_t W = sizeof(S) * 8;
  constexpr uint64_t kOnes = ~uint64_t{0} / ((uint64_t{1} << W) - 1);
  constexpr uint32_t kLanes = 64 / W;
  S* b = t.data() + bucket * kBucketSize;
  for (uint32_t w = 0; w < kBucketSize / kLanes; ++w) {
    uint64_t x;
    std::memcpy(&x, b + w * kLanes, sizeof(x));
    const uint64_t empty = (x - kOnes) & ~x & (kOnes << (W - 1));
    if (empty) {
      b[w * kLanes + static_cast<uint32_t>(std::countr_zero(empty)) / W] = static_cast<S>(v);
      return true;
    }
  }
  return false;
}

// Places entry v in `bucket`, evicting entries to their other bucket as needed (an
// entry moved to a bucket of another level gains or gives up one remainder bit). On
// failure, bucket and v name the entry left without a slot.
template <class S>
bool ExpandableFilter::place(Table<S>& t, uint64_t& bucket, uint32_t& v) noexcept {
  if (place_free(t, bucket, v)) return true;
  for (uint32_t kick = 0; kick < kMaxKicks; ++kick) {
    S* b = t.data() + bucket * kBucketSize;
    const uint32_t first = static_cast<uint32_t>(next_random() % kBucketSize);
    // A void entry of a level-q bucket cannot go to a split bucket (it does not know
    // the bit that picks one of the two): pick another victim.
    uint32_t j = 0;
    Moved m{};
    for (; j < kBucketSize; ++j) {
      m = move_of<S>(bucket, b[(first + j) % kBucketSize]);
      if (m.to != ~uint64_t{0}) break;
    }
    if (m.to == ~uint64_t{0}) return false;
    b[(first + j) % kBucketSize] = static_cast<S>(v);
    v = m.v;
    if (m.known != m.was) {
      count_entry(m.was, -1);
      count_entry(m.known, 1);
    }
    bucket = m.to;
    if (place_free(t, bucket, v) || displace(t, bucket, v)) return true;
  }
  return false;
}

// One step of a breadth-first search: an entry of the (full) bucket whose other bucket
// has a free slot moves there, and v takes its slot. The other buckets are prefetched
// together, so the step costs about one memory access where a kick chain costs one a
// step.
template <class S>
bool ExpandableFilter::displace(Table<S>& t, uint64_t bucket, uint32_t v) noexcept {
  S* b = t.data() + bucket * kBucketSize;
  Moved m[kBucketSize];
  for (uint32_t j = 0; j < kBucketSize; ++j) {
    m[j] = move_of<S>(bucket, b[j]);
    if (m[j].to != ~uint64_t{0}) detail::prefetch(t.data() + m[j].to * kBucketSize);
  }
  for (uint32_t j = 0; j < kBucketSize; ++j) {
    if (m[j].to == ~uint64_t{0} || m[j].to == bucket) continue;
    if (!place_free(t, m[j].to, m[j].v)) continue;
    if (m[j].known != m[j].was) {
      count_entry(m[j].was, -1);
      count_entry(m[j].known, 1);
    }
    b[j] = static_cast<S>(v);
    return true;
  }
  return false;
}

template <class S>
bool ExpandableFilter::insert_in(Table<S>& t, uint64_t h) {
  constexpr uint32_t W = sizeof(S) * 8;
  const Probe<S> p = probe<S>(h);
  Decoded d{h & top_mask(kAddressBits), kAddressBits, static_cast<uint32_t>(h & (kTags - 1)), 0};
  uint64_t b[2] = {p.b1, p.b2};
  uint32_t l[2] = {level_of(p.b1), level_of(p.b2)};
  uint32_t v[2];
  v[0] = encode<S>(d, l[0]);
  d.side = 1;
  v[1] = encode<S>(d, l[1]);
  // Two distinct buckets full of exactly these entries (the key's own copies, but for
  // a collision of all their bits): they all move between the same two buckets, so no
  // kick makes room. (While the two buckets are one, a split separates them.)
  if (p.b1 != p.b2 && full_of_copies(t, p.b1, v[0], p.b2, v[1])) return false;
  // Room for one entry in the stash, taken before anything changes: from here on
  // nothing allocates until the entry left over by a kick chain has a place.
  if (stash_.size() == stash_.capacity()) stash_.reserve(2 * stash_.size() + 1);
  // The bucket with more address bits first: its entry pins down one more bit.
  const int first = l[1] > l[0];
  ++entries_;
  for (int k : {first, 1 - first})
    if (place_free(t, b[k], v[k])) {
      count_entry(std::min(l[k] + W - kOverheadBits, kAddressBits), 1);
      return true;
    }
  for (int k : {first, 1 - first})
    if (displace(t, b[k], v[k])) {
      count_entry(std::min(l[k] + W - kOverheadBits, kAddressBits), 1);
      return true;
    }
  const int k = 1 - first;
  count_entry(std::min(l[k] + W - kOverheadBits, kAddressBits), 1);
  uint64_t bucket = b[k];
  uint32_t value = v[k];
  if (place(t, bucket, value)) return true;
  // The entry left over goes to the stash. Below kGrowOnFailLoad a kick chain fails
  // only where entries that cannot move apart (void copies, one key's copies) fill a
  // bucket pair, which no split undoes; above it, the table grows by up to
  // kSplitsOnFail buckets (if that throws std::bad_alloc, the entry is safe in the
  // stash). A stashed entry is tried in the table again when its bucket splits.
  stash_push({bucket, value});
  if (load_factor() >= kGrowOnFailLoad) {
    const uint64_t splits = std::clamp<uint64_t>(num_buckets() / 8, 1, kSplitsOnFail);
    for (uint64_t i = 0; i < splits && level_ < kMaxLevel; ++i) split_bucket();
  }
  return true;
}

template <class S>
bool ExpandableFilter::full_of_copies(const Table<S>& t, uint64_t b1, uint32_t v1, uint64_t b2,
                                      uint32_t v2) const noexcept {
  for (uint32_t j = 0; j < kBucketSize; ++j)
    if (t[b1 * kBucketSize + j] != v1 || t[b2 * kBucketSize + j] != v2) return false;
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
  for (const Homeless& e : stashed_in(p.b1)) n += matches(e.value, p.k1);
  for (const Homeless& e : stashed_in(p.b2)) n += matches(e.value, p.k2);
  return n;
}

template <class S>
bool ExpandableFilter::erase_in(Table<S>& t, uint64_t h) noexcept {
  constexpr uint32_t W = sizeof(S) * 8;
  const Probe<S> p = probe<S>(h);
  // The matching entry that pins down the most hash bits (address + remainder).
  auto known = [&](uint64_t bucket, uint32_t v) {
    return level_of(bucket) + W - kOverheadBits - static_cast<uint32_t>(std::countr_zero(v));
  };
  S* best = nullptr;
  uint32_t best_known = 0;
  auto scan = [&](uint64_t bucket, uint32_t k) {
    S* b = t.data() + bucket * kBucketSize;
    for (uint32_t j = 0; j < kBucketSize; ++j) {
      if (!matches(b[j], k)) continue;
      const uint32_t kn = known(bucket, b[j]);
      if (!best || kn > best_known) {
        best = b + j;
        best_known = kn;
      }
    }
  };
  scan(p.b1, p.k1);
  scan(p.b2, p.k2);
  size_t stashed = stash_.size();
  auto scan_stash = [&](uint64_t bucket, uint32_t k) {
    for (const Homeless& e : stashed_in(bucket)) {
      if (!matches(e.value, k)) continue;
      const uint32_t kn = known(e.bucket, e.value);
      if ((!best && stashed == stash_.size()) || kn > best_known) {
        stashed = static_cast<size_t>(&e - stash_.data());
        best_known = kn;
      }
    }
  };
  scan_stash(p.b1, p.k1);
  scan_stash(p.b2, p.k2);
  if (stashed != stash_.size()) stash_.erase(stash_.begin() + static_cast<std::ptrdiff_t>(stashed));
  else if (best) *best = 0;
  else return false;
  count_entry(best_known, -1);
  --entries_;
  if (items_) --items_;
  return true;
}

bool ExpandableFilter::erase_hash(uint64_t h) noexcept { return wide_ ? erase_in(t32_, h) : erase_in(t16_, h); }
size_t ExpandableFilter::count_hash(uint64_t h) const noexcept {
  return wide_ ? count_in(t32_, h) : count_in(t16_, h);
}

template <class S>
void ExpandableFilter::split_in(Table<S>& t) {
  const uint64_t bucket = split_;
  const uint64_t sibling = num_buckets();
  const uint32_t q = level_;
  // Everything that allocates first: the new bucket (the vector grows by an eighth,
  // so the slots allocated beyond the table stay few) and room in the stash for the
  // bucket's stashed entries, which may come back twice (void ones).
  if (const size_t n = stashed_in(bucket).size()) stash_.reserve(stash_.size() + n);
  const std::span<const Homeless> here = stashed_in(bucket);
  std::vector<Decoded> more;  // a bucket with more than 8 stashed entries (copies of old keys)
  if (here.size() > 2 * kBucketSize) more.reserve(here.size() - 2 * kBucketSize);
  if (t.size() + kBucketSize > t.capacity()) t.reserve(t.size() + t.size() / 8 + 64 * kBucketSize);
  t.resize(t.size() + kBucketSize, 0);
  // The bucket's entries, and its stashed entries read at level q.
  S in_table[kBucketSize];
  S* b = t.data() + bucket * kBucketSize;
  std::memcpy(in_table, b, sizeof(in_table));
  std::memset(b, 0, sizeof(in_table));
  Decoded from_stash[kBucketSize * 2];
  uint32_t ns = 0;
  for (const Homeless& e : here) {
    const Decoded d = decode<S>(bucket, e.value);
    if (ns < std::size(from_stash)) from_stash[ns++] = d;
    else more.push_back(d);
  }
  const auto first = stash_.begin() + (here.data() - stash_.data());
  stash_.erase(first, first + static_cast<std::ptrdiff_t>(here.size()));
  ++split_;
  if (split_ == uint64_t{1} << level_) {
    ++level_;
    split_ = 0;
  }
  // Now both halves have q + 1 address bits: an entry goes to the half its next bit
  // names, and a void entry (no bit left) to both.
  auto rehome = [&](const Decoded& d, auto&& put) {
    if (d.known > q) {
      put(bucket_of(d), encode<S>(d, q + 1));
      return;
    }
    Decoded c = d;
    c.known = q + 1;
    put(bucket, encode<S>(c, q + 1));
    put(sibling, encode<S>(c, q + 1));
    count_entry(q, -1);
    count_entry(q + 1, 2);
    ++entries_;
  };
  // The table's entries on the slot's fields: the half is named by the first remainder
  // bit (on the entry's side's string), which the entry then gives up.
  constexpr uint32_t W = sizeof(S) * 8;
  constexpr uint32_t kFirst = W - kOverheadBits;
  constexpr uint32_t kTail = (uint32_t{1} << (kFirst + 1)) - 1;
  for (const uint32_t v : in_table) {
    if (v == 0) continue;
    if (std::countr_zero(v) == static_cast<int>(kFirst)) {
      (void)place_free(t, bucket, v);
      (void)place_free(t, sibling, v);
      count_entry(q, -1);
      count_entry(q + 1, 2);
      ++entries_;
      continue;
    }
    const uint64_t mask = v >> (W - 1) ? kRevMasks[(v >> (W - 1 - kTagBits)) & (kTags - 1)] : 0;
    const uint32_t bit = ((v >> kFirst) ^ static_cast<uint32_t>(mask >> q)) & 1;
    (void)place_free(t, bit ? sibling : bucket, (v & ~kTail) | ((v << 1) & kTail));
  }
  // The stashed entries of the split bucket may fit now; those that do not go back.
  auto retry = [&](uint64_t to, uint32_t v) {
    if (!place(t, to, v)) stash_push({to, v});
  };
  for (uint32_t i = 0; i < ns; ++i) rehome(from_stash[i], retry);
  for (const Decoded& d : more) rehome(d, retry);
}

void ExpandableFilter::split_bucket() {
  if (wide_) split_in(t32_);
  else split_in(t16_);
}

void ExpandableFilter::widen() {
  Table<uint32_t> to;
  to.reserve(t16_.capacity());
  to.resize(t16_.size());
  for (size_t i = 0; i < t16_.size(); ++i) to[i] = uint32_t{t16_[i]} << 16;
  Table<uint16_t>().swap(t16_);
  t32_ = std::move(to);
  for (Homeless& e : stash_) e.value <<= 16;
  wide_ = true;
}

bool ExpandableFilter::stash_matches(uint64_t b1, uint64_t b2, uint32_t k1, uint32_t k2) const noexcept {
  for (const Homeless& e : stashed_in(b1))
    if (matches(e.value, k1)) return true;
  for (const Homeless& e : stashed_in(b2))
    if (matches(e.value, k2)) return true;
  return false;
}

std::span<const ExpandableFilter::Homeless> ExpandableFilter::stashed_in(uint64_t bucket) const noexcept {
  const auto by_bucket = [](const Homeless& e, uint64_t b) { return e.bucket < b; };
  const auto first = std::lower_bound(stash_.begin(), stash_.end(), bucket, by_bucket);
  auto last = first;
  while (last != stash_.end() && last->bucket == bucket) ++last;
  return {first, last};
}

void ExpandableFilter::stash_push(Homeless e) {
  const auto at = std::upper_bound(stash_.begin(), stash_.end(), e.bucket,
                                   [](uint64_t b, const Homeless& x) { return b < x.bucket; });
  stash_.insert(at, e);
}

void ExpandableFilter::recount() {
  hist_ = {};
  weight_ = 0;
  entries_ = 0;
  const uint32_t w = slot_bits();
  auto check = [&](uint64_t bucket, uint32_t v) {
    if (v == 0) return;
    const uint32_t l = level_of(bucket);
    const uint32_t z = static_cast<uint32_t>(std::countr_zero(v));
    if (z > w - kOverheadBits || w - kOverheadBits - z > new_remainder_bits(l))
      throw Error(Errc::corrupt, "expandable filter: a slot holds an impossible entry (" + std::to_string(v) + ")");
    count_entry(l + w - kOverheadBits - z, 1);
    ++entries_;
  };
  for (uint64_t i = 0; i < slots(); ++i) check(i / kBucketSize, wide_ ? t32_[i] : t16_[i]);
  for (const Homeless& e : stash_) check(e.bucket, e.value);
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
  p.u64(split_);
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
  // Params of 56 bytes: the first layout, a table of 2^q buckets doubled as a whole,
  // its buckets in address order (docs/format.md); converted on load.
  const bool doubling = p.remaining() == 0;
  const uint64_t split = doubling ? 0 : p.u64();
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
  if (split >= (uint64_t{1} << level) || (level == kMaxLevel && split != 0))
    throw Error(Errc::corrupt, "expandable filter: split pointer " + std::to_string(split) + " at level " +
                                   std::to_string(level));
  if (!(fpp >= kMinFpp && fpp <= kMaxFpp))
    throw Error(Errc::corrupt, "expandable filter: target false-positive rate " + std::to_string(fpp) +
                                   " outside [1e-05, 0.5]");
  const uint64_t buckets = (uint64_t{1} << level) + split;
  const uint64_t table = buckets * kBucketSize * (bits / 8);
  // The payload's length is checked before anything is allocated (the stash count is
  // bounded by the payload's real size first, so the product cannot overflow).
  if (stashed > c.payload.size() / kStashEntryBytes || c.payload.size() != table + kStashEntryBytes * stashed)
    throw Error(Errc::corrupt, "expandable filter: payload of " + std::to_string(c.payload.size()) + " bytes, " +
                                   std::to_string(buckets) + " buckets of " + std::to_string(bits) +
                                   "-bit slots and " + std::to_string(stashed) + " stashed entries need " +
                                   std::to_string(table) + " + " + std::to_string(kStashEntryBytes) + " x " +
                                   std::to_string(stashed));
  ExpandableFilter f;
  f.fpp_ = fpp;
  f.seed_ = seed;
  f.rng_ = detail::splitmix64(seed) | 1;
  f.widen_at_ = static_cast<Weight>(std::ldexp(kWidenAt * fpp, 64));
  f.level_ = level;
  f.split_ = split;
  f.wide_ = bits == 32;
  Table<uint16_t>().swap(f.t16_);
  // Bucket i of the first layout is the first q bits of the string, most significant
  // first; here it is bucket i read backwards.
  auto place_of = [&](uint64_t i) { return doubling && level ? rev64(i) >> (64 - level) : i; };
  const size_t bucket_bytes = kBucketSize * (bits / 8);
  auto copy_table = [&](auto& t) {
    t.resize(f.slots());
    if (!doubling) {
      std::memcpy(t.data(), c.payload.data(), table);
      return;
    }
    for (uint64_t i = 0; i < buckets; ++i)
      std::memcpy(t.data() + place_of(i) * kBucketSize, c.payload.data() + i * bucket_bytes, bucket_bytes);
  };
  if (f.wide_) copy_table(f.t32_);
  else copy_table(f.t16_);
  const std::byte* at = c.payload.data() + table;
  for (uint64_t i = 0; i < stashed; ++i, at += kStashEntryBytes) {
    const uint64_t bucket = detail::load_le64(at), value = detail::load_le64(at + 8);
    if (bucket >= f.num_buckets() || value == 0 || value >> bits != 0)
      throw Error(Errc::corrupt, "expandable filter: stashed entry " + std::to_string(i) + " is impossible");
    f.stash_.push_back({place_of(bucket), static_cast<uint32_t>(value)});
  }
  // Kept in bucket order (files list them in any order).
  std::stable_sort(f.stash_.begin(), f.stash_.end(),
                   [](const Homeless& a, const Homeless& b) { return a.bucket < b.bucket; });
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
