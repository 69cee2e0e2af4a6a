#include "amq/binary_fuse_filter.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "amq/detail/byte_io.hpp"
#include "amq/detail/file_storage.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "amq/format.hpp"

namespace amq {

namespace {

constexpr uint64_t kMaxSegmentLength = uint64_t{1} << 18;
constexpr uint64_t kMaxSlots = std::numeric_limits<uint32_t>::max();  // the peeling queue keeps 32-bit slots
constexpr size_t kParamsSize = 40;
// The params' hasher ids (amq's global list, docs/format.md): 1, XXH3-64 of every key
// (files written before hasher 5); 5, XXH3-64 except that an 8-byte key is its
// little-endian value (BinaryFuseFilter::key_hash).
constexpr uint32_t kHasherXxh3 = 1, kHasherIntKeys = 5;

struct Layout {
  uint64_t seg_len = 4;
  uint64_t seg_count = 0;
  uint64_t slots = 0;
};

// The paper's segment length and size factor for n keys (see the header).
Layout layout_for(uint64_t n, unsigned arity) {
  Layout l;
  if (n == 0) return l;
  const double ln = std::log(static_cast<double>(n));
  const double e = arity == 3 ? std::floor(ln / std::log(3.33) + 2.25) : std::floor(ln / std::log(2.91) - 0.5);
  l.seg_len = uint64_t{1} << static_cast<int>(std::clamp(e, 2.0, 18.0));
  double factor = 0;
  if (n > 1)
    factor = arity == 3 ? std::max(1.125, 0.875 + 0.25 * std::log(1e6) / ln)
                        : std::max(1.075, 0.77 + 0.305 * std::log(600000.0) / ln);
  const uint64_t capacity = static_cast<uint64_t>(std::llround(static_cast<double>(n) * factor));
  const uint64_t segs = (capacity + l.seg_len - 1) / l.seg_len;
  l.seg_count = segs > arity - 1 ? segs - (arity - 1) : 1;
  l.slots = (l.seg_count + arity - 1) * l.seg_len;
  return l;
}

// Reorders v so that values with equal top `bits` bits are adjacent, in ascending order
// of those bits (one counting pass, then in-place cycles: no second array).
void group_by_top_bits(std::vector<uint64_t>& v, int bits) {
  if (bits <= 0 || v.size() < 2) return;
  const int shift = 64 - bits;
  std::vector<size_t> next(size_t{1} << bits, 0), end(size_t{1} << bits);
  for (uint64_t x : v) ++next[x >> shift];
  size_t sum = 0;
  for (size_t b = 0; b < next.size(); ++b) {
    const size_t c = next[b];
    next[b] = sum;
    sum += c;
    end[b] = sum;
  }
  for (size_t b = 0; b < next.size(); ++b) {
    while (next[b] < end[b]) {
      uint64_t x = v[next[b]];
      size_t t = x >> shift;
      while (t != b) {  // carry x to its bucket, picking up what was there
        std::swap(x, v[next[t]++]);
        t = x >> shift;
      }
      v[next[b]++] = x;
    }
  }
}

int lane_of(unsigned w) { return w == 8 ? 1 : w == 16 ? 2 : w == 32 ? 4 : 0; }

// Native widths: the plain array; others: the packed bits in whole words, then a zero
// word (so every slot can be read with one 8-byte load).
uint64_t payload_bytes_for(uint64_t slots, unsigned w) {
  if (slots == 0) return 0;
  const int lane = lane_of(w);
  if (lane) return slots * static_cast<uint64_t>(lane);
  return (slots * w + 63) / 64 * 8 + 8;
}

void check_options(const BinaryFuseOptions& o) {
  if (o.arity != 3 && o.arity != 4)
    throw Error(Errc::invalid_argument, "binary fuse filter: arity must be 3 or 4, not " + std::to_string(o.arity));
  if (o.fingerprint_bits < 1 || o.fingerprint_bits > 32)
    throw Error(Errc::invalid_argument, "binary fuse filter: fingerprint bits must be 1 to 32, not " +
                                            std::to_string(o.fingerprint_bits));
}

}  // namespace

BinaryFuseFilter::BinaryFuseFilter() : BinaryFuseFilter(build_hashes({}, {})) {}

unsigned BinaryFuseFilter::bits_for_fpp(double fpp) {
  if (!(fpp > 0 && fpp < 1))
    throw Error(Errc::invalid_argument, "binary fuse filter: the false-positive rate must be in (0, 1)");
  const double bits = std::ceil(std::log2(1.0 / fpp) - 1e-9);
  return static_cast<unsigned>(std::clamp(bits, 1.0, 32.0));
}

uint64_t BinaryFuseFilter::slots_for(uint64_t n, unsigned arity) { return layout_for(n, arity).slots; }

unsigned BinaryFuseFilter::best_arity(uint64_t n) { return slots_for(n, 4) < slots_for(n, 3) ? 4 : 3; }

double BinaryFuseFilter::expected_fpp() const noexcept { return n_ == 0 ? 0.0 : std::ldexp(1.0, -static_cast<int>(width_)); }

std::span<const std::byte> BinaryFuseFilter::bytes() const noexcept { return storage_->bytes(); }
bool BinaryFuseFilter::is_mapped() const noexcept { return storage_->is_mapped(); }

std::vector<std::byte> BinaryFuseFilter::serialize() const {
  const auto b = bytes();
  return {b.begin(), b.end()};
}

BinaryFuseFilter BinaryFuseFilter::build_hashes(std::span<const uint64_t> hashes, const Options& options) {
  const auto fill = [](const void* c, std::vector<uint64_t>& out) {
    const auto& h = *static_cast<const std::span<const uint64_t>*>(c);
    out.assign(h.begin(), h.end());
  };
  return build_from({&hashes, fill}, hashes.size(), options);
}

// build_from's steps, in the order it takes them: lay the slots out, mix the hashes with
// a construction seed, count each key into its slots, peel, and assign the fingerprints
// in reverse peeling order; a seed whose keys do not peel is replaced by the next.
struct BinaryFuseFilter::Builder {
  BinaryFuseFilter f{Raw{}};  // the query side's fields, for positions() and fingerprint()
  const unsigned arity;
  // Large arrays on 2 MiB pages, for the random accesses of the peeling.
  std::vector<uint8_t, detail::HugePageAllocator<uint8_t>> count;  // per slot: keys << 2 | XOR of position indices
  std::vector<uint64_t, detail::HugePageAllocator<uint64_t>> xors;  // per slot: XOR of the keys' mixed hashes
  std::vector<uint8_t, detail::HugePageAllocator<uint8_t>> peeled_at;  // per peeled key: which of its slots
  std::vector<uint32_t> pending;  // slots left with one key, not yet peeled (a queue)

  explicit Builder(const Options& options) : arity(options.arity) {
    f.arity_ = arity;
    f.width_ = options.fingerprint_bits;
    f.fp_mask_ = (uint64_t{1} << f.width_) - 1;
    f.lane_ = lane_of(f.width_);
  }

  void find_peeling_seed(std::vector<uint64_t>& xs, HashSource source, Layout layout, uint64_t seed_state);
  static void drop_repeats(std::vector<uint64_t>& xs, const std::vector<uint64_t>& repeats);
  void lay_out(const Layout& layout, uint64_t n);
  bool count_keys(const std::vector<uint64_t>& xs);
  template <unsigned A>
  bool count_keys(const std::vector<uint64_t>& xs);
  bool peel(std::vector<uint64_t>& xs);
  template <unsigned A>
  bool peel(std::vector<uint64_t>& xs);
  std::array<std::byte, kParamsSize> params(uint64_t hash_seed) const;
  void assign_fingerprints(std::span<std::byte> payload, const std::vector<uint64_t>& peeled);
  template <unsigned A, int Lane>
  void assign_fingerprints(std::byte* out, const std::vector<uint64_t>& peeled);
};

// Tries construction seeds until the keys peel. Each try starts from the keys' hashes
// (the last try's peeling order overwrote them) mixed with its seed. Equal hashes never
// peel, and they are all the keys that remain unpeeled in a failed try but for a few:
// after a failure the keys are hashed again, those whose slots all still hold keys are
// sorted to find the repeated values, and every later try drops the repeats (keeping
// one of each) and lays the array out anew for the keys that remain. When a count
// overflowed (no peeling took place) all the keys are sorted to find them.
void BinaryFuseFilter::Builder::find_peeling_seed(std::vector<uint64_t>& xs, HashSource source, Layout layout,
                                                  uint64_t seed_state) {
  std::vector<uint64_t> repeats;  // sorted: hash values seen more than once
  for (unsigned attempt = 0;; ++attempt) {
    if (attempt == kMaxSeeds)
      throw Error(Errc::invalid_argument, "binary fuse filter: no construction seed peeled " + std::to_string(xs.size()) +
                                     " keys in " + std::to_string(kMaxSeeds) + " tries");
    if (!repeats.empty()) {
      drop_repeats(xs, repeats);
      layout = layout_for(xs.size(), arity);
    }
    f.seed_ = detail::splitmix64(seed_state += 0x9E3779B97F4A7C15ULL);
    const uint64_t seed = f.seed_;
    for (uint64_t& v : xs) v = detail::murmur3_fmix64(v + seed);  // mix(v)
    lay_out(layout, xs.size());
    // In order of their first slot (x's top bits), keys touch a window of a few
    // segments at a time instead of the whole array.
    if (layout.seg_count > 8) group_by_top_bits(xs, std::min(16, static_cast<int>(std::bit_width(layout.seg_count - 1))));
    const bool counted = count_keys(xs);
    if (counted && peel(xs)) return;
    source.fill(source.context, xs);  // for the next try, unmixed
    // A key peeled leaves its peeling slot at count 0; a key left unpeeled holds all of
    // its slots. Repeats are never peeled, so all of them are among the latter, which
    // are moved to the front and sorted there (in place: no memory beyond xs).
    auto held = [&](uint64_t h) {
      uint64_t p[4];
      positions_in<4>(f.mix(h), f.count_len_, f.seg_len_, p);
      bool all = true;
      for (unsigned j = 0; j < arity; ++j) all &= count[p[j]] != 0;
      return all;
    };
    const auto left = counted ? std::partition(xs.begin(), xs.end(), held) : xs.end();
    std::sort(xs.begin(), left);
    for (auto it = xs.begin(); it != left && it + 1 != left; ++it)
      if (it[0] == it[1]) repeats.push_back(it[0]);
    std::sort(repeats.begin(), repeats.end());
    repeats.erase(std::unique(repeats.begin(), repeats.end()), repeats.end());
  }
}

// Keeps the first of each value in `repeats` (sorted) and every other value, in order.
void BinaryFuseFilter::Builder::drop_repeats(std::vector<uint64_t>& xs, const std::vector<uint64_t>& repeats) {
  std::vector<bool> kept(repeats.size(), false);
  size_t out = 0;
  for (const uint64_t h : xs) {
    const auto it = std::lower_bound(repeats.begin(), repeats.end(), h);
    if (it != repeats.end() && *it == h) {
      const size_t r = static_cast<size_t>(it - repeats.begin());
      if (kept[r]) continue;
      kept[r] = true;
    }
    xs[out++] = h;
  }
  xs.resize(out);
}

void BinaryFuseFilter::Builder::lay_out(const Layout& layout, uint64_t n) {
  f.seg_len_ = layout.seg_len;
  f.seg_mask_ = layout.seg_len - 1;
  f.seg_count_ = layout.seg_count;
  f.count_len_ = layout.seg_count * layout.seg_len;
  f.slots_ = layout.slots;
  f.n_ = n;
}

// Counts each key into its slots and XORs it into them; false if a slot's count would
// overflow its 6 bits (such keys cannot peel with this seed).
bool BinaryFuseFilter::Builder::count_keys(const std::vector<uint64_t>& xs) {
  count.assign(f.slots_, 0);
  xors.assign(f.slots_, 0);
  return arity == 3 ? count_keys<3>(xs) : count_keys<4>(xs);
}

// The loops below keep the layout in locals: their byte stores could alias the fields
// of `f`, which the compiler would then reload after every store.
template <unsigned A>
bool BinaryFuseFilter::Builder::count_keys(const std::vector<uint64_t>& xs) {
  uint8_t* const cnt = count.data();
  uint64_t* const xr = xors.data();
  const uint64_t count_len = f.count_len_, seg_len = f.seg_len_;
  uint8_t high = 0;
  uint64_t p[4];
  for (const uint64_t x : xs) {
    positions_in<A>(x, count_len, seg_len, p);
    for (unsigned j = 0; j < A; ++j) {
      const uint8_t c = cnt[p[j]];
      high |= c;
      cnt[p[j]] = static_cast<uint8_t>((c + 4) ^ j);
      xr[p[j]] ^= x;
    }
  }
  // `high` (the OR of every count before its increment) is at least 0x80 when any
  // count reached 32 keys: a conservative test for the 6-bit overflow (at 64 keys),
  // which for distinct hashes practically never fires, and sends repeats to the retry.
  return high < 0x80;
}

// Peel: a slot with one key gives it that key, which leaves its other slots; a slot
// that this leaves with one key goes on the queue of pending slots, which is emptied
// before the scan of the slots goes on (so the peeling stays within a few segments).
// The slots of the key 4 places ahead in the queue are prefetched: the queue's order
// (rather than a stack's) makes that the key peeled 4 steps later, unless it leaves.
// The peeled keys' mixed hashes are written over xs, in peeling order, and which of its
// slots each was peeled from into peeled_at. True when every key peeled.
bool BinaryFuseFilter::Builder::peel(std::vector<uint64_t>& xs) { return arity == 3 ? peel<3>(xs) : peel<4>(xs); }

template <unsigned A>
bool BinaryFuseFilter::Builder::peel(std::vector<uint64_t>& xs) {
  const uint64_t n = f.n_, slots = f.slots_, count_len = f.count_len_, seg_len = f.seg_len_;
  uint8_t* const cnt = count.data();
  uint64_t* const xr = xors.data();
  uint64_t* const out = xs.data();
  peeled_at.resize(n);
  uint8_t* const at = peeled_at.data();
  // The queue in locals, grown by hand: a std::vector's own pointers would be reloaded
  // after every byte store.
  if (pending.size() < 1024) pending.resize(1024);
  uint32_t* queue = pending.data();
  size_t tail = 0, room = pending.size();
  uint64_t top = 0;
  size_t head = 0;  // pending: queue[head, tail)
  for (uint64_t s = 0; s < slots && top < n; ++s) {
    if ((cnt[s] >> 2) != 1) continue;
    head = 0;
    tail = 0;
    queue[tail++] = static_cast<uint32_t>(s);
    while (head < tail) {
      if (head + 4 < tail) {
        const uint64_t y = xr[queue[head + 4]];
        uint64_t r[4];
        positions_in<A>(y, count_len, seg_len, r);
        for (unsigned m = 0; m < A; ++m) {
          detail::prefetch(xr + r[m]);
          detail::prefetch(cnt + r[m]);
        }
      }
      const uint64_t t = queue[head++];
      if ((cnt[t] >> 2) != 1) continue;  // its key left through another of its slots
      const uint64_t x = xr[t];
      const unsigned j = cnt[t] & 3;
      cnt[t] = 0;
      at[top] = static_cast<uint8_t>(j);
      out[top++] = x;
      uint64_t q[4];
      positions_in<A>(x, count_len, seg_len, q);
      if (tail + A > room) {
        pending.resize(2 * room);
        queue = pending.data();
        room = pending.size();
      }
      for (unsigned m = 0; m < A; ++m) {
        if (m == j) continue;
        const uint8_t c = static_cast<uint8_t>((cnt[q[m]] - 4) ^ m);
        cnt[q[m]] = c;
        xr[q[m]] ^= x;
        queue[tail] = static_cast<uint32_t>(q[m]);
        tail += (c >> 2) == 1;
      }
    }
  }
  return top == n;
}

// The params (docs/format.md), written field by field into their fixed 40 bytes.
std::array<std::byte, kParamsSize> BinaryFuseFilter::Builder::params(uint64_t hash_seed) const {
  std::array<std::byte, kParamsSize> params{};
  const uint32_t hasher_id = kHasherIntKeys, seg_len32 = static_cast<uint32_t>(f.seg_len_),
                 seg_count32 = static_cast<uint32_t>(f.seg_count_);
  std::memcpy(params.data(), &hasher_id, 4);
  params[4] = std::byte{static_cast<uint8_t>(arity)};
  params[5] = std::byte{static_cast<uint8_t>(f.width_)};
  detail::store_le64(params.data() + 8, hash_seed);
  detail::store_le64(params.data() + 16, f.seed_);
  detail::store_le64(params.data() + 24, f.n_);
  std::memcpy(params.data() + 32, &seg_len32, 4);
  std::memcpy(params.data() + 36, &seg_count32, 4);
  return params;
}

// In reverse peeling order each key's slot is the last of its slots to be set: it gets
// the key's fingerprint XOR the other slots' values.
void BinaryFuseFilter::Builder::assign_fingerprints(std::span<std::byte> payload, const std::vector<uint64_t>& peeled) {
  if (payload.empty()) return;
  std::memset(payload.data(), 0, payload.size());
  f.fp_ = payload.data();
  std::byte* const out = payload.data();
  const bool three = arity == 3;
  switch (f.lane_) {
    case 1: return three ? assign_fingerprints<3, 1>(out, peeled) : assign_fingerprints<4, 1>(out, peeled);
    case 2: return three ? assign_fingerprints<3, 2>(out, peeled) : assign_fingerprints<4, 2>(out, peeled);
    case 4: return three ? assign_fingerprints<3, 4>(out, peeled) : assign_fingerprints<4, 4>(out, peeled);
    default: return three ? assign_fingerprints<3, 0>(out, peeled) : assign_fingerprints<4, 0>(out, peeled);
  }
}

template <unsigned A, int Lane>
void BinaryFuseFilter::Builder::assign_fingerprints(std::byte* const out, const std::vector<uint64_t>& peeled) {
  const uint64_t count_len = f.count_len_, seg_len = f.seg_len_, mask = f.fp_mask_;
  const unsigned w = f.width_;
  auto get = [&](uint64_t i) { return slot_at<Lane>(out, i, w, mask); };

  // The slot a key was peeled from is still zero (each slot is given to one key), so
  // all of the key's slots are XORed.
  const uint8_t* const at = peeled_at.data();
  for (uint64_t k = f.n_; k-- > 0;) {
    const uint64_t x = peeled[k];
    uint64_t q[4];
    positions_in<A>(x, count_len, seg_len, q);
    const uint64_t s = q[at[k]];
    uint64_t v = (x ^ (x >> 32)) & mask;  // fingerprint(x)
    for (unsigned m = 0; m < A; ++m) v ^= get(q[m]);
    if constexpr (Lane == 1) {
      out[s] = std::byte{static_cast<uint8_t>(v)};
    } else if constexpr (Lane == 2) {
      const uint16_t v16 = static_cast<uint16_t>(v);
      std::memcpy(out + 2 * s, &v16, 2);
    } else if constexpr (Lane == 4) {
      const uint32_t v32 = static_cast<uint32_t>(v);
      std::memcpy(out + 4 * s, &v32, 4);
    } else {
      const uint64_t bit = s * w;
      uint64_t word;
      std::memcpy(&word, out + (bit >> 3), 8);
      word |= v << (bit & 7);
      std::memcpy(out + (bit >> 3), &word, 8);
    }
  }
}

BinaryFuseFilter BinaryFuseFilter::build_from(HashSource source, uint64_t n, const Options& options) {
  check_options(options);
  const Layout layout = layout_for(n, options.arity);
  if (layout.slots > kMaxSlots)
    throw Error(Errc::too_large, "binary fuse filter: " + std::to_string(n) + " keys need more than 2^32 - 1 slots");
  // The keys' hashes, ours to reorder: each try replaces them by their mixed values,
  // groups those by their first slot, and overwrites them with the peeling order.
  std::vector<uint64_t> xs;
  source.fill(source.context, xs);
  Builder b(options);
  b.find_peeling_seed(xs, source, layout, options.seed);
  // The peeling order is all the fill needs: free the rest before allocating.
  decltype(b.count)().swap(b.count);
  decltype(b.xors)().swap(b.xors);
  std::vector<uint32_t>().swap(b.pending);

  const auto params = b.params(options.seed);
  const uint64_t payload_len = payload_bytes_for(b.f.slots_, b.f.width_);
  // Lookups read 3 or 4 random slots: a large array on 2 MiB pages misses the TLB far less.
  auto storage = detail::FileStorage::allocate(container_size(params.size(), payload_len));
  write_container_to(storage->writable(), Kind::binary_fuse, params, payload_len,
                     [&](std::span<std::byte> payload) { b.assign_fingerprints(payload, xs); });
  return from_storage(std::move(storage), false);
}

BinaryFuseFilter BinaryFuseFilter::load(std::span<const std::byte> file) {
  return from_storage(detail::FileStorage::copy(file), true);
}

BinaryFuseFilter BinaryFuseFilter::open(const std::string& path, bool verify_checksum) {
  auto s = detail::FileStorage::map(path);
  try {
    return from_storage(std::move(s), verify_checksum);
  } catch (const Error& e) {
    throw Error(e.code(), path + ": " + e.what());
  }
}

BinaryFuseFilter BinaryFuseFilter::from_storage(std::shared_ptr<const detail::FileStorage> storage,
                                                bool verify_checksum) {
  const Container c = parse_container(storage->bytes(), Kind::binary_fuse, verify_checksum);
  auto corrupt = [](const std::string& m) { return Error(Errc::corrupt, "binary fuse filter: " + m); };
  detail::ByteReader r(c.params, "binary fuse filter params");
  const uint32_t hasher = r.u32();
  const unsigned arity = r.u8();
  const unsigned w = r.u8();
  const uint16_t reserved = r.u16();
  BinaryFuseFilter f{Raw{}};
  f.hash_seed_ = r.u64();
  f.seed_ = r.u64();
  f.n_ = r.u64();
  f.seg_len_ = r.u32();
  f.seg_count_ = r.u32();
  r.expect_end();
  if (hasher != kHasherXxh3 && hasher != kHasherIntKeys)
    throw Error(Errc::unsupported, "binary fuse filter: hash function " + std::to_string(hasher) +
                                       " is not supported (only 1, XXH3-64, and 4, XXH3-64 with 8-byte keys as integers)");
  f.int_keys_ = hasher == kHasherIntKeys;
  if (arity != 3 && arity != 4) throw corrupt("arity " + std::to_string(arity) + " (must be 3 or 4)");
  if (w < 1 || w > 32) throw corrupt("fingerprint width " + std::to_string(w) + " (must be 1 to 32)");
  if (reserved != 0) throw corrupt("reserved field is not zero");
  if (f.seg_len_ == 0 || f.seg_len_ > kMaxSegmentLength || (f.seg_len_ & (f.seg_len_ - 1)) != 0)
    throw corrupt("segment length " + std::to_string(f.seg_len_) + " (must be a power of two up to 2^18)");
  // Both 32-bit fields: the products below stay far from overflowing.
  f.slots_ = f.seg_count_ == 0 ? 0 : (f.seg_count_ + arity - 1) * f.seg_len_;
  if (f.n_ > f.slots_)
    throw corrupt(std::to_string(f.n_) + " keys in " + std::to_string(f.slots_) + " slots");
  if ((f.n_ == 0) != (f.seg_count_ == 0)) throw corrupt("a key count of zero goes with zero segments, and only then");
  const uint64_t expect = payload_bytes_for(f.slots_, w);
  if (c.payload.size() != expect)
    throw corrupt("payload of " + std::to_string(c.payload.size()) + " bytes, the layout needs " +
                  std::to_string(expect));
  f.arity_ = arity;
  f.width_ = w;
  f.fp_mask_ = (uint64_t{1} << w) - 1;
  f.lane_ = lane_of(w);
  f.seg_mask_ = f.seg_len_ - 1;
  f.count_len_ = f.seg_count_ * f.seg_len_;
  f.payload_bytes_ = c.payload.size();
  f.shape_ = shape_for(f.slots_, w, arity);
  f.fp_ = c.payload.data();
  if (f.lane_ == 0 && expect > 0) {
    // The bits after the last slot, and the read-ahead word, are zero.
    const uint64_t used = f.slots_ * w;
    for (uint64_t b = used; b < (expect - 8) * 8; ++b)
      if ((std::to_integer<unsigned>(f.fp_[b >> 3]) >> (b & 7)) & 1) throw corrupt("non-zero bits after the last slot");
    for (uint64_t i = expect - 8; i < expect; ++i)
      if (f.fp_[i] != std::byte{0}) throw corrupt("non-zero padding after the slots");
  }
  f.set_kernels();
  f.storage_ = std::move(storage);
  return f;
}

void BinaryFuseFilter::set_kernels() noexcept {
  inline_kernel_ = (shape_ == Shape::u8x3 || shape_ == Shape::u8x4) && int_keys_;
  const auto take = [this]<int Lane, unsigned A>() {
    key8_ = int_keys_ ? key8_kernel<Lane, A, true> : key8_kernel<Lane, A, false>;
    bytes_ = int_keys_ ? bytes_kernel<Lane, A, true> : bytes_kernel<Lane, A, false>;
    hash_ = hash_kernel<Lane, A>;
  };
  if (!for_shape(take)) {
    key8_ = key8_none;
    bytes_ = bytes_none;
    hash_ = key8_none;
  }
}

}  // namespace amq
