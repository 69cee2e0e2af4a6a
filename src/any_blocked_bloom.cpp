// AnySet adapter for BlockedBloomFilter and ParquetBloomFilter (Kind::blocked_bloom).
#include <string>

#include "amq/blocked_bloom_filter.hpp"
#include "amq/detail/byte_io.hpp"
#include "amq/error.hpp"
#include "any_adapters.hpp"

namespace amq::detail {
namespace {

template <class Filter>
class AnyBlockedBloom final : public AnySet {
 public:
  explicit AnyBlockedBloom(Filter f) : f_(std::move(f)) {}
  Kind kind() const noexcept override { return Kind::blocked_bloom; }
  bool contains(Bytes key) const override { return f_.contains(key); }
  size_t contains_many(std::span<const Bytes> keys, std::span<bool> out) const override {
    return f_.contains_many(keys, out);
  }
  bool is_dynamic() const noexcept override { return true; }
  void insert(Bytes key) override { f_.insert(key); }
  SetInfo info() const override {
    SetInfo i = make_info(Kind::blocked_bloom, f_.approximate_element_count(), serialize().size(), f_.expected_fpp(),
                          false);
    std::string hash = std::string(hasher_name(f_.hasher().id)) + " seed " + std::to_string(f_.seed());
    if (f_.hasher().id == Xxh64Hasher::id && f_.seed() == 0) hash += " (parquet)";
    i.params = {{"blocks", std::to_string(f_.num_blocks())},
                {"bits", std::to_string(f_.bit_size())},
                {"hash", hash},
                {"bits_set", std::to_string(f_.bit_count())}};
    return i;
  }
  std::vector<std::byte> serialize() const override { return f_.serialize(); }

 private:
  Filter f_;
};

template <class Filter>
std::unique_ptr<AnySet> build_blocked(const BuildOptions& o, std::span<const Bytes> keys) {
  auto f = Filter::create(o.capacity.value_or(keys.size()), o.fpp, o.seed);
  for (Bytes k : keys) f.insert(k);
  return std::make_unique<AnyBlockedBloom<Filter>>(std::move(f));
}

}  // namespace

std::unique_ptr<AnySet> build_blocked_bloom(const BuildOptions& o, std::span<const Bytes> keys) {
  require_format(o, {"amq"}, Kind::blocked_bloom);
  if (o.extra.count("parquet")) {
    if (o.seed != 0)
      throw Error(Errc::invalid_argument, "--parquet hashes as Parquet does (XXH64 with seed 0): --seed must be 0");
    return build_blocked<ParquetBloomFilter>(o, keys);
  }
  return build_blocked<BlockedBloomFilter>(o, keys);
}

std::unique_ptr<AnySet> load_blocked_bloom(std::span<const std::byte> file) {
  // The params start with the hasher id: pick the filter type that reads it.
  const Container c = parse_container(file, Kind::blocked_bloom);
  if (c.params.size() >= 4 && load_le32(c.params.data()) == Xxh64Hasher::id)
    return std::make_unique<AnyBlockedBloom<ParquetBloomFilter>>(ParquetBloomFilter::load(file));
  return std::make_unique<AnyBlockedBloom<BlockedBloomFilter>>(BlockedBloomFilter::load(file));
}

}  // namespace amq::detail
