// GolombCodedSet: build, the choice of query kernels, iteration. The container (write,
// load, validate) is gcs/serialize.cpp; the query kernels are gcs/kernel_*.cpp.
#include "amq/golomb_coded_set.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "amq/detail/bit_stream.hpp"
#include "amq/detail/dispatch.hpp"
#include "amq/detail/golomb_code.hpp"
#include "amq/error.hpp"
#include "checks.hpp"
#include "gcs/internal.hpp"

namespace amq {
namespace {

using detail::gcs::kGuardBytes;
using detail::gcs::kTailGuardBytes;

uint64_t range_per_key_for(double fpp) {
  detail::check_fpp(fpp, 0.5, true, "Golomb-coded set: ");
  const double m = std::round(1.0 / fpp);
  if (m > static_cast<double>(detail::gcs::kMaxRangePerKey))
    throw Error(Errc::invalid_argument, "false-positive probability " + detail::number_text(fpp) + " is below 2^-40");
  return static_cast<uint64_t>(m);
}

// Codes one bucket's gaps: the remainders forward from the bucket's start, then the
// unary quotients last one first, so that read backwards from the bucket's end they
// come in order.
void encode_split_bucket(detail::BitWriter& w, const detail::GolombCode& code, uint64_t divisor,
                         std::span<const uint64_t> gaps) {
  for (uint64_t g : gaps) code.encode_remainder(w, g % divisor);
  for (size_t j = gaps.size(); j-- > 0;) {
    w.put_bit(false);
    w.put_run(true, gaps[j] / divisor);
  }
}

// The byte layout's bucket: a byte per code (the quotient's first unary bit, then the
// value's low 7 bits); the rest of the nonzero quotients' unary codes last one first,
// ending on a byte.
void encode_byte_bucket(detail::BitWriter& w, std::span<const uint64_t> gaps) {
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
}

}  // namespace

GolombCodedSet::GolombCodedSet() : GolombCodedSet(from_hashes({}, Options{})) {}

GolombCodedSet GolombCodedSet::from_hashes(std::vector<uint64_t> hashes, const Options& options, uint32_t hasher_id) {
  using namespace detail::gcs;
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
  s.encode(hashes);
  s.prepare_queries();
  return s;
}

// The stream and the index of the sorted, distinct `values`.
void GolombCodedSet::encode(std::span<const uint64_t> values) {
  const detail::GolombCode code(divisor_);
  detail::BitWriter w;
  std::vector<uint64_t> offsets(buckets_ + 1);
  std::vector<uint64_t> gaps;
  size_t i = 0;
  for (uint64_t b = 0; b < buckets_; ++b) {
    offsets[b] = w.bit_size();
    uint64_t prev = b * width_;
    const uint64_t limit = b + 1 == buckets_ ? range_ : (b + 1) * width_;
    gaps.clear();
    for (; i < values.size() && values[i] < limit; ++i) {
      gaps.push_back(values[i] - prev);
      prev = values[i];
    }
    if (byte_layout_) encode_byte_bucket(w, gaps);
    else encode_split_bucket(w, code, divisor_, gaps);
  }
  offsets[buckets_] = w.bit_size();
  stream_bits_ = w.bit_size();
  const auto bytes = w.take();
  set_stream(bytes);
  rem_bits_ = code.remainder_bits();
  cutoff_ = code.cutoff();
  build_index(offsets);
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

// ---- queries -----------------------------------------------------------------------
//
// Rice sets in the split layout search a bucket G codes at a time (gcs/rice_search.hpp),
// with BMI2's pdep where the CPU has a fast one; sets in the byte layout compare a window
// of codes at once (gcs/byte_search.hpp), with AVX2 where the CPU has it; Golomb-coded
// sets are decoded code by code. The kernels are chosen once, when a set is built or
// loaded (amq/detail/dispatch.hpp).

void GolombCodedSet::prepare_queries() {
  width_inverse_ = ~uint64_t{0} / width_;
  width_shift_ = width_ > 1 && std::has_single_bit(width_) ? static_cast<unsigned>(std::countr_zero(width_)) : 0;
  const unsigned c = rem_bits_;
  // 0: not Rice (or the byte layout), no group search
  group_ = !byte_layout_ && cutoff_ == 0 && c >= 1 && c <= 56 ? std::min(8u, 56u / c) : 0;
  block_inverse_ = static_cast<uint32_t>((uint64_t{1} << 32) / (16 * m_));
  mean_bucket_bits_ = stream_bits_ / buckets_;
  select_kernels();
}

void GolombCodedSet::select_kernels() noexcept {
  using detail::Isa;
  using Entry = detail::Kernel<const detail::gcs::Kernels*>;
  static constexpr Entry kBytes[] = {
#if AMQ_GCS_X86
      {Isa::avx2, &detail::gcs::kBytesAvx2},
#endif
      {Isa::portable, &detail::gcs::kBytesSwar}};
  static constexpr Entry kRice[] = {
#if AMQ_GCS_X86
      {Isa::bmi2, &detail::gcs::kRiceBmi2},
#endif
      {Isa::portable, &detail::gcs::kRicePortable}};
  kernels_ = byte_layout_ ? detail::select_kernel(kBytes)
             : group_ != 0 ? detail::select_kernel(kRice)
                           : &detail::gcs::kScan;
  query_ = kernels_->query_for(*this);
}

size_t GolombCodedSet::contains_many_hashes(std::span<const uint64_t> hashes, std::span<bool> out) const {
  // Sorting pays when buckets share many queries and a query decodes its bucket code by
  // code (Golomb coding, Rice widths without the group search): from about 8 queries a
  // bucket (docs/decisions/0034). The Rice kernels answer a batch in order at every
  // density, its cache misses overlapped by prefetching (docs/decisions/0046).
  if (sorts_batch(hashes.size())) return kernels_->many_sorted(*this, hashes, out);
  return kernels_->many_sparse(*this, hashes, out);
}

bool GolombCodedSet::sorts_batch(size_t queries) const noexcept {
  return kernels_->many_sorted != nullptr && queries >= std::max<uint64_t>(buckets_ * 8, 2);
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

}  // namespace amq
