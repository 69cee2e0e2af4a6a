// GolombCodedSet in the amq container (Kind::gcs): write, load and validate. A loaded set
// is checked bucket by bucket before its first query: a damaged or hostile file is an
// amq::Error, never a crash.
#include <algorithm>
#include <cstdint>
#include <string>

#include "amq/detail/bit_stream.hpp"
#include "amq/detail/byte_io.hpp"
#include "amq/detail/golomb_code.hpp"
#include "amq/error.hpp"
#include "amq/format.hpp"
#include "amq/golomb_coded_set.hpp"
#include "internal.hpp"

namespace amq {
namespace {

using namespace detail::gcs;

Error bad(const std::string& what) { return Error(Errc::corrupt, "Golomb-coded set: " + what); }

}  // namespace

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
  GolombCodedSet s{Raw{}};
  const uint16_t layout = s.read_params(c.params);
  s.read_payload(c.payload);
  const detail::GolombCode code(s.divisor_);
  s.rem_bits_ = code.remainder_bits();
  s.cutoff_ = code.cutoff();
  s.prepare_queries();
  s.validate(layout == 1);
  if (layout == 1) s.convert_gap_bytes();
  return s;
}

// Reads and checks the params; returns the layout.
uint16_t GolombCodedSet::read_params(std::span<const std::byte> params) {
  detail::ByteReader p(params, "Golomb-coded set params");
  hasher_id_ = p.u32();
  const uint8_t coding = p.u8();
  const uint8_t width_bits = p.u8();
  const uint16_t layout = p.u16();
  seed_ = p.u64();
  keys_ = p.u64();
  values_ = p.u64();
  m_ = p.u64();
  range_ = p.u64();
  divisor_ = p.u64();
  width_ = p.u64();
  stream_bits_ = p.u64();
  p.expect_end();
  if (hasher_id_ == 0) throw bad("hasher id 0 names no hasher");
  if (!valid_hasher_id(hasher_id_))
    throw Error(Errc::unsupported, "Golomb-coded set: hasher id " + std::to_string(hasher_id_) +
                                       " is reserved for amq's own hashers and unknown to this version");
  if (coding > 1) throw bad("unknown coding " + std::to_string(coding));
  coding_ = static_cast<Coding>(coding);
  if (width_bits != 16 && width_bits != 32) throw bad("offset width " + std::to_string(width_bits) + " is not 16 or 32");
  wide_ = width_bits == 32;
  if (layout > 2) throw bad("unknown layout " + std::to_string(layout));
  if (m_ < 2 || m_ > kMaxRangePerKey) throw bad("range per key " + std::to_string(m_) + " out of 2..2^40");
  const unsigned __int128 range = static_cast<unsigned __int128>(std::max<uint64_t>(keys_, 1)) * m_;
  if (range > (static_cast<unsigned __int128>(1) << 63) || static_cast<uint64_t>(range) != range_)
    throw bad("range " + std::to_string(range_) + " is not keys x range per key");
  if (values_ > keys_) throw bad("more values than keys");
  if (divisor_ != divisor_for(m_, coding_)) throw bad("divisor " + std::to_string(divisor_) + " does not match M");
  if (width_ != width_for(m_, range_, coding_)) throw bad("bucket width does not match M");
  if (layout != 0 && !byte_layout_for(coding_, divisor_, m_))
    throw bad("the byte layout needs Rice coding with divisor 128 and M <= 256");
  byte_layout_ = layout != 0;
  buckets_ = (range_ - 1) / width_ + 1;
  if (values_ > stream_bits_) throw bad("more values than coded bits");
  return layout;
}

// Reads the stream and the index, their sizes checked against the params before
// anything is allocated.
void GolombCodedSet::read_payload(std::span<const std::byte> payload) {
  const unsigned __int128 stream_bytes = (static_cast<unsigned __int128>(stream_bits_) + 7) / 8;
  const unsigned __int128 entries = static_cast<unsigned __int128>(buckets_) + 1;
  const unsigned __int128 supers = (entries + kSuperblockBuckets - 1) / kSuperblockBuckets;
  auto pad8 = [](unsigned __int128 x) { return (x + 7) / 8 * 8; };
  const unsigned __int128 expected = pad8(stream_bytes) + supers * 8 + pad8(entries * (wide_ ? 4 : 2));
  if (expected != payload.size())
    throw Error(payload.size() < expected ? Errc::truncated : Errc::corrupt,
                "Golomb-coded set: payload of " + std::to_string(payload.size()) + " bytes, the parameters need " +
                    std::to_string(static_cast<uint64_t>(expected)));
  detail::ByteReader r(payload, "Golomb-coded set payload");
  const auto stream = r.bytes(static_cast<uint64_t>(stream_bytes));
  for (std::byte b : r.bytes(static_cast<uint64_t>(pad8(stream_bytes) - stream_bytes)))
    if (b != std::byte{0}) throw bad("nonzero padding after the stream");
  if (stream_bits_ % 8 && (static_cast<uint8_t>(stream.back()) & (0xffu >> (stream_bits_ % 8))))
    throw bad("nonzero padding bits after the stream");
  set_stream(stream);
  super_.resize(static_cast<size_t>(supers));
  for (uint64_t& x : super_) x = r.u64();
  if (wide_) {
    rel32_.resize(static_cast<size_t>(entries));
    for (uint32_t& x : rel32_) x = r.u32();
  } else {
    rel16_.resize(static_cast<size_t>(entries));
    for (uint16_t& x : rel16_) x = r.u16();
  }
  while (r.remaining())
    if (r.u8() != 0) throw bad("nonzero padding after the index");
}

// Layout 1 (an older layout, still read) held each code's gap
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

// A bucket of the split layout: each code's unary quotient (read backwards from the
// bucket's end) and remainder (forwards from its start) decode within the bucket to a
// value above the previous one and inside the bucket's range; they meet exactly.
// Adds the codes to `count`.
void GolombCodedSet::validate_split(uint64_t b, uint64_t limit, std::span<const std::byte> bytes,
                                    uint64_t& count) const {
  const detail::GolombCode code(divisor_);
  uint64_t rpos = bucket_offset(b), upos = bucket_offset(b + 1), cur = b * width_;
  bool first = true;
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

// Every bucket offset in order and inside the stream, every bucket decoding to exactly
// its bits with ascending values inside the bucket, and the value count right.
void GolombCodedSet::validate(bool gap_bytes) const {
  for (uint64_t j = 0; j < super_.size(); ++j)
    if ((wide_ ? rel32_[j * kSuperblockBuckets] : rel16_[j * kSuperblockBuckets]) != 0)
      throw bad("superblock " + std::to_string(j) + " does not start at its first bucket");
  if (bucket_offset(0) != 0) throw bad("the first bucket does not start at bit 0");
  if (bucket_offset(buckets_) != stream_bits_) throw bad("the last bucket does not end at the stream's end");
  const std::span<const std::byte> bytes(stream_.data() + kGuardBytes, (stream_bits_ + 7) / 8);
  uint64_t count = 0;
  for (uint64_t b = 0; b < buckets_; ++b) {
    const uint64_t begin = bucket_offset(b), end = bucket_offset(b + 1);
    if (end < begin || end > stream_bits_) throw bad("bucket " + std::to_string(b) + " has offsets out of order");
    const uint64_t limit = b + 1 == buckets_ ? range_ : (b + 1) * width_;
    if (!byte_layout_) {
      validate_split(b, limit, bytes, count);
      continue;
    }
    count += validate_bytes(b, limit, bytes, gap_bytes);
    if (count > values_) throw bad("more coded values than announced");
  }
  if (count != values_)
    throw bad(std::to_string(count) + " coded values, " + std::to_string(values_) + " announced");
}

}  // namespace amq
