#include "amq/scalable_bloom_filter.hpp"

#include <cstring>
#include <string>

#include "amq/detail/byte_io.hpp"
#include "amq/error.hpp"
#include "amq/format.hpp"
#include "checks.hpp"

namespace amq::detail {
namespace {

std::string describe(const ScalableParams& p) {
  return "initial capacity " + std::to_string(p.initial_capacity) + ", fpp " + number_text(p.fpp) + ", growth " +
         number_text(p.growth) + ", tightening " + number_text(p.tightening) + ", layout " + std::to_string(p.layout);
}

}  // namespace

uint32_t scalable_layer_limit(const ScalableParams& p) {
  uint32_t i = 0;
  while (i < kMaxLayers && layer_error(p, i) >= kMinLayerFpp &&
         (p.layout == kLegacyLayout || layer_geometry(p, i).capacity > 0))
    ++i;
  return std::max<uint32_t>(i, 1);
}

void check_scalable_params(const ScalableParams& p, Errc code) {
  check_fpp(p.fpp, 1.0, false, "scalable Bloom filter: ", code);
  if (!valid_params(p))
    throw Error(code, "scalable Bloom filter: invalid parameters (" + describe(p) +
                          "); need 1 <= initial capacity <= 2^40, 0 < fpp < 1, 1 <= growth <= 16, "
                          "0 < tightening < 1, layout 0 or 1");
  if (!(layer_error(p, 0) >= kMinLayerFpp) || layer_geometry(p, 0).capacity == 0)
    throw Error(code, "scalable Bloom filter: fpp " + number_text(p.fpp) + " is too small");
}

ScalableLayer make_scalable_layer(const ScalableParams& p, uint32_t i) {
  ScalableLayer l;
  l.geo = layer_geometry(p, i);
  l.mod = FastMod63(l.geo.bits);
  l.words.assign(l.geo.bits / 64, 0);
  return l;
}

std::vector<ScalableLayer> scalable_layers_from(const ScalableParams& p, std::vector<std::vector<uint64_t>> words,
                                                std::vector<uint64_t> items) {
  check_scalable_params(p, Errc::invalid_argument);
  if (words.size() != items.size())
    throw Error(Errc::invalid_argument, "scalable Bloom filter: " + std::to_string(words.size()) +
                                            " layers of words but " + std::to_string(items.size()) + " item counts");
  const uint32_t limit = scalable_layer_limit(p);
  if (words.empty() || words.size() > limit)
    throw Error(Errc::corrupt, "scalable Bloom filter: " + std::to_string(words.size()) +
                                   " layers (these parameters allow 1.." + std::to_string(limit) + ")");
  std::vector<ScalableLayer> layers(words.size());
  for (size_t i = 0; i < words.size(); ++i) {
    const LayerGeometry g = layer_geometry(p, static_cast<uint32_t>(i));
    if (words[i].size() != g.bits / 64)
      throw Error(Errc::corrupt, "scalable Bloom filter: layer " + std::to_string(i) + " has " +
                                     std::to_string(words[i].size()) + " words, its geometry " +
                                     std::to_string(g.bits / 64));
    if (items[i] > g.capacity)
      throw Error(Errc::corrupt, "scalable Bloom filter: layer " + std::to_string(i) + " claims " +
                                     std::to_string(items[i]) + " items, its capacity is " +
                                     std::to_string(g.capacity));
    layers[i].geo = g;
    layers[i].mod = FastMod63(g.bits);
    layers[i].words = std::move(words[i]);
    layers[i].items = items[i];
  }
  return layers;
}

std::vector<std::byte> serialize_scalable(uint32_t hasher_id, uint64_t seed, const ScalableParams& p,
                                          std::span<const ScalableLayer> layers) {
  ByteWriter params;
  params.u32(hasher_id);
  params.u32(static_cast<uint32_t>(layers.size()));
  params.u64(seed);
  params.u64(p.initial_capacity);
  params.f64(p.fpp);
  params.f64(p.growth);
  params.f64(p.tightening);
  if (p.layout != kLegacyLayout) params.u32(p.layout);  // absent: kLegacyLayout, as in files before it existed
  ByteWriter payload;
  size_t total = 0;
  for (const auto& l : layers) total += 8 + l.words.size() * 8;
  payload.buffer().reserve(total);
  for (const auto& l : layers) {
    payload.u64(l.items);
    payload.bytes(std::as_bytes(std::span(l.words)));
  }
  return write_container(Kind::scalable_bloom, params.buffer(), payload.buffer());
}

LoadedScalable load_scalable(std::span<const std::byte> file, uint32_t hasher_id) {
  const Container c = parse_container(file, Kind::scalable_bloom);
  ByteReader r(c.params, "scalable Bloom filter params");
  const uint32_t id = r.u32();
  const uint32_t num_layers = r.u32();
  LoadedScalable out;
  out.seed = r.u64();
  out.params.initial_capacity = r.u64();
  out.params.fpp = r.f64();
  out.params.growth = r.f64();
  out.params.tightening = r.f64();
  out.params.layout = kLegacyLayout;
  if (r.remaining() != 0) {
    out.params.layout = r.u32();
    if (out.params.layout == kLegacyLayout)
      throw Error(Errc::corrupt, "scalable Bloom filter: layout 0 is written by omitting the field");
    if (out.params.layout > kRateSafeLayout)
      throw Error(Errc::unsupported, "scalable Bloom filter: layout " + std::to_string(out.params.layout) +
                                         " is newer than this version of amq (it knows 0 and 1)");
  }
  r.expect_end();
  if (id != hasher_id)
    throw Error(Errc::unsupported, "scalable Bloom filter hashed with " + std::string(hasher_name(id)) + " (id " +
                                       std::to_string(id) + "); this filter type uses " +
                                       std::string(hasher_name(hasher_id)));
  check_scalable_params(out.params, Errc::corrupt);
  const uint32_t limit = scalable_layer_limit(out.params);
  if (num_layers == 0 || num_layers > limit)
    throw Error(Errc::corrupt, "scalable Bloom filter: " + std::to_string(num_layers) +
                                   " layers (these parameters allow 1.." + std::to_string(limit) + ")");
  // Every length is known from the parameters: check the payload holds exactly them
  // before allocating anything (at most 64 layers of 2^29 bytes: no overflow).
  uint64_t expected = 0;
  for (uint32_t i = 0; i < num_layers; ++i) expected += 8 + layer_geometry(out.params, i).bits / 8;
  if (c.payload.size() != expected)
    throw Error(c.payload.size() < expected ? Errc::truncated : Errc::corrupt,
                "scalable Bloom filter: payload of " + std::to_string(c.payload.size()) + " bytes, " +
                    std::to_string(num_layers) + " layers need " + std::to_string(expected));
  ByteReader p(c.payload, "scalable Bloom filter payload");
  out.layers.resize(num_layers);
  for (uint32_t i = 0; i < num_layers; ++i) {
    ScalableLayer& l = out.layers[i];
    l.geo = layer_geometry(out.params, i);
    l.mod = FastMod63(l.geo.bits);
    l.items = p.u64();
    if (l.items > l.geo.capacity)
      throw Error(Errc::corrupt, "scalable Bloom filter: layer " + std::to_string(i) + " claims " +
                                     std::to_string(l.items) + " items, its capacity is " +
                                     std::to_string(l.geo.capacity));
    const auto bytes = p.bytes(l.geo.bits / 8);
    l.words.resize(l.geo.bits / 64);
    std::memcpy(l.words.data(), bytes.data(), bytes.size());
  }
  p.expect_end();
  return out;
}

}  // namespace amq::detail
