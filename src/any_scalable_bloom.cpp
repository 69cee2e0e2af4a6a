// AnySet adapter for ScalableBloomFilter (Kind::scalable_bloom).
#include <string>

#include "amq/error.hpp"
#include "amq/scalable_bloom_filter.hpp"
#include "any_adapters.hpp"

namespace amq::detail {
namespace {

class AnyScalableBloom final : public FilterAdapter<ScalableBloomFilter, Kind::scalable_bloom> {
 public:
  using FilterAdapter::FilterAdapter;
  SetInfo info() const override {
    SetInfo i = make_info(Kind::scalable_bloom, s_.size(), serialize().size(), s_.expected_fpp());
    std::string capacity, items, fill;
    for (size_t l = 0; l < s_.layer_count(); ++l) {
      if (l) {
        capacity += ',';
        items += ',';
        fill += ',';
      }
      capacity += std::to_string(s_.layer_geometry(l).capacity);
      items += std::to_string(s_.layer_items(l));
      fill += fmt_double(static_cast<double>(s_.layer_bit_count(l)) / static_cast<double>(s_.layer_geometry(l).bits));
    }
    const auto& p = s_.params();
    i.params = {{"initial_capacity", std::to_string(p.initial_capacity)},
                {"fpp", fmt_double(p.fpp)},
                {"growth", fmt_double(p.growth)},
                {"tightening", fmt_double(p.tightening)},
                {"layout", std::to_string(p.layout)},
                {"hash", "xxh3 seed " + std::to_string(s_.seed())},
                {"layers", std::to_string(s_.layer_count())},
                {"layer_capacity", capacity},
                {"layer_items", items},
                {"layer_fill", fill}};
    return i;
  }
  std::vector<std::byte> serialize() const override { return s_.serialize(); }
};

double parse_option(const BuildOptions& o, const std::string& name, double fallback) {
  const auto it = o.extra.find(name);
  if (it == o.extra.end()) return fallback;
  try {
    size_t used = 0;
    const double v = std::stod(it->second, &used);
    if (used == it->second.size()) return v;
  } catch (const std::exception&) {
  }
  throw Error(Errc::invalid_argument, "--" + name + ": not a number: '" + it->second + "'");
}

ScalableParams params_of(const BuildOptions& o, std::span<const Bytes> keys) {
  ScalableParams p;
  p.initial_capacity = std::max<uint64_t>(1, o.capacity.value_or(keys.size()));
  p.fpp = o.fpp;
  p.growth = parse_option(o, "growth", ScalableBloomFilter::kDefaultGrowth);
  p.tightening = parse_option(o, "tightening", ScalableBloomFilter::kDefaultTightening);
  return p;
}

}  // namespace

uint64_t bytes_scalable_bloom(const BuildOptions& o, std::span<const Bytes> keys) {
  const ScalableParams p = params_of(o, keys);
  check_scalable_params(p, Errc::invalid_argument);
  // The layers the keys fill: layer 0, and each next one while they do not fit.
  const uint32_t limit = scalable_layer_limit(p);
  uint64_t bytes = 0, room = 0;
  for (uint32_t i = 0; i < limit && (i == 0 || room < keys.size()); ++i) {
    const LayerGeometry g = layer_geometry(p, i);
    bytes += g.bits / 8;
    room += g.capacity;
  }
  return bytes;
}

std::unique_ptr<AnySet> build_scalable_bloom(const BuildOptions& o, std::span<const Bytes> keys) {
  require_format(o, {"amq"}, Kind::scalable_bloom);
  ScalableBloomFilter f(params_of(o, keys), o.seed);
  for (Bytes k : keys) f.insert(k);
  return std::make_unique<AnyScalableBloom>(std::move(f));
}

std::unique_ptr<AnySet> load_scalable_bloom(std::span<const std::byte> file) {
  return std::make_unique<AnyScalableBloom>(ScalableBloomFilter::load(file));
}

}  // namespace amq::detail
