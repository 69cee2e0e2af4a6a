// Fuzzes ScalableBloomFilter::load. A loaded filter is queried and added to (it may
// open a layer, or refuse with Errc::full), and must survive a round trip.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "amq/error.hpp"
#include "amq/scalable_bloom_filter.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  try {
    auto f = amq::ScalableBloomFilter::load(in);
    const auto key = in.first(std::min<size_t>(in.size(), 8));
    (void)f.contains(key);
    bool out[3];
    const amq::Bytes keys[3] = {key, in.first(std::min<size_t>(in.size(), 3)), in};
    (void)f.contains_many(keys, out);
    (void)f.expected_fpp();
    if (!(amq::ScalableBloomFilter::load(f.serialize()) == f)) std::abort();
    try {
      f.insert(key);
      if (!f.contains(key)) std::abort();
    } catch (const amq::Error& e) {
      if (e.code() != amq::Errc::full) std::abort();
    }
    if (!(amq::ScalableBloomFilter::load(f.serialize()) == f)) std::abort();
  } catch (const amq::Error&) {
  }
  return 0;
}
