// Fuzzes BloomFilter::load (amq container, Kind::bloom). A loaded filter must answer,
// and serialize back to exactly the bytes it was loaded from.
#include <cstdint>
#include <cstdlib>

#include "amq/bloom_filter.hpp"
#include "amq/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  try {
    const auto f = amq::BloomFilter::load(in);
    (void)f.contains(in.first(std::min<size_t>(size, 16)));
    const auto out = f.serialize();
    if (out.size() != size || !std::equal(out.begin(), out.end(), in.begin())) std::abort();
  } catch (const amq::Error&) {
  }
  return 0;
}
