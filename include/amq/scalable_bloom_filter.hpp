// amq/scalable_bloom_filter.hpp — a Bloom filter that grows without a capacity limit
// and still keeps its false-positive promise: the scalable Bloom filter of Almeida,
// Baquero, Preguiça and Hutchison (2007).
//
// The filter is a list of layers (plain Bloom filters). Keys go into the newest layer;
// when it holds its capacity, the next new key opens a new layer, `growth` (s) times
// larger, with its error tightened by `tightening` (r). A layer is opened only by a key
// that needs it, so a filter holding exactly the keys its layers take has no empty
// layer (a file or Redis filter whose newest layer is empty loads as any other and
// fills that layer first). Layer i has error p_i = P (1 - r) r^i, so the compound
// false-positive rate 1 - prod(1 - p_i) < P at ANY fill — unlike a chain of equal
// filters (seed 004's Redis version), whose rate rises with every bitmap. Layers
// are sized for their real rate, double hashing's correlated probes included
// (detail/bloom_layers.hpp): a small start gets a first layer of a few hundred keys
// (153 at P = 1%) rather than one whose rate would be twice its share. Files made
// before this sizing (layout 0) keep their geometry.
//
// Guarantees
//  * No false negatives: contains(k) is true for every k inserted.
//  * False-positive rate below `fpp` however many keys are inserted (up to the layer
//    limit, max_layers(); past that insert() throws Errc::full). Layout 0 files
//    grown from a small start do not keep it (expected_fpp() tells their real rate).
//  * Dynamic: insert() at any time. Not thread-safe for writers; concurrent const
//    calls are safe.
//  * Layer sizes and bit positions are exactly detail/bloom_layers.hpp's, shared with
//    RedisBloomFilter: a key hashes once to h = Hasher(seed)(key bytes); probe j of
//    layer i is bit (a + j b) mod m_i with a = h mod 2^32, b = (h >> 32) | 1; bit x of a
//    layer is bit x % 64 (LSB first) of 64-bit word x / 64.
//  * Defaults as RedisBloom's BF.RESERVE: growth s = 2, tightening r = 0.5.
//  * size() counts the keys insert() added. A new key that is already a false
//    positive is not added (nothing to set: it is reported present anyway) nor
//    counted, so size() is a little below the number of distinct keys inserted
//    (by at most the false-positive rate), as in RedisBloom.
//
// Choose it when the number of keys is unknown in advance. When it is known, a
// BloomFilter (Guava-compatible) or BlockedBloomFilter (fastest) of that size is
// smaller and faster: every lookup here tests each layer.
//
//   amq::ScalableBloomFilter f({.initial_capacity = 1000, .fpp = 0.01});
//   for (auto& k : keys) f.insert(k);          // grows as needed
//   bool maybe = f.contains("apple");
//   auto bytes = f.serialize();                // amq container, Kind::scalable_bloom
//   auto g = amq::ScalableBloomFilter::load(bytes);
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "amq/detail/bloom_layers.hpp"
#include "amq/detail/fastmod.hpp"
#include "amq/detail/prefetch.hpp"
#include "amq/error.hpp"
#include "amq/hash.hpp"
#include "amq/scalable_bloom_params.hpp"

namespace amq {
namespace detail {

// One layer in memory: its geometry, the words of its bits, the keys it holds.
struct ScalableLayer {
  LayerGeometry geo{};
  FastMod63 mod{};  // probes are below 2^38
  std::vector<uint64_t> words{};
  uint64_t items = 0;
};

// Smallest per-layer error a layer may have (k <= 333 probes); layers beyond it, or
// beyond kMaxLayers, are never opened.
inline constexpr double kMinLayerFpp = 1e-100;

// How many layers a filter with these (valid) parameters may open, 1..kMaxLayers.
uint32_t scalable_layer_limit(const ScalableParams& p);
// Throws Error(code) unless valid_params(p) and layer 0 is usable.
void check_scalable_params(const ScalableParams& p, Errc code);
// A new empty layer i.
ScalableLayer make_scalable_layer(const ScalableParams& p, uint32_t i);
// Layers from their words and item counts, validated against layer_geometry
// (throws Errc::corrupt, or `Errc::invalid_argument` for bad parameters).
std::vector<ScalableLayer> scalable_layers_from(const ScalableParams& p, std::vector<std::vector<uint64_t>> words,
                                                std::vector<uint64_t> items);

std::vector<std::byte> serialize_scalable(uint32_t hasher_id, uint64_t seed, const ScalableParams& p,
                                          std::span<const ScalableLayer> layers);
struct LoadedScalable {
  uint64_t seed;
  ScalableParams params;
  std::vector<ScalableLayer> layers;
};
// Parses and validates a Kind::scalable_bloom container made with hasher `hasher_id`.
LoadedScalable load_scalable(std::span<const std::byte> file, uint32_t hasher_id);

}  // namespace detail

template <class Hasher = Xxh3Hasher>
class BasicScalableBloomFilter {
 public:
  using Params = ScalableBloomParams;
  static constexpr double kDefaultGrowth = 2.0;      // s, as RedisBloom
  static constexpr double kDefaultTightening = 0.5;  // r, as RedisBloom

  // An empty filter with one layer. Throws Errc::invalid_argument unless
  // 1 <= initial_capacity <= 2^40, 0 < fpp < 1, 1 <= growth <= 16, 0 < tightening < 1.
  explicit BasicScalableBloomFilter(Params params = {}, uint64_t seed = 0) : params_(params) {
    detail::check_scalable_params(params_, Errc::invalid_argument);
    hasher_.seed = seed;
    limit_ = detail::scalable_layer_limit(params_);
    layers_.push_back(detail::make_scalable_layer(params_, 0));
  }

  // Rebuilds a filter from its layers (e.g. as read from Redis). Every layer's word
  // count must be layer_geometry(params, i).bits / 64 and its item count at most the
  // layer's capacity; 1..kMaxLayers layers. Throws amq::Error otherwise.
  static BasicScalableBloomFilter from_layers(Params params, uint64_t seed,
                                              std::vector<std::vector<uint64_t>> words,
                                              std::vector<uint64_t> items) {
    auto layers = detail::scalable_layers_from(params, std::move(words), std::move(items));
    return BasicScalableBloomFilter(params, seed, std::move(layers));
  }

  // Adds the key. Returns false, changing nothing, if it may already be present (in
  // any layer); else sets its bits in the newest layer and counts it, first opening a
  // new layer if that one holds its capacity. Throws Errc::full (filter unchanged)
  // when a new key needs a layer beyond the limit.
  bool insert(KeyView key) { return insert_hash(hasher_(key.bytes())); }
  bool insert_hash(uint64_t h) {
    const detail::ProbePair pp = detail::probe_pair(h);
    for (const auto& l : layers_)
      if (layer_contains(l, pp)) return false;
    if (layers_.back().items >= layers_.back().geo.capacity) open_layer();
    detail::ScalableLayer& l = layers_.back();
    for (uint32_t j = 0; j < l.geo.hashes; ++j) {
      const uint64_t bit = l.mod.mod(pp.a + j * pp.b);
      l.words[bit >> 6] |= uint64_t{1} << (bit & 63);
    }
    ++l.items;
    ++count_;
    return true;
  }

  // True if the key may be in the set; false means surely absent.
  bool contains(KeyView key) const noexcept { return contains_hash(hasher_(key.bytes())); }
  bool contains_hash(uint64_t h) const noexcept {
    const detail::ProbePair pp = detail::probe_pair(h);
    // Newest first: it is the largest and holds about half of the keys.
    for (size_t i = layers_.size(); i-- > 0;)
      if (layer_contains(layers_[i], pp)) return true;
    return false;
  }

  // Batched contains: out[i] = contains(keys[i]); returns how many are true. A filter
  // larger than four times the L2 cache (detail::l2_cache_bytes()) is answered by
  // contains_many_by_layer; a smaller one key by key, where the layer-by-layer batch
  // measured slower than a loop of contains (docs/decisions/0046).
  template <class Keys>
  size_t contains_many(const Keys& keys, std::span<bool> out) const noexcept {
    if (batches_by_layer()) return contains_many_by_layer(keys, out);
    // The layers and the hasher in locals: a store to `out` (bools) may alias them, so
    // contains() per key would reload them after every answer.
    const detail::ScalableLayer* layers = layers_.data();
    const size_t count = layers_.size();
    const Hasher hasher = hasher_;
    size_t found = 0, i = 0;
    for (const auto& key : keys) {
      const detail::ProbePair pp = detail::probe_pair(hasher(KeyView(key).bytes()));
      bool r = false;
      for (size_t l = count; l-- > 0 && !r;) r = layer_contains(layers[l], pp);
      out[i++] = r;
      found += r;
    }
    return found;
  }
  // True when contains_many takes contains_many_by_layer.
  bool batches_by_layer() const noexcept { return size_in_bytes() > 4 * detail::l2_cache_bytes(); }
  // Hashes a batch, then per layer, newest first, prefetches the words every
  // still-undecided key will test (in layers of 256 KiB and more) and tests them.
  template <class Keys>
  size_t contains_many_by_layer(const Keys& keys, std::span<bool> out) const noexcept;

  uint64_t size() const noexcept { return count_; }  // keys inserted (counted by insert)
  bool empty() const noexcept { return count_ == 0; }
  size_t layer_count() const noexcept { return layers_.size(); }
  uint32_t max_layers() const noexcept { return limit_; }
  const Params& params() const noexcept { return params_; }
  uint64_t seed() const noexcept { return hasher_.seed; }
  const Hasher& hasher() const noexcept { return hasher_; }
  std::span<const uint64_t> layer_words(size_t i) const noexcept { return layers_[i].words; }
  uint64_t layer_items(size_t i) const noexcept { return layers_[i].items; }
  const ScalableBloomLayerGeometry& layer_geometry(size_t i) const noexcept { return layers_[i].geo; }
  uint64_t layer_bit_count(size_t i) const noexcept {
    uint64_t c = 0;
    for (uint64_t w : layers_[i].words) c += static_cast<uint64_t>(std::popcount(w));
    return c;
  }

  // The current false-positive estimate: 1 - prod(1 - q_i), q_i layer i's rate: for a
  // layer of at most detail::kExactRateLayerBits bits, exactly the fraction of probe
  // progressions its bits answer yes to; else at its fill (detail::layer_rate_at_fill:
  // f_i^k_i, f_i the fraction of its bits set, plus the term of double hashing's
  // correlated probes, which small layers feel).
  // The exact counts are bounded to 2^26 probes in all (a file may hold many small
  // layers); past that the formula is used.
  double expected_fpp() const {
    double pass = 1;
    double budget = double(uint64_t{1} << 26);
    for (size_t i = 0; i < layers_.size(); ++i) {
      const auto& g = layers_[i].geo;
      const double f = static_cast<double>(layer_bit_count(i)) / static_cast<double>(g.bits);
      if (f >= 1) {
        pass = 0;
        continue;
      }
      if (g.bits <= detail::kExactRateLayerBits) {
        const double m = static_cast<double>(g.bits);
        const double cost = m * m / 2 * g.hashes;  // progressions times their probes, at most
        if (cost <= budget) {
          budget -= cost;
          pass *= 1 - detail::layer_rate_of_bits(layers_[i].words.data(), g.bits, g.hashes);
          continue;
        }
      }
      const detail::DoubleHashingOverlaps dh(g.hashes);
      pass *= 1 - std::min(1.0, detail::layer_rate_at_fill(dh, g.bits, g.hashes, static_cast<double>(layers_[i].items), f));
    }
    return 1 - pass;
  }
  size_t size_in_bytes() const noexcept {
    size_t b = 0;
    for (const auto& l : layers_) b += l.words.size() * 8;
    return b;
  }

  bool operator==(const BasicScalableBloomFilter& o) const noexcept {
    if (!(params_ == o.params_) || hasher_.seed != o.hasher_.seed || layers_.size() != o.layers_.size()) return false;
    for (size_t i = 0; i < layers_.size(); ++i)
      if (layers_[i].items != o.layers_[i].items || layers_[i].words != o.layers_[i].words) return false;
    return true;
  }

  // The amq container (Kind::scalable_bloom); docs/format.md describes it.
  std::vector<std::byte> serialize() const {
    return detail::serialize_scalable(Hasher::id, hasher_.seed, params_, layers_);
  }
  // Throws amq::Error on malformed input, or Errc::unsupported for another hasher.
  static BasicScalableBloomFilter load(std::span<const std::byte> file) {
    detail::LoadedScalable l = detail::load_scalable(file, Hasher::id);
    return BasicScalableBloomFilter(l.params, l.seed, std::move(l.layers));
  }

 private:
  // From validated layers.
  BasicScalableBloomFilter(const detail::ScalableParams& params, uint64_t seed, std::vector<detail::ScalableLayer> layers)
      : params_(params), limit_(detail::scalable_layer_limit(params)), layers_(std::move(layers)) {
    hasher_.seed = seed;
    for (const auto& l : layers_) count_ += l.items;
  }

  // Branch-free in groups of four probes, as BloomFilter::contains_hash (docs/decisions/0010).
  static bool layer_contains(const detail::ScalableLayer& l, detail::ProbePair pp) noexcept {
    const uint32_t k = l.geo.hashes;
    const uint64_t* words = l.words.data();
    uint32_t j = 0;
    while (true) {
      uint64_t all = 1;
      const uint32_t end = std::min(k, j + 4);
      for (; j < end; ++j) {
        const uint64_t bit = l.mod.mod(pp.a + j * pp.b);
        all &= words[bit >> 6] >> (bit & 63);
      }
      if ((all & 1) == 0) return false;
      if (j >= k) return true;
    }
  }

  void open_layer() {
    if (layers_.size() >= limit_)
      throw Error(Errc::full, "scalable Bloom filter: all " + std::to_string(limit_) +
                                  " layers are full (raise the initial capacity or the growth)");
    layers_.push_back(detail::make_scalable_layer(params_, static_cast<uint32_t>(layers_.size())));
  }

  detail::ScalableParams params_;
  Hasher hasher_{};
  uint32_t limit_ = 1;
  std::vector<detail::ScalableLayer> layers_;
  uint64_t count_ = 0;
};

template <class Hasher>
template <class Keys>
size_t BasicScalableBloomFilter<Hasher>::contains_many_by_layer(const Keys& keys, std::span<bool> out) const noexcept {
  constexpr size_t kB = detail::kBatch;
  constexpr size_t kPrefetchBytes = size_t{256} << 10;  // smaller layers stay in cache
  detail::ProbePair pp[kB];
  size_t found = 0;
  const size_t n = std::size(keys);
  auto it = std::begin(keys);
  for (size_t i = 0; i < n; i += kB) {
    const size_t m = std::min(kB, n - i);
    for (size_t j = 0; j < m; ++j, ++it) {
      pp[j] = detail::probe_pair(hasher_(KeyView(*it).bytes()));
      out[i + j] = false;
    }
    for (size_t li = layers_.size(); li-- > 0;) {
      const detail::ScalableLayer& l = layers_[li];
      if (l.words.size() * 8 >= kPrefetchBytes) {
        for (size_t j = 0; j < m; ++j) {
          if (out[i + j]) continue;
          for (uint32_t h = 0; h < l.geo.hashes; ++h) detail::prefetch(&l.words[l.mod.mod(pp[j].a + h * pp[j].b) >> 6]);
        }
      }
      for (size_t j = 0; j < m; ++j)
        if (!out[i + j] && layer_contains(l, pp[j])) out[i + j] = true;
    }
    for (size_t j = 0; j < m; ++j) found += out[i + j];
  }
  return found;
}

using ScalableBloomFilter = BasicScalableBloomFilter<>;

}  // namespace amq
