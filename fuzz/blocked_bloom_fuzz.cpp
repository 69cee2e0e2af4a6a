// Fuzzes the blocked Bloom filter loaders: the amq container (its three hashers) and a raw
// Parquet bitset. A loaded filter is queried, added to, and must survive a round trip.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "amq/blocked_bloom_filter.hpp"
#include "amq/error.hpp"

namespace {

template <class Filter>
void exercise(Filter f, std::span<const std::byte> in) {
  const auto key = in.first(std::min<size_t>(in.size(), 8));
  (void)f.contains(key);
  bool out[4];
  const amq::Bytes keys[4] = {key, in.first(std::min<size_t>(in.size(), 3)), {}, in};
  (void)f.contains_many(keys, out);
  (void)f.expected_fpp();
  (void)f.approximate_element_count();
  f.insert(key);
  if (!f.contains(key)) std::abort();
  if (!(Filter::load(f.serialize()) == f)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  try {
    exercise(amq::BlockedBloomFilter::load(in), in);
  } catch (const amq::Error&) {
  }
  try {
    exercise(amq::Xxh3BlockedBloomFilter::load(in), in);
  } catch (const amq::Error&) {
  }
  try {
    exercise(amq::ParquetBloomFilter::load(in), in);
  } catch (const amq::Error&) {
  }
  try {
    exercise(amq::ParquetBloomFilter::from_parquet_bitset(in), in);
  } catch (const amq::Error&) {
  }
  return 0;
}
