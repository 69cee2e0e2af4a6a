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

ScalableParams params_of(const BuildOptions& o, uint64_t keys) {
  ScalableParams p;
  p.initial_capacity = std::max<uint64_t>(1, o.capacity.value_or(keys));
  p.fpp = o.fpp;
  p.growth = real_option(o.extra, "growth").value_or(ScalableBloomFilter::kDefaultGrowth);
  p.tightening = real_option(o.extra, "tightening").value_or(ScalableBloomFilter::kDefaultTightening);
  return p;
}

// The bytes of the layers `keys` keys fill: layer 0, and each next one while they do not
// fit (a layer is opened only by a key that needs it). Exact when every key is added;
// keys that are duplicates or false positives are not, and may leave the last layer
// counted here unopened, so this is an upper bound (if `keys` exceed every layer's
// capacity, the build throws Errc::full before it takes more).
uint64_t layer_bytes(const ScalableParams& p, uint64_t keys) {
  check_scalable_params(p, Errc::invalid_argument);
  const uint32_t limit = scalable_layer_limit(p);
  uint64_t bytes = 0, room = 0;
  for (uint32_t i = 0; i < limit && (i == 0 || room < keys); ++i) {
    const LayerGeometry g = layer_geometry(p, i);
    bytes += g.bits / 8;
    room += g.capacity;
  }
  return bytes;
}

uint64_t bytes_scalable_bloom(const BuildOptions& o, std::span<const Bytes> keys) {
  return layer_bytes(params_of(o, keys.size()), keys.size());
}

std::unique_ptr<AnySet> build_scalable_bloom(const BuildOptions& o, std::span<const Bytes> keys) {
  ScalableBloomFilter f(params_of(o, keys.size()), o.seed);
  for (Bytes k : keys) f.insert(k);
  return std::make_unique<AnyScalableBloom>(std::move(f));
}

std::unique_ptr<AnySet> load_scalable_bloom(std::span<const std::byte> file) {
  return std::make_unique<AnyScalableBloom>(ScalableBloomFilter::load(file));
}

std::optional<uint64_t> estimate_scalable_bloom(const SizeQuery& q) {
  BuildOptions o;
  o.fpp = q.fpp;
  o.extra = q.options;
  return layer_bytes(params_of(o, q.keys), q.keys) + kContainerOverhead;
}

constexpr OptionSpec kOptions[] = {
    {.name = "growth",
     .type = OptionType::real,
     .help = "size factor of each new layer",
     .real_min = 1,
     .real_max = 16,
     .default_text = "2"},
    {.name = "tightening",
     .type = OptionType::real,
     .help = "error ratio of each new layer",
     .real_min = 0,
     .real_max = 1,
     .real_min_bound = Bound::open,
     .real_max_bound = Bound::open,
     .default_text = "0.5"},
};
constexpr std::string_view kFormats[] = {"amq"};
constexpr std::string_view kListParams[] = {"layer_capacity", "layer_items", "layer_fill"};

}  // namespace

const KindRow kRow_scalable_bloom{
    .kind = Kind::scalable_bloom,
    .name = "scalable-bloom",
    .summary = "scalable Bloom filter: adds a larger, tighter layer when full, so any number of keys keeps the rate",
    .caps = {.dynamic = true, .counts_exactly = true, .grows = true},
    .options = kOptions,
    .formats = kFormats,
    .build = build_scalable_bloom,
    .build_bytes = bytes_scalable_bloom,
    .load = load_scalable_bloom,
    .open = nullptr,
    .estimate = estimate_scalable_bloom,
    .lookup_cost = "k random bits in each layer (one layer until it fills)",
    .bench_family = "bloom-family",
    .list_params = kListParams,
};

}  // namespace amq::detail
