// GolombCodedSet: build, bucketed queries, iteration and the amq container (Kind::gcs).
#include "amq/golomb_coded_set.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "amq/detail/bit_stream.hpp"
#include "amq/detail/byte_io.hpp"
#include "amq/detail/golomb_code.hpp"
#include "amq/detail/prefetch.hpp"
#include "amq/error.hpp"
#include "amq/format.hpp"

namespace amq {
namespace {

constexpr size_t kGuardBytes = 16;
constexpr uint64_t kMaxRangePerKey = uint64_t{1} << 40;

uint64_t range_per_key_for(double fpp) {
  if (!(fpp > 0.0 && fpp <= 0.5))
    throw Error(Errc::invalid_argument, "false-positive probability must be in (0, 0.5], got " + std::to_string(fpp));
  const double m = std::round(1.0 / fpp);
  if (m > static_cast<double>(kMaxRangePerKey))
    throw Error(Errc::invalid_argument, "false-positive probability " + std::to_string(fpp) + " is below 2^-40");
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

}  // namespace

GolombCodedSet::GolombCodedSet() : GolombCodedSet(from_hashes({}, Options{})) {}

GolombCodedSet GolombCodedSet::from_hashes(std::vector<uint64_t> hashes, const Options& options, uint32_t hasher_id) {
  if (options.coding != Coding::golomb && options.coding != Coding::rice)
    throw Error(Errc::invalid_argument, "unknown Golomb coding");
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
  s.stream_.assign(kGuardBytes, std::byte{0});
  s.stream_.insert(s.stream_.end(), bytes.begin(), bytes.end());
  s.stream_.resize(s.stream_.size() + kGuardBytes, std::byte{0});
  s.rem_bits_ = code.remainder_bits();
  s.cutoff_ = code.cutoff();
  s.build_index(offsets);
  return s;
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

uint64_t GolombCodedSet::hash_key(KeyView key) const {
  switch (hasher_id_) {
    case Xxh3Hasher::id: return Xxh3Hasher{seed_}(key.bytes());
    case Xxh64Hasher::id: return Xxh64Hasher{seed_}(key.bytes());
    default: break;
  }
  throw Error(Errc::unsupported, "this Golomb-coded set was built with a custom hasher (id " +
                                     std::to_string(hasher_id_) + "): query it with contains_hash()");
}

namespace {

// Bits [e - 57, e) of the stream, bit e - 1 in the lowest place (>= 57 valid bits; the
// stream has zero guard bytes before it).
inline uint64_t load_back(const std::byte* p, uint64_t e) noexcept {
  const uint64_t last = (e - 1) >> 3;
  return detail::load_be64(p + last - 7) >> (7 - ((e - 1) & 7));
}

}  // namespace

// Calls f(value) for the values of bucket b in order until f returns false. A bucket
// is two streams read at once: remainders forward from its start, unary quotients
// backwards from its end; they meet after the last code. Each is read through a
// 64-bit window refilled only when needed, and the truncated-binary choice is made
// without a branch.
template <class F>
inline void GolombCodedSet::scan_bucket(uint64_t b, F&& f) const noexcept {
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

bool GolombCodedSet::contains_value(uint64_t v) const noexcept {
  if (v >= range_) return false;
  bool found = false;
  scan_bucket(v / width_, [&](uint64_t cur) {
    if (cur < v) return true;
    found = cur == v;
    return false;
  });
  return found;
}

size_t GolombCodedSet::contains_many_hashes(std::span<const uint64_t> hashes, std::span<bool> out) const {
  struct Q {
    uint64_t v;
    size_t i;
  };
  std::vector<Q> qs(hashes.size());
  for (size_t i = 0; i < hashes.size(); ++i) qs[i] = {reduce(hashes[i], range_), i};
  std::sort(qs.begin(), qs.end(), [](const Q& a, const Q& b) { return a.v < b.v; });
  size_t found = 0;
  // One pass: the queries of a bucket are answered in a single scan of it.
  for (size_t at = 0; at < qs.size();) {
    const uint64_t b = qs[at].v / width_;
    size_t stop = at;
    while (stop < qs.size() && qs[stop].v / width_ == b) out[qs[stop++].i] = false;
    size_t next = at;
    scan_bucket(b, [&](uint64_t cur) {
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
// params: u32 hasher id, u8 coding, u8 offset width (16/32), u16 zero, u64 seed,
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
  params.u16(0);
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
  const uint16_t reserved = p.u16();
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
  if (coding > 1) throw bad("unknown coding " + std::to_string(coding));
  s.coding_ = static_cast<Coding>(coding);
  if (width_bits != 16 && width_bits != 32) throw bad("offset width " + std::to_string(width_bits) + " is not 16 or 32");
  s.wide_ = width_bits == 32;
  if (reserved != 0) throw bad("reserved field is not zero");
  if (s.m_ < 2 || s.m_ > kMaxRangePerKey) throw bad("range per key " + std::to_string(s.m_) + " out of 2..2^40");
  const unsigned __int128 range = static_cast<unsigned __int128>(std::max<uint64_t>(s.keys_, 1)) * s.m_;
  if (range > (static_cast<unsigned __int128>(1) << 63) || static_cast<uint64_t>(range) != s.range_)
    throw bad("range " + std::to_string(s.range_) + " is not keys x range per key");
  if (s.values_ > s.keys_) throw bad("more values than keys");
  if (s.divisor_ != divisor_for(s.m_, s.coding_)) throw bad("divisor " + std::to_string(s.divisor_) + " does not match M");
  if (s.width_ != width_for(s.m_, s.range_, s.coding_)) throw bad("bucket width does not match M");
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
  s.stream_.assign(kGuardBytes, std::byte{0});
  s.stream_.insert(s.stream_.end(), stream.begin(), stream.end());
  s.stream_.resize(s.stream_.size() + kGuardBytes, std::byte{0});
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
  s.validate();
  return s;
}

// Every bucket offset in order and inside the stream, every bucket decoding to exactly
// its bits with ascending values inside the bucket, and the value count right.
void GolombCodedSet::validate() const {
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
