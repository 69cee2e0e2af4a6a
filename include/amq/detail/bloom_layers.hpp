// amq/detail/bloom_layers.hpp — layer geometry and probing of the scalable Bloom
// filter (Almeida, Baquero, Preguiça, Hutchison, "Scalable Bloom Filters", 2007),
// shared by ScalableBloomFilter (in memory) and RedisBloomFilter (in Redis, where a
// Lua script sets and tests the bits), so both place every key on the same bits.
//
// Parameters: initial capacity n0 >= 1, target false-positive rate P in (0, 1),
// growth s >= 1 (layer i holds about n0 * s^i keys) and tightening r in (0, 1).
// Layer i has error p_i = P * (1 - r) * r^i, so the compound rate
//   1 - prod(1 - p_i) <= sum p_i = P * (1 - r) * sum r^i < P   at any fill.
// Layer i uses k_i = ceil(log2(1 / p_i)) probes over m_i bits, m_i the least multiple
// of 64 with (1 - exp(-k_i n_i / m_i))^k_i <= p_i, i.e. m_i = -k_i n_i / ln(1 - p_i^(1/k_i)).
// m_i is capped at kMaxLayerBits (2^32, the size of a Redis string) by capping n_i.
//
// Probing: a key's 64-bit hash h gives a = h mod 2^32 and b = (h >> 32) | 1; probe j
// of layer i is bit (a + j * b) mod m_i. Every intermediate value is below 2^38, so a
// Lua script computes the same positions exactly with double-precision numbers.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace amq::detail {

inline constexpr uint64_t kMaxLayerBits = uint64_t{1} << 32;
inline constexpr uint32_t kMaxLayers = 64;

struct ScalableParams {
  uint64_t initial_capacity = 1000;
  double fpp = 0.01;
  double growth = 2.0;
  double tightening = 0.5;
  bool operator==(const ScalableParams&) const = default;
};

struct LayerGeometry {
  uint64_t capacity;  // n_i: keys this layer takes before the next is opened
  uint64_t bits;      // m_i, a multiple of 64, at most kMaxLayerBits
  uint32_t hashes;    // k_i
  double fpp;         // p_i
};

// Throws nothing; callers validate ScalableParams first (valid_params).
inline bool valid_params(const ScalableParams& p) noexcept {
  return p.initial_capacity >= 1 && p.initial_capacity <= (uint64_t{1} << 40) && p.fpp > 0 && p.fpp < 1 &&
         p.growth >= 1 && p.growth <= 16 && p.tightening > 0 && p.tightening < 1;
}

inline LayerGeometry layer_geometry(const ScalableParams& p, uint32_t i) noexcept {
  const double fpp = p.fpp * (1 - p.tightening) * std::pow(p.tightening, static_cast<double>(i));
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

struct ProbePair {
  uint64_t a, b;
};
inline ProbePair probe_pair(uint64_t hash) noexcept { return {hash & 0xffffffffULL, (hash >> 32) | 1}; }
inline uint64_t probe_bit(ProbePair p, uint32_t j, uint64_t bits) noexcept { return (p.a + j * p.b) % bits; }

}  // namespace amq::detail
