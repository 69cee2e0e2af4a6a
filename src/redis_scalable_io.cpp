// Converts between ScalableBloomFilter files and RedisBloomFilter::Layers, for
// RedisBloomFilter::push()/pull(). Builds without ScalableBloomFilter report
// Errc::unsupported.
#include <string>

#include "amq/error.hpp"
#include "amq/redis_bloom_filter.hpp"

#if __has_include("amq/scalable_bloom_filter.hpp")
#include "amq/scalable_bloom_filter.hpp"
#define AMQ_HAVE_SCALABLE_BLOOM 1
#endif

namespace amq::detail {

#if AMQ_HAVE_SCALABLE_BLOOM
RedisBloomFilter::Layers scalable_file_to_layers(std::span<const std::byte> file) {
  const ScalableBloomFilter f = ScalableBloomFilter::load(file);
  RedisBloomFilter::Layers out;
  out.params = f.params();
  out.seed = f.seed();
  out.key_type = container_key_type(file);
  for (uint32_t i = 0; i < f.layer_count(); ++i) {
    const auto w = f.layer_words(i);
    out.words.emplace_back(w.begin(), w.end());
    out.items.push_back(f.layer_items(i));
  }
  return out;
}

std::vector<std::byte> layers_to_scalable_file(const RedisBloomFilter::Layers& layers) {
  auto file = ScalableBloomFilter::from_layers(layers.params, layers.seed, layers.words, layers.items).serialize();
  if (layers.key_type != KeyType::unknown) set_container_key_type(file, layers.key_type);
  return file;
}
#else
RedisBloomFilter::Layers scalable_file_to_layers(std::span<const std::byte>) {
  throw Error(Errc::unsupported, "this build has no ScalableBloomFilter: scalable-bloom files cannot be pushed");
}
std::vector<std::byte> layers_to_scalable_file(const RedisBloomFilter::Layers&) {
  throw Error(Errc::unsupported, "this build has no ScalableBloomFilter: pull a scalable-bloom with pull_layers()");
}
#endif

}  // namespace amq::detail
