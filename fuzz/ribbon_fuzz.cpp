// Fuzzes amq::RibbonFilter: the loader and the construction.
//  * Containers, and inputs whose first byte is even, are files: the latter are split
//    into params (the first 56 bytes) and payload and wrapped in a valid container, so
//    the fuzzer reaches the filter's own checks behind the checksum. A filter that loads
//    is queried (contains_hash and contains_many_hashes must agree, the expected rate is
//    a probability) and re-serialized; that must load again to an equal filter.
//  * Other inputs whose first byte is odd are key sets: the next byte picks the rate, the rest
//    are 4-byte keys (duplicates likely). The filter must hold every key, and survive a
//    round trip through its container.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "amq/error.hpp"
#include "amq/format.hpp"
#include "amq/ribbon_filter.hpp"

namespace {

void check_queries(const amq::RibbonFilter& f, size_t salt) {
  uint64_t probes[64];
  for (uint64_t i = 0; i < 64; ++i) probes[i] = (i * 0x9e3779b97f4a7c15ull) ^ salt;
  probes[0] = 0;
  probes[1] = ~uint64_t{0};
  bool out[64];
  for (size_t batch : {size_t{1}, size_t{17}, size_t{64}}) {
    const size_t found = f.contains_many_hashes(std::span<const uint64_t>(probes, batch), std::span<bool>(out, batch));
    size_t expect = 0;
    for (size_t i = 0; i < batch; ++i) {
      if (out[i] != f.contains_hash(probes[i])) std::abort();
      expect += out[i];
    }
    if (found != expect) std::abort();
  }
  const double p = f.expected_fpp();
  if (!(p >= 0 && p <= 1)) std::abort();
  const auto again = amq::RibbonFilter::load(f.serialize());
  if (!(again == f)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  if (size > 0 && (data[0] & 1) && !amq::has_container_magic(in)) {
    const double fpp = size > 1 ? std::ldexp(1.0, -1 - data[1] % 24) * (1.0 + (data[1] >> 5) / 8.0) : 0.01;
    std::vector<uint64_t> keys;
    for (size_t i = 2; i + 4 <= size; i += 4) {
      uint32_t k;
      std::memcpy(&k, data + i, 4);
      keys.push_back(k);
    }
    const auto f = amq::RibbonFilter::build(keys, std::min(fpp, 0.75));
    for (uint64_t k : keys)
      if (!f.contains(k)) std::abort();
    if (f.size() > keys.size()) std::abort();
    check_queries(f, size);
    return 0;
  }
  std::vector<std::byte> wrapped;
  if (!amq::has_container_magic(in)) {
    const size_t split = std::min<size_t>(56, size);
    wrapped = amq::write_container(amq::Kind::ribbon, in.first(split), in.subspan(split));
    in = wrapped;
  }
  try {
    check_queries(amq::RibbonFilter::load(in), size);
  } catch (const amq::Error&) {
  }
  return 0;
}
