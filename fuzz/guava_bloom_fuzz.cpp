// Fuzzes BloomFilter::from_guava (Guava's writeTo stream). A loaded filter must answer,
// and to_guava() must give back exactly the input.
#include <cstdint>
#include <cstdlib>

#include "amq/bloom_filter.hpp"
#include "amq/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  try {
    const auto f = amq::BloomFilter::from_guava(in);
    (void)f.contains(in.first(std::min<size_t>(size, 16)));
    const auto out = f.to_guava();
    if (out.size() != size || !std::equal(out.begin(), out.end(), in.begin())) std::abort();
  } catch (const amq::Error&) {
  }
  return 0;
}
