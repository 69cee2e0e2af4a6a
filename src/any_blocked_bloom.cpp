// AnySet adapter for BlockedBloomFilter and ParquetBloomFilter (Kind::blocked_bloom),
// kept in the amq container or, with format "parquet", as Parquet's raw bitset.
#include <string>

#include "amq/blocked_bloom_filter.hpp"
#include "amq/detail/byte_io.hpp"
#include "amq/error.hpp"
#include "any_adapters.hpp"

namespace amq::detail {
namespace {

template <class Filter>
class AnyBlockedBloom final : public FilterAdapter<Filter, Kind::blocked_bloom> {
 public:
  using Base = FilterAdapter<Filter, Kind::blocked_bloom>;
  using Base::s_;
  explicit AnyBlockedBloom(Filter f, bool raw = false) : Base(std::move(f)), raw_(raw) {}
  SetInfo info() const override {
    SetInfo i = make_info(Kind::blocked_bloom, s_.approximate_element_count(), serialize().size(), s_.expected_fpp(),
                          false);
    i.format = raw_ ? "parquet" : "amq";
    std::string hash = std::string(hasher_name(s_.hasher().id)) + " seed " + std::to_string(s_.seed());
    if (s_.hasher().id == Xxh64Hasher::id && s_.seed() == 0) hash += " (parquet)";
    i.params = {{"blocks", std::to_string(s_.num_blocks())},
                {"bits", std::to_string(s_.bit_size())},
                {"hash", hash},
                {"bits_set", std::to_string(s_.bit_count())}};
    return i;
  }
  std::vector<std::byte> serialize() const override { return raw_ ? s_.to_parquet_bitset() : s_.serialize(); }

 private:
  bool raw_;
};

template <class Filter>
std::unique_ptr<AnySet> build_blocked(const BuildOptions& o, std::span<const Bytes> keys, bool raw) {
  auto f = Filter::create(o.capacity.value_or(keys.size()), o.fpp, o.seed);
  for (Bytes k : keys) f.insert(k);
  return std::make_unique<AnyBlockedBloom<Filter>>(std::move(f), raw);
}

std::unique_ptr<AnySet> build_blocked_bloom(const BuildOptions& o, std::span<const Bytes> keys) {
  // Format "parquet" writes the raw bitset, which only makes sense with Parquet's hash.
  const bool raw = o.format == "parquet";
  if (flag_option(o.extra, "parquet") || raw) {
    if (o.seed != 0)
      throw Error(Errc::invalid_argument, "--parquet hashes as Parquet does (XXH64 with seed 0): --seed must be 0");
    return build_blocked<ParquetBloomFilter>(o, keys, raw);
  }
  return build_blocked<BlockedBloomFilter>(o, keys, false);
}

uint64_t bytes_blocked_bloom(const BuildOptions& o, std::span<const Bytes> keys) {
  return detail::sbbf::blocks_for(o.capacity.value_or(keys.size()), o.fpp) * sizeof(detail::sbbf::Block);
}

std::unique_ptr<AnySet> load_blocked_bloom(std::span<const std::byte> file) {
  // The params start with the hasher id: pick the filter type that reads it.
  const Container c = parse_container(file, Kind::blocked_bloom);
  const uint32_t id = c.params.size() >= 4 ? load_le32(c.params.data()) : 0;
  if (id == Xxh64Hasher::id)
    return std::make_unique<AnyBlockedBloom<ParquetBloomFilter>>(ParquetBloomFilter::load(file));
  if (id == Xxh3Hasher::id)  // written before Mix64Hasher: answered with XXH3 as then
    return std::make_unique<AnyBlockedBloom<Xxh3BlockedBloomFilter>>(Xxh3BlockedBloomFilter::load(file));
  return std::make_unique<AnyBlockedBloom<BlockedBloomFilter>>(BlockedBloomFilter::load(file));
}

std::optional<uint64_t> estimate_blocked_bloom(const SizeQuery& q) {
  return detail::sbbf::blocks_for(q.keys, q.fpp) * sizeof(detail::sbbf::Block) + kContainerOverhead;
}

constexpr OptionSpec kOptions[] = {
    {.name = "parquet", .type = OptionType::flag, .help = "Parquet's hashing (XXH64, seed 0)"},
};
constexpr std::string_view kFormats[] = {"amq", "parquet"};

}  // namespace

const KindRow kRow_blocked_bloom{
    .kind = Kind::blocked_bloom,
    .name = "blocked-bloom",
    .summary = "split-block Bloom filter (Parquet's layout): every probe in one 32-byte block; takes inserts",
    .caps = {.dynamic = true, .fills_past_capacity = true},
    .options = kOptions,
    .formats = kFormats,
    .build = build_blocked_bloom,
    .build_bytes = bytes_blocked_bloom,
    .load = load_blocked_bloom,
    .open = nullptr,
    .estimate = estimate_blocked_bloom,
    .lookup_cost = "1 random cache line",
    .bench_family = "bloom-family",
};

std::unique_ptr<AnySet> load_blocked_bloom_parquet(std::span<const std::byte> bitset) {
  return std::make_unique<AnyBlockedBloom<ParquetBloomFilter>>(ParquetBloomFilter::from_parquet_bitset(bitset), true);
}

}  // namespace amq::detail
