// The Golomb coding on its own, BIP158 block filters, and the one part of HTTP Cache
// Digests that needs no libcrypto, the rate's rounding (the rest: cache_digest.cpp).
#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <string>

#include "amq/detail/bit_stream.hpp"
#include "amq/detail/golomb_code.hpp"
#include "amq/detail/siphash.hpp"
#include "amq/error.hpp"
#include "amq/golomb_coded_set.hpp"
#include "checks.hpp"
#include "golomb_stream.hpp"

namespace amq {
namespace detail {

void encode_into(detail::BitWriter& w, std::span<const uint64_t> sorted, const GolombCoding& coding, uint64_t& count) {
  const detail::GolombCode code(coding.divisor, coding.unary_ones);
  bool have = false;
  uint64_t prev = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    const uint64_t v = sorted[i];
    if (i > 0 && v < sorted[i - 1]) throw Error(Errc::invalid_argument, "golomb_encode: values are not sorted");
    switch (coding.gaps) {
      case GapRule::keep_duplicates: code.encode(w, v - prev); break;
      case GapRule::skip_duplicates:
        if (have && v == prev) continue;
        code.encode(w, v - prev);
        break;
      case GapRule::minus_one:
        if (have && v == prev) continue;
        code.encode(w, have ? v - prev - 1 : v);
        break;
    }
    prev = v;
    have = true;
    ++count;
  }
}

std::vector<uint64_t> decode_from(detail::BitReader& r, std::optional<uint64_t> count, const GolombCoding& coding) {
  const detail::GolombCode code(coding.divisor, coding.unary_ones);
  if (!count && coding.unary_ones)
    throw Error(Errc::invalid_argument, "golomb_decode: a stream whose quotients are 1s ended by a 0 needs a value count");
  std::vector<uint64_t> out;
  bool have = false;
  uint64_t prev = 0;
  for (;;) {
    if (count) {
      if (out.size() == *count) break;
    } else if (r.rest_is_zero()) {
      break;
    }
    const uint64_t d = code.decode(r);
    uint64_t v;
    if (coding.gaps == GapRule::minus_one && have) {
      if (d >= UINT64_MAX - prev) throw Error(Errc::corrupt, "Golomb-coded value beyond 64 bits");
      v = prev + d + 1;
    } else {
      if (d > UINT64_MAX - prev) throw Error(Errc::corrupt, "Golomb-coded value beyond 64 bits");
      v = prev + d;
    }
    out.push_back(v);
    prev = v;
    have = true;
  }
  return out;
}

}  // namespace detail

std::string BitString::to_string() const { return detail::bit_string(bytes, bits); }

BitString golomb_encode(std::span<const uint64_t> sorted, const GolombCoding& coding) {
  detail::BitWriter w;
  BitString out;
  encode_into(w, sorted, coding, out.count);
  out.bits = w.bit_size();
  out.bytes = w.take();
  return out;
}

std::vector<uint64_t> golomb_decode(std::span<const std::byte> data, uint64_t bit_begin, uint64_t bit_end,
                                    std::optional<uint64_t> count, const GolombCoding& coding) {
  detail::BitReader r(data, bit_begin, bit_end);
  if (count && *count > r.remaining())  // every code takes at least one bit
    throw Error(Errc::truncated, "Golomb-coded stream of " + std::to_string(r.remaining()) + " bits cannot hold " +
                                     std::to_string(*count) + " values");
  return decode_from(r, count, coding);
}

uint64_t optimal_golomb_divisor(double m) noexcept {
  if (!(m > 1.0)) return 1;
  // Gallager and van Voorhis: the smallest d with theta^d + theta^(d+1) <= 1.
  const double theta = 1.0 - 1.0 / m;
  const double d = std::ceil(std::log1p(theta) / -std::log1p(-1.0 / m) - 1e-9);
  return d < 1 ? 1 : static_cast<uint64_t>(d);
}

double expected_golomb_bits(double m, uint64_t divisor) noexcept {
  if (!(m > 1.0) || divisor == 0) return 1.0;
  const detail::GolombCode code(divisor);
  const double log_theta = std::log1p(-1.0 / m);
  const double a = std::exp(log_theta * static_cast<double>(divisor));  // P(gap >= d)
  const double quotient = a / (1 - a);
  const double p_short = -std::expm1(log_theta * static_cast<double>(code.cutoff())) / (1 - a);
  return quotient + 1 + code.remainder_bits() - (code.cutoff() ? p_short : 0.0);
}

unsigned optimal_rice_bits(double m) noexcept {
  if (!(m > 1.0)) return 0;
  const int guess = static_cast<int>(std::floor(std::log2(m)));
  unsigned best = 0;
  double best_bits = 1e300;
  for (int b = std::max(0, guess - 3); b <= std::min(62, guess + 1); ++b) {
    const double bits = expected_golomb_bits(m, uint64_t{1} << b);
    if (bits < best_bits - 1e-12) {
      best_bits = bits;
      best = static_cast<unsigned>(b);
    }
  }
  return best;
}

// ---- BIP158 -------------------------------------------------------------------------

void write_compact_size(std::vector<std::byte>& out, uint64_t v) {
  auto put = [&](uint64_t x, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<std::byte>(x >> (8 * i)));
  };
  if (v < 0xfd) {
    put(v, 1);
  } else if (v <= 0xffff) {
    put(0xfd, 1);
    put(v, 2);
  } else if (v <= 0xffffffff) {
    put(0xfe, 1);
    put(v, 4);
  } else {
    put(0xff, 1);
    put(v, 8);
  }
}

uint64_t read_compact_size(std::span<const std::byte> data, size_t& pos) {
  if (pos >= data.size()) throw Error(Errc::truncated, "CompactSize: no bytes left");
  const uint8_t first = static_cast<uint8_t>(data[pos]);
  if (first < 0xfd) {
    ++pos;
    return first;
  }
  const int n = first == 0xfd ? 2 : first == 0xfe ? 4 : 8;
  if (data.size() - pos - 1 < static_cast<size_t>(n)) throw Error(Errc::truncated, "CompactSize: truncated");
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(data[pos + 1 + i])) << (8 * i);
  const uint64_t min = n == 2 ? 0xfd : n == 4 ? 0x10000 : 0x100000000ULL;
  if (v < min) throw Error(Errc::corrupt, "CompactSize: non-canonical encoding of " + std::to_string(v));
  pos += 1 + n;
  return v;
}

Bip158Params Bip158Params::from_key(std::span<const std::byte> key, unsigned p, uint64_t m) {
  if (key.size() != 16)
    throw Error(Errc::invalid_argument, "a SipHash key is 16 bytes, got " + std::to_string(key.size()));
  if (p < 1 || p > 62) throw Error(Errc::invalid_argument, "Golomb-Rice parameter P must be in 1..62");
  if (m < 1) throw Error(Errc::invalid_argument, "BIP158 M must be at least 1");
  Bip158Params out;
  for (int i = 0; i < 8; ++i) {
    out.k0 |= static_cast<uint64_t>(static_cast<uint8_t>(key[i])) << (8 * i);
    out.k1 |= static_cast<uint64_t>(static_cast<uint8_t>(key[8 + i])) << (8 * i);
  }
  out.p = p;
  out.m = m;
  return out;
}

Bip158Params Bip158Params::from_hex_key(std::string_view hex, unsigned p, uint64_t m) {
  if (hex.size() != 32)
    throw Error(Errc::invalid_argument, "a SipHash key is 32 hex digits, got " + std::to_string(hex.size()) +
                                            " characters");
  std::byte key[16];
  auto nibble = [&](char c) -> unsigned {
    if (c >= '0' && c <= '9') return static_cast<unsigned>(c - '0');
    if (c >= 'a' && c <= 'f') return static_cast<unsigned>(c - 'a' + 10);
    if (c >= 'A' && c <= 'F') return static_cast<unsigned>(c - 'A' + 10);
    throw Error(Errc::invalid_argument, "SipHash key is not hex: '" + std::string(hex) + "'");
  };
  for (int i = 0; i < 16; ++i) key[i] = static_cast<std::byte>(nibble(hex[2 * i]) * 16 + nibble(hex[2 * i + 1]));
  return from_key(key, p, m);
}

namespace {

uint64_t bip158_range(uint64_t n, uint64_t m) {
  const unsigned __int128 f = static_cast<unsigned __int128>(n) * m;
  if (f > UINT64_MAX) throw Error(Errc::too_large, "BIP158 filter: N x M exceeds 64 bits");
  return static_cast<uint64_t>(f);
}

}  // namespace

std::vector<std::byte> Bip158Filter::build(std::span<const Bytes> elements, const Bip158Params& params) {
  if (params.p < 1 || params.p > 62) throw Error(Errc::invalid_argument, "Golomb-Rice parameter P must be in 1..62");
  std::set<std::string_view> distinct;
  for (Bytes e : elements) distinct.insert(as_chars(e));
  const uint64_t f = bip158_range(distinct.size(), params.m);
  std::vector<uint64_t> hashes;
  hashes.reserve(distinct.size());
  for (std::string_view e : distinct) hashes.push_back(reduce(detail::siphash24(params.k0, params.k1, as_bytes(e)), f));
  std::sort(hashes.begin(), hashes.end());
  std::vector<std::byte> out;
  write_compact_size(out, distinct.size());
  const BitString bits =
      golomb_encode(hashes, {.divisor = uint64_t{1} << params.p, .unary_ones = true, .gaps = GapRule::keep_duplicates});
  out.insert(out.end(), bits.bytes.begin(), bits.bytes.end());
  return out;
}

Bip158Filter Bip158Filter::parse(std::span<const std::byte> filter, const Bip158Params& params) {
  if (params.p < 1 || params.p > 62) throw Error(Errc::invalid_argument, "Golomb-Rice parameter P must be in 1..62");
  Bip158Filter out;
  out.params_ = params;
  size_t pos = 0;
  try {
    out.n_ = read_compact_size(filter, pos);
  } catch (const Error& e) {
    throw Error(e.code(), std::string("BIP158 filter: ") + e.what());
  }
  const auto body = filter.subspan(pos);
  // Every code takes at least P + 1 bits: check N before allocating by it.
  if (out.n_ > uint64_t{body.size()} * 8 / (params.p + 1))
    throw Error(Errc::truncated, "BIP158 filter: " + std::to_string(body.size()) + " bytes cannot hold " +
                                     std::to_string(out.n_) + " elements");
  (void)bip158_range(out.n_, params.m);
  detail::BitReader r(body);
  try {
    out.values_ = decode_from(r, out.n_, {.divisor = uint64_t{1} << params.p, .unary_ones = true,
                                          .gaps = GapRule::keep_duplicates});
  } catch (const Error& e) {
    throw Error(e.code(), std::string("BIP158 filter: ") + e.what());
  }
  if (r.remaining() >= 8)
    throw Error(Errc::corrupt, "BIP158 filter: " + std::to_string(r.remaining() / 8) + " bytes after the last element");
  if (!r.rest_is_zero()) throw Error(Errc::corrupt, "BIP158 filter: nonzero padding bits");
  const uint64_t f = out.n_ * params.m;
  if (!out.values_.empty() && out.values_.back() >= f)
    throw Error(Errc::corrupt, "BIP158 filter: a value beyond N x M");
  out.bytes_.assign(filter.begin(), filter.end());
  return out;
}

uint64_t Bip158Filter::hash_element(Bytes element) const noexcept {
  return reduce(detail::siphash24(params_.k0, params_.k1, element), n_ * params_.m);
}

bool Bip158Filter::contains(Bytes element) const noexcept {
  if (n_ == 0) return false;
  return std::binary_search(values_.begin(), values_.end(), hash_element(element));
}

size_t Bip158Filter::contains_many(std::span<const Bytes> elements, std::span<bool> out) const {
  std::vector<std::pair<uint64_t, size_t>> qs(elements.size());
  for (size_t i = 0; i < elements.size(); ++i) qs[i] = {hash_element(elements[i]), i};
  std::sort(qs.begin(), qs.end());
  size_t at = 0, found = 0;
  for (const auto& [v, i] : qs) {
    while (at < values_.size() && values_[at] < v) ++at;
    const bool hit = n_ != 0 && at < values_.size() && values_[at] == v;
    out[i] = hit;
    found += hit;
  }
  return found;
}

bool Bip158Filter::match_any(std::span<const Bytes> elements) const {
  std::unique_ptr<bool[]> out(new bool[elements.size() ? elements.size() : 1]);
  return contains_many(elements, std::span<bool>(out.get(), elements.size())) > 0;
}

// A cache digest's P for the rate asked for. It is in core so that the gcs row's build note
// can state the rounding in a program without amq::formats.
unsigned CacheDigest::log2_p_for(double fpp) {
  detail::check_fpp(fpp, 1.0, false, "cache digest: ");
  const double l = std::round(std::log2(1.0 / fpp));
  if (l > 31) throw Error(Errc::invalid_argument, "a cache digest's P is at most 2^31 (fpp >= 2^-31)");
  return std::max(1u, static_cast<unsigned>(l));
}

}  // namespace amq
