// amq/detail/bloom_layers.hpp — layer geometry and probing of the scalable Bloom
// filter (Almeida, Baquero, Preguiça, Hutchison, "Scalable Bloom Filters", 2007),
// shared by ScalableBloomFilter (in memory) and RedisBloomFilter (in Redis, where a
// Lua script sets and tests the bits), so both place every key on the same bits.
//
// Parameters: initial capacity n0 >= 1, target false-positive rate P in (0, 1),
// growth s >= 1 (layer i holds about n0 * s^i keys), tightening r in (0, 1) and the
// layout (how layers are sized). Layer i has error p_i = P * (1 - r) * r^i, so if every
// layer's real rate is at most its p_i the compound rate
//   1 - prod(1 - p_i) <= sum p_i = P * (1 - r) * sum r^i < P   at any fill.
// Layer i uses k_i = ceil(log2(1 / p_i)) probes over m_i bits.
//
// Layout 0 (legacy) takes m_i from the Bloom formula alone: the least multiple of 64
// with (1 - exp(-k_i n_i / m_i))^k_i <= p_i, i.e. m_i = -k_i n_i / ln(1 - p_i^(1/k_i)),
// capped at kMaxLayerBits (2^32, the size of a Redis string) by capping n_i. That
// formula assumes independent probes; double hashing's probes are not, and a layer
// with n_i p_i of order 1 (a small start: n0 = 10 at P = 1%) has about twice its p_i.
// Layout 1 (rate-safe, the default) sizes each layer so that expected_layer_rate(),
// which counts double hashing's term, is at most p_i; see rate_safe_layer_geometry().
// docs/decisions/0003-scalable-bloom-rate.md has the measurements.
//
// Probing: a key's 64-bit hash h gives a = h mod 2^32 and b = (h >> 32) | 1; probe j
// of layer i is bit (a + j * b) mod m_i. Every intermediate value is below 2^38, so a
// Lua script computes the same positions exactly with double-precision numbers.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "amq/scalable_bloom_params.hpp"

namespace amq::detail {

inline constexpr uint64_t kMaxLayerBits = uint64_t{1} << 32;
inline constexpr uint32_t kMaxLayers = 64;

// How layers are sized (ScalableParams::layout). Files and Redis filters made before
// the parameter existed have layout 0 and keep it; new filters use kRateSafeLayout.
inline constexpr uint32_t kLegacyLayout = ScalableBloomParams::kLegacyLayout;      // the Bloom formula alone
inline constexpr uint32_t kRateSafeLayout = ScalableBloomParams::kRateSafeLayout;  // expected_layer_rate() <= p_i

// The public types (amq/scalable_bloom_params.hpp), by their names here.
using ScalableParams = ScalableBloomParams;
using LayerGeometry = ScalableBloomLayerGeometry;

// Throws nothing; callers validate ScalableParams first (valid_params).
inline bool valid_params(const ScalableParams& p) noexcept {
  return p.initial_capacity >= 1 && p.initial_capacity <= (uint64_t{1} << 40) && p.fpp > 0 && p.fpp < 1 &&
         p.growth >= 1 && p.growth <= 16 && p.tightening > 0 && p.tightening < 1 && p.layout <= kRateSafeLayout;
}

// The double-hashing term of a layer's false-positive rate.
//
// A key's k probes form an arithmetic progression a + j b (mod m). A query whose b
// equals an inserted key's b' (or -b': the same progression reversed) and whose a is
// a' + t b' shares o = k - |t| of its probes with that key, so only k - o of its bits
// are left to chance. b = b' (mod m) has probability 2/m (b is odd: m/2 residues), each
// shift t probability 1/m. With n keys in the layer and a fraction f of its bits set,
// the excess over f^k is
//   n (2 / m^2) sum over (sign, t) with o >= 3 of (g^(k-o) - g^k),
// g the fill of the other keys' bits (the k - o bits continue the key's progression).
// Overlaps of two probes (and of up to k/3 through b = 3 b' and the like) are no more
// likely than between random probe sets, so f^k already counts them. The term does not
// shrink with the bits per key: relative to the layer's error p it is about
// 2 S / (c^2 n p), S the sum at f = 1/2 and c the bits per key, so it dominates small
// layers (n p of order 1) and is negligible once n p is large.
class DoubleHashingOverlaps {
 public:
  explicit DoubleHashingOverlaps(uint32_t k) : k_(k) {}
  // sum over (sign, t) with o >= 3 of (f^(k-o) - f^k): o = k once per sign, each o < k
  // twice per sign (t = +-(k - o)).
  double sum(double f) const noexcept {
    if (k_ < 3) return 0;
    const double fk = std::pow(f, k_);
    double s = 2 * (1 - fk), fd = 1;
    for (uint32_t d = 1; d + 3 <= k_; ++d) {
      fd *= f;
      s += 4 * (fd - fk);
    }
    return s;
  }
  // The excess itself for n keys in m bits with fill f. The k - o bits left to chance
  // continue the key's progression, so only the other keys' bits can cover them: their
  // fill is 1 - (1 - f) / (1 - k/m).
  double excess(double m, double n, double f) const noexcept {
    const double kk = k_;
    const double others = kk >= m ? f : std::max(0.0, 1 - (1 - f) / (1 - kk / m));
    return n * 2 / (m * m) * sum(others);
  }

 private:
  uint32_t k_;
};

// The false-positive rate of a layer whose fraction `fill` of bits is set, holding n
// keys: a query's k probes all land on set bits (fill^k, an upper bound since its
// probes are distinct) plus the double-hashing term.
inline double layer_rate_at_fill(const DoubleHashingOverlaps& dh, uint64_t bits, uint32_t k, double n,
                                 double fill) noexcept {
  return std::pow(fill, k) + dh.excess(static_cast<double>(bits), n, fill);
}

// Layers of at most this many bits are measured exactly by layer_rate_of_bits().
inline constexpr uint64_t kExactRateLayerBits = 4096;

// The exact false-positive rate of a layer with these bits (m = bits, k probes, bit x
// in word x / 64 at x % 64): the fraction of probe pairs (a mod m, b mod m), b odd,
// whose k probes are all set. A key's (a mod m, b mod m) is uniform over those pairs
// (up to m / 2^32), so this is the layer's rate for keys not inserted. O(m^2 / 2)
// progressions; meant for m <= kExactRateLayerBits.
inline double layer_rate_of_bits(const uint64_t* words, uint64_t bits, uint32_t k) noexcept {
  uint64_t all = 0;
  auto set = [&](uint64_t x) { return (words[x >> 6] >> (x & 63)) & 1; };
  for (uint64_t b = 1; b < bits; b += 2) {
    for (uint64_t a = 0; a < bits; ++a) {
      uint64_t x = a;
      uint32_t j = 0;
      while (j < k && set(x)) {
        ++j;
        x += b;
        if (x >= bits) x -= bits;
      }
      all += j == k;
    }
  }
  return static_cast<double>(all) / (static_cast<double>(bits) * static_cast<double>(bits / 2));
}

// The expected false-positive rate of a layer of m bits and k probes holding n keys,
// over the random choice of the keys: E[f^k] (to second order in the spread of the
// fill f: each key sets k distinct bits) plus the double-hashing term.
inline double expected_layer_rate(const DoubleHashingOverlaps& dh, uint64_t bits, uint32_t k, double n) noexcept {
  const double m = static_cast<double>(bits);
  if (n <= 0) return 0;
  const double kk = k;
  if (kk >= m) return 1;
  const double l1 = std::log1p(-kk / m), l2 = l1 + std::log1p(-kk / (m - 1));
  const double q1 = std::exp(n * l1), q2 = std::exp(n * l2);  // one / two given bits unset
  const double mu = 1 - q1;
  const double var = std::max(0.0, (m * q1 + m * (m - 1) * q2 - m * m * q1 * q1) / (m * m));
  double efk = std::pow(mu, kk);
  if (k >= 2 && mu > 0) efk += kk * (kk - 1) / 2 * std::pow(mu, kk - 2) * var;
  return std::min(1.0, efk + dh.excess(m, n, mu));
}

inline double layer_error(const ScalableParams& p, uint32_t i) noexcept {
  return p.fpp * (1 - p.tightening) * std::pow(p.tightening, static_cast<double>(i));
}
inline uint32_t layer_hashes(double fpp) noexcept {
  return static_cast<uint32_t>(std::max(1.0, std::ceil(std::log2(1 / fpp))));
}

inline LayerGeometry legacy_layer_geometry(const ScalableParams& p, uint32_t i) noexcept {
  const double fpp = layer_error(p, i);
  const double k = std::max(1.0, std::ceil(std::log2(1 / fpp)));
  const double bits_per_key = -k / std::log1p(-std::pow(fpp, 1 / k));
  double n = std::ceil(static_cast<double>(p.initial_capacity) * std::pow(p.growth, static_cast<double>(i)));
  const double max_n = std::floor(static_cast<double>(kMaxLayerBits) / bits_per_key);
  if (n > max_n) n = max_n;
  if (n < 1) n = 1;
  uint64_t bits = static_cast<uint64_t>(std::ceil(n * bits_per_key));
  bits = (bits + 63) / 64 * 64;
  if (bits > kMaxLayerBits) bits = kMaxLayerBits;
  return {static_cast<uint64_t>(n), bits, static_cast<uint32_t>(k), fpp};
}

// Layers no smaller than this many bits are raised for the double-hashing term: below
// it a layer's capacity is raised instead of its bits.
inline constexpr double kRateSafeMinLayerBits = double(uint64_t{1} << 23);

// kRateSafeLayout: p_i and k_i as the legacy layout; the capacity is ceil(n0 s^i),
// raised to at least 16 S / (c^2 p_i) keys (so that the double-hashing term is at most
// about p_i / 8; S = DoubleHashingOverlaps(k).sum(1/2), c the legacy bits per key) but
// not past 2^23 bits' worth; then m_i is the least multiple of 64 >= n_i c with
// expected_layer_rate(m_i, k_i, n_i) <= p_i. If no m_i <= 2^32 achieves it the capacity
// is halved until one does; if none does for one key the layer has capacity 0 and is
// never opened.
inline LayerGeometry rate_safe_layer_geometry(const ScalableParams& p, uint32_t i) {
  const double fpp = layer_error(p, i);
  const uint32_t k = layer_hashes(fpp);
  const double kd = k;
  const double c = -kd / std::log1p(-std::pow(fpp, 1 / kd));
  const DoubleHashingOverlaps dh(k);
  const double max_layer_bits = static_cast<double>(kMaxLayerBits);
  double n = std::ceil(static_cast<double>(p.initial_capacity) * std::pow(p.growth, static_cast<double>(i)));
  const double n_min = std::min(std::ceil(16 * dh.sum(0.5) / (c * c * fpp)), std::floor(kRateSafeMinLayerBits / c));
  n = std::max(n, n_min);
  n = std::max(1.0, std::min(n, std::floor(max_layer_bits / c)));
  const uint64_t max_words = kMaxLayerBits / 64;
  while (true) {
    uint64_t lo = std::min<uint64_t>(max_words, static_cast<uint64_t>(std::ceil(n * c / 64)));
    if (lo < 1) lo = 1;
    if (expected_layer_rate(dh, max_words * 64, k, n) <= fpp) {
      uint64_t hi = max_words;  // rate(hi * 64) <= fpp; find the least such word count >= lo
      if (expected_layer_rate(dh, lo * 64, k, n) <= fpp) hi = lo;
      while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (expected_layer_rate(dh, mid * 64, k, n) <= fpp)
          hi = mid;
        else
          lo = mid + 1;
      }
      return {static_cast<uint64_t>(n), hi * 64, k, fpp};
    }
    if (n <= 1) return {0, 64, k, fpp};
    n = std::ceil(n / 2);
  }
}

inline LayerGeometry layer_geometry(const ScalableParams& p, uint32_t i) {
  return p.layout == kLegacyLayout ? legacy_layer_geometry(p, i) : rate_safe_layer_geometry(p, i);
}

struct ProbePair {
  uint64_t a, b;
};
inline ProbePair probe_pair(uint64_t hash) noexcept { return {hash & 0xffffffffULL, (hash >> 32) | 1}; }
inline uint64_t probe_bit(ProbePair p, uint32_t j, uint64_t bits) noexcept { return (p.a + j * p.b) % bits; }

}  // namespace amq::detail
