// Fuzzes amq::Bip158Filter::parse, the raw BIP158 filter decoder. The first byte picks
// the Golomb-Rice parameter P; a filter that parses is queried, and rebuilding a filter
// from no elements must parse too.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "amq/error.hpp"
#include "amq/golomb_coded_set.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data) + 1, size - 1);
  amq::Bip158Params params;
  params.k0 = 0x0706050403020100ULL;
  params.k1 = 0x0f0e0d0c0b0a0908ULL;
  params.p = 1 + data[0] % 24;
  params.m = data[0] < 128 ? 784931 : (uint64_t{1} << params.p) + data[0];
  try {
    const auto f = amq::Bip158Filter::parse(in, params);
    if (f.values().size() != f.size()) std::abort();
    (void)f.contains(in.first(std::min<size_t>(in.size(), 20)));
    const amq::Bytes probes[] = {in, in.first(in.size() / 2)};
    bool out[2];
    (void)f.contains_many(probes, out);
  } catch (const amq::Error&) {
  }
  return 0;
}
