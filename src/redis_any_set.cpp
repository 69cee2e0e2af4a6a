// A filter in Redis behind AnySet (open_redis_set, amq/redis_bloom_filter.hpp).
#include <fmt/core.h>

#include <memory>
#include <string>
#include <utility>

#include "amq/any_set.hpp"
#include "amq/detail/redis_client.hpp"
#include "amq/redis_bloom_filter.hpp"

namespace amq {
namespace {

class RedisSet final : public AnySet {
 public:
  RedisSet(std::string url, RedisBloomFilter filter, const RedisOptions& options)
      : url_(std::move(url)), filter_(std::move(filter)), options_(options) {}

  Kind kind() const noexcept override { return filter_.kind(); }
  bool contains(Bytes key) const override { return filter_.contains(key); }
  size_t contains_many(std::span<const Bytes> keys, std::span<bool> out) const override {
    return filter_.contains_many(keys, out);
  }
  bool is_dynamic() const noexcept override { return true; }
  void insert(Bytes key) override { filter_.insert(key); }
  void insert_many(std::span<const Bytes> keys) override { filter_.insert_many(keys); }
  SetInfo info() const override;
  std::vector<std::byte> serialize() const override { return RedisBloomFilter::pull(url_, filter_.name(), options_); }

 private:
  std::string url_;
  mutable RedisBloomFilter filter_;  // its connection changes state on every command
  RedisOptions options_;
};

SetInfo RedisSet::info() const {
  const RedisBloomInfo i = filter_.info();
  // The server, without the credentials the URL may carry.
  const detail::RedisUrl u = detail::RedisUrl::parse(url_);
  const std::string server = u.db ? fmt::format("{}/{}", u.endpoint(), u.db) : u.endpoint();
  std::vector<std::pair<std::string, std::string>> params{{"name", i.name}, {"server", server}};
  if (i.kind == Kind::scalable_bloom) {
    params.insert(params.end(), {{"initial_capacity", std::to_string(i.params.initial_capacity)},
                                 {"fpp", fmt::format("{:g}", i.params.fpp)},
                                 {"growth", fmt::format("{:g}", i.params.growth)},
                                 {"tightening", fmt::format("{:g}", i.params.tightening)},
                                 {"layout", std::to_string(i.params.layout)},
                                 {"seed", std::to_string(i.seed)},
                                 {"layers", std::to_string(i.layers.size())},
                                 {"capacity", std::to_string(i.capacity)}});
  } else {
    params.insert(params.end(), {{"hashes", std::to_string(i.layers[0].hashes)},
                                 {"strategy", i.strategy == GuavaStrategy::murmur128_mitz_64 ? "MURMUR128_MITZ_64"
                                                                                             : "MURMUR128_MITZ_32"}});
  }
  params.emplace_back("bits", std::to_string(i.bits));
  params.emplace_back("ttl_ms", std::to_string(i.ttl_ms));
  const uint64_t bytes = i.bits / 8;
  return SetInfo{.kind = i.kind,
                 .format = "redis",
                 .params = std::move(params),
                 .items = i.items,
                 .items_exact = i.kind == Kind::scalable_bloom,  // a pushed Bloom filter's count is estimated
                 .bytes = bytes,
                 .bits_per_key = i.items ? 8.0 * static_cast<double>(bytes) / static_cast<double>(i.items) : 0.0,
                 .fpp_expected = i.fpp_expected,
                 .layers = i.layers};
}

}  // namespace

std::unique_ptr<AnySet> open_redis_set(std::string_view url, std::string_view name, const RedisOptions& options) {
  return std::make_unique<RedisSet>(std::string(url), RedisBloomFilter::open(url, name, options), options);
}

}  // namespace amq
