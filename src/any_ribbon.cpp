// AnySet adapter for RibbonFilter (Kind::ribbon): a static filter, memory-mapped when
// opened from a file.
#include <cmath>
#include <string>

#include "amq/error.hpp"
#include "amq/ribbon_filter.hpp"
#include "any_adapters.hpp"
#include "checks.hpp"

namespace amq::detail {
namespace {

// Bits a key over log2(1/fpp) (estimate_ribbon): the slots beyond the keys and the
// rounding of the result bits (within 1% of the files built for 2e4 to 1e6 keys at rates
// 1e-2 to 1e-4).
constexpr double kRibbonOverhead = 1.056;

class AnyRibbon final : public SetAdapter<RibbonFilter, Kind::ribbon> {
 public:
  using SetAdapter::SetAdapter;
  SetInfo info() const override {
    SetInfo i = make_info(Kind::ribbon, s_.size(), serialize().size(), s_.expected_fpp(), true);
    const unsigned r = s_.lower_columns();
    const uint64_t upper = s_.num_blocks() - s_.lower_blocks();
    i.params = {{"ribbon_width", std::to_string(RibbonFilter::kWidth)},
                {"result_bits", upper == 0 ? std::to_string(r)
                                : s_.lower_blocks() == 0
                                    ? std::to_string(r + 1)
                                    : std::to_string(r) + "/" + std::to_string(r + 1) + " (" +
                                          std::to_string(s_.lower_blocks()) + "/" + std::to_string(upper) + " blocks)"},
                {"bits_per_slot", fmt_double(s_.bits_per_slot())},
                {"slots", std::to_string(s_.num_slots())},
                {"hash", "xxh3 seed " + std::to_string(s_.seed())},
                {"ribbon_seed", std::to_string(s_.ribbon_seed())},
                {"mapped", s_.is_mapped() ? "yes" : "no"}};
    return i;
  }
  std::vector<std::byte> serialize() const override { return s_.serialize(); }
};


uint64_t bytes_ribbon(const BuildOptions& o, std::span<const Bytes> keys) {
  check_fpp(o.fpp);
  // The construction's working memory (about 42 bytes a key, ribbon_filter.hpp) and the
  // solution, about log2(1/fpp) bits a key.
  const double n = static_cast<double>(keys.size());
  return static_cast<uint64_t>(n * (48 + std::ceil(std::log2(1 / o.fpp)) / 8)) + 4096;
}

std::unique_ptr<AnySet> build_ribbon(const BuildOptions& o, std::span<const Bytes> keys) {
  return std::make_unique<AnyRibbon>(RibbonFilter::build(keys, o.fpp, o.seed));
}

std::unique_ptr<AnySet> load_ribbon(std::span<const std::byte> file) {
  return std::make_unique<AnyRibbon>(RibbonFilter::load(file));
}

std::unique_ptr<AnySet> open_ribbon(const std::string& path) {
  return std::make_unique<AnyRibbon>(RibbonFilter::open(path));
}

// About 1.056 log2(1/fpp) bits a key.
std::optional<uint64_t> estimate_ribbon(const SizeQuery& q) {
  check_fpp(q.fpp);
  const double bits = std::log2(1 / q.fpp) * kRibbonOverhead;
  return static_cast<uint64_t>(static_cast<double>(q.keys) * bits / 8) + kContainerOverhead;
}

constexpr std::string_view kFormats[] = {"amq"};

}  // namespace

const KindRow kRow_ribbon{
    .kind = Kind::ribbon,
    .name = "ribbon",
    .summary = "ribbon filter: a banded linear system solved for the keys, near log2(1/fpp) bits a key; static",
    .caps = {.counts_exactly = true, .mappable = true, .takes_capacity = false},
    .options = {},
    .formats = kFormats,
    .build = build_ribbon,
    .build_bytes = bytes_ribbon,
    .load = load_ribbon,
    .open = open_ribbon,
    .estimate = estimate_ribbon,
    .lookup_cost = "1 to 2 random cache lines",
    .bench_family = "ribbon",
};

}  // namespace amq::detail
