// amq/scalable_bloom_params.hpp — the parameters of a scalable Bloom filter, shared by
// ScalableBloomFilter (in memory, amq/scalable_bloom_filter.hpp) and RedisBloomFilter
// (in Redis, amq/redis_bloom_filter.hpp), and the geometry of one of its layers. Both
// place every key on the same bits for the same parameters and seed.
//
//   amq::ScalableBloomParams p{.initial_capacity = 1000, .fpp = 0.01};
//   amq::ScalableBloomFilter f(p);
#pragma once

#include <cstdint>

namespace amq {

struct ScalableBloomParams {
  // How layers are sized. kLegacyLayout: the Bloom formula alone (files and Redis
  // filters made before the parameter existed have it and keep it); kRateSafeLayout:
  // each layer sized so that its real rate, double hashing's correlated probes
  // included, is at most its share of fpp (the default).
  static constexpr uint32_t kLegacyLayout = 0;
  static constexpr uint32_t kRateSafeLayout = 1;

  uint64_t initial_capacity = 1000;  // n0: keys the first layer takes, 1..2^40
  double fpp = 0.01;                 // P: the compound false-positive rate, in (0, 1)
  double growth = 2.0;               // s: layer i holds about n0 * s^i keys, 1..16
  double tightening = 0.5;           // r: layer i's error is P (1 - r) r^i, in (0, 1)
  uint32_t layout = kRateSafeLayout;
  bool operator==(const ScalableBloomParams&) const = default;
};

// One layer of a scalable Bloom filter.
struct ScalableBloomLayerGeometry {
  uint64_t capacity;  // n_i: keys this layer takes before the next is opened (0: the layer cannot be opened)
  uint64_t bits;      // m_i, a multiple of 64, at most 2^32
  uint32_t hashes;    // k_i
  double fpp;         // p_i
};

}  // namespace amq
