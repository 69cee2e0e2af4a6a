// HTTP Cache Digests (draft-ietf-httpbis-cache-digest-02) and base64url, through
// OpenSSL's libcrypto: the amq::formats component.
#include <openssl/evp.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include "amq/detail/bit_stream.hpp"
#include "amq/error.hpp"
#include "amq/golomb_coded_set.hpp"
#include "checks.hpp"
#include "golomb_stream.hpp"

namespace amq {

using detail::decode_from;
using detail::encode_into;

// ---- HTTP Cache Digests -------------------------------------------------------------

uint64_t CacheDigest::hash_value(std::string_view url, std::string_view etag, unsigned bits) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const bool ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1 &&
                  EVP_DigestUpdate(ctx, url.data(), url.size()) == 1 &&
                  EVP_DigestUpdate(ctx, etag.data(), etag.size()) == 1 && EVP_DigestFinal_ex(ctx, md, &len) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok || len < 8) throw Error(Errc::io, "OpenSSL SHA-256 failed");
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | md[i];
  return bits == 0 ? 0 : v >> (64 - bits);
}

std::vector<std::byte> CacheDigest::build(std::span<const Entry> entries, unsigned log2_p) {
  if (log2_p > 31) throw Error(Errc::invalid_argument, "a cache digest's log2(P) is at most 31");
  // N counts distinct entries: an entry listed twice is one URL in the cache, and a
  // parser checks the number of values against N.
  std::set<std::pair<std::string_view, std::string_view>> distinct;
  for (const Entry& e : entries) distinct.emplace(e.url, e.etag);
  unsigned log2_n = 0;
  if (distinct.size() > 1) {
    // The nearest power of two (ties up), below 2^32.
    const uint64_t count = distinct.size();
    const unsigned low = static_cast<unsigned>(63 - std::countl_zero(count));
    const uint64_t lo = uint64_t{1} << low;
    log2_n = std::min(31u, count - lo < 2 * lo - count ? low : low + 1);
  }
  const unsigned bits = log2_n + log2_p;
  std::vector<uint64_t> values;
  values.reserve(distinct.size());
  for (const auto& [url, etag] : distinct) values.push_back(hash_value(url, etag, bits));
  std::sort(values.begin(), values.end());
  detail::BitWriter w;
  w.put(log2_n, 5);
  w.put(log2_p, 5);
  uint64_t count = 0;
  encode_into(w, values, {.divisor = uint64_t{1} << log2_p, .unary_ones = false, .gaps = GapRule::minus_one}, count);
  return w.take();
}

namespace {

// A digest carries no count of its values and no checksum: N is the number of entries
// rounded to a power of two, and the values are hashes spread evenly over [0, N·P).
// A digest that lost its end shows it in two ways:
//  - values that stop short of the top of the range: the largest of c uniform values
//    lies below a fraction x of the range with probability x^c; below 2^-40 the tail
//    is missing. This detects a cut that removed more than about 28 values (40·ln 2 gaps
//    of the mean width), and any cut that left c >= 16 values where N/8 were due;
//  - too few values for N where the first test is weak (a cut that left a handful):
//    none at all for N >= 2, or fewer than 16 where N/8 were due. A digest built from
//    its distinct entries has at least about N/2 of them (N rounded to the nearest
//    power, or even up). Older amq builds counted repeated lines in N; such a digest
//    still loads unless it holds fewer than 16 distinct values for N > 8c.
// A cut at a code boundary that removed fewer values is not detectable in this format.
void check_complete(const std::vector<uint64_t>& values, unsigned log2_n, unsigned bits) {
  const uint64_t n = uint64_t{1} << log2_n;
  const uint64_t c = values.size();
  if (n >= 2 && (c == 0 || (c < 16 && c < n / 8)))
    throw Error(Errc::truncated, "cache digest: " + std::to_string(c) + " values where its N = " + std::to_string(n) +
                                     " needs at least " + std::to_string(std::min<uint64_t>(16, std::max<uint64_t>(1, n / 8))) +
                                     " (the digest is cut short)");
  if (log2_n < 31 && c > 2 * n)
    throw Error(Errc::corrupt, "cache digest: " + std::to_string(c) + " values where its N = " + std::to_string(n) +
                                   " allows at most " + std::to_string(2 * n));
  if (c == 0) return;
  const double top = std::ldexp(static_cast<double>(values.back()) + 1.0, -static_cast<int>(bits));
  if (static_cast<double>(c) * std::log2(top) < -40.0) {
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.3g%%", 100.0 * top);
    throw Error(Errc::truncated, "cache digest: its " + std::to_string(c) + " values end at " + pct +
                                     " of their range 2^" + std::to_string(bits) + " (the digest is cut short)");
  }
}

}  // namespace

CacheDigest CacheDigest::parse(std::span<const std::byte> digest) {
  CacheDigest d;
  detail::BitReader r(digest);
  try {
    d.log2_n_ = static_cast<unsigned>(r.get(5));
    d.log2_p_ = static_cast<unsigned>(r.get(5));
    d.values_ =
        decode_from(r, std::nullopt, {.divisor = uint64_t{1} << d.log2_p_, .unary_ones = false, .gaps = GapRule::minus_one});
  } catch (const Error& e) {
    throw Error(e.code(), std::string("cache digest: ") + e.what());
  }
  // The encoder pads the last byte only; more zero bits are the start of a code whose
  // end was cut off (or bytes appended).
  if (r.remaining() >= 8)
    throw Error(Errc::truncated, "cache digest: ends inside a value (" + std::to_string(r.remaining()) +
                                     " zero bits after the last one)");
  const unsigned bits = d.log2_n_ + d.log2_p_;
  if (!d.values_.empty() && d.values_.back() >= (uint64_t{1} << bits))
    throw Error(Errc::corrupt, "cache digest: a value beyond N x P = 2^" + std::to_string(bits));
  check_complete(d.values_, d.log2_n_, bits);
  d.bytes_.assign(digest.begin(), digest.end());
  return d;
}

bool CacheDigest::contains_value(uint64_t v) const noexcept {
  return std::binary_search(values_.begin(), values_.end(), v);
}

bool CacheDigest::contains(std::string_view url, std::string_view etag) const {
  return contains_value(hash_value(url, etag, log2_n_ + log2_p_));
}

std::string base64url_encode(std::span<const std::byte> data) {
  std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(data.data()), static_cast<int>(data.size()));
  out.resize(static_cast<size_t>(n));
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return out;
}

std::vector<std::byte> base64url_decode(std::string_view text) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  size_t pads = 0;
  while (!text.empty() && text.back() == '=' && pads < 2) {
    text.remove_suffix(1);
    ++pads;
  }
  if (text.size() > INT_MAX / 2) throw Error(Errc::too_large, "base64url text too long");
  std::string s(text);
  for (char& c : s) {
    if (c == '-') c = '+';
    else if (c == '_') c = '/';
    else if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
      throw Error(Errc::corrupt, "not base64url: unexpected character '" + std::string(1, c) + "'");
  }
  if (s.size() % 4 == 1) throw Error(Errc::corrupt, "not base64url: impossible length " + std::to_string(s.size()));
  const size_t added = (4 - s.size() % 4) % 4;
  if (pads && pads != added) throw Error(Errc::corrupt, "not base64url: wrong '=' padding");
  s.append(added, '=');
  std::vector<std::byte> out(s.size() / 4 * 3 + 1);
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(s.data()), static_cast<int>(s.size()));
  if (n < 0) throw Error(Errc::corrupt, "not base64url");
  out.resize(static_cast<size_t>(n) - added);
  return out;
}

}  // namespace amq
