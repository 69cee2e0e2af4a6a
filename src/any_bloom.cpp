// AnySet adapter for BloomFilter (Kind::bloom), in amq or Guava format.
#include <cmath>
#include <string>

#include "amq/bloom_filter.hpp"
#include "amq/error.hpp"
#include "any_adapters.hpp"

namespace amq::detail {
namespace {

class AnyBloom final : public FilterAdapter<BloomFilter, Kind::bloom> {
 public:
  AnyBloom(BloomFilter f, bool guava) : FilterAdapter(std::move(f)), guava_(guava) {}
  SetInfo info() const override {
    SetInfo i = make_info(Kind::bloom, items(), serialize().size(), s_.expected_fpp(), false);
    i.format = guava_ ? "guava" : "amq";
    i.params = {{"bits", std::to_string(s_.bit_size())},
                {"hashes", std::to_string(s_.num_hashes())},
                {"strategy", s_.strategy() == GuavaStrategy::murmur128_mitz_64 ? "MURMUR128_MITZ_64"
                                                                               : "MURMUR128_MITZ_32"},
                {"bits_set", std::to_string(s_.bit_count())}};
    return i;
  }
  std::vector<std::byte> serialize() const override { return guava_ ? s_.to_guava() : s_.serialize(); }

 private:
  // Guava's estimate, except for a filter with every bit set, where Guava's is infinite:
  // it counts as one bit short of full (m ln m / k keys, the coupon collector's figure).
  uint64_t items() const noexcept {
    const uint64_t n = s_.approximate_element_count();
    if (n != UINT64_MAX) return n;
    const double m = static_cast<double>(s_.bit_size());
    return static_cast<uint64_t>(std::floor(m * std::log(m) / s_.num_hashes() + 0.5));
  }
  bool guava_;
};

std::unique_ptr<AnySet> build_bloom(const BuildOptions& o, std::span<const Bytes> keys) {
  const bool guava = o.format == "guava";
  if (o.seed != 0)
    throw Error(Errc::invalid_argument, "a bloom filter takes no seed: it hashes as Guava does (murmur3, seed 0)");
  auto f = BloomFilter::create(o.capacity.value_or(keys.size()), o.fpp);
  for (Bytes k : keys) f.insert(k);
  return std::make_unique<AnyBloom>(std::move(f), guava);
}

uint64_t bytes_bloom(const BuildOptions& o, std::span<const Bytes> keys) {
  return BloomFilter::geometry(o.capacity.value_or(keys.size()), o.fpp).words * 8;
}

std::unique_ptr<AnySet> load_bloom(std::span<const std::byte> file) {
  return std::make_unique<AnyBloom>(BloomFilter::load(file), false);
}

std::optional<uint64_t> estimate_bloom(const SizeQuery& q) {
  return BloomFilter::geometry(q.keys, q.fpp).words * 8 + kContainerOverhead;
}

constexpr std::string_view kFormats[] = {"amq", "guava"};

}  // namespace

std::unique_ptr<AnySet> load_bloom_guava(std::span<const std::byte> file) {
  return std::make_unique<AnyBloom>(BloomFilter::from_guava(file), true);
}

const KindRow kRow_bloom{
    .kind = Kind::bloom,
    .name = "bloom",
    .summary = "Bloom filter, bit for bit as Guava's BloomFilter (murmur3); takes inserts, no erase",
    .caps = {.dynamic = true, .fills_past_capacity = true},
    .options = {},
    .formats = kFormats,
    .build = build_bloom,
    .build_bytes = bytes_bloom,
    .load = load_bloom,
    .open = nullptr,
    .estimate = estimate_bloom,
    .lookup_cost = "k random bits (k = log2(1/fpp) probes), each a cache miss",
    .bench_family = "bloom",
};

}  // namespace amq::detail
