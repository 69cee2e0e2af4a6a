// Fuzzes amq::GolombCodedSet::load (the amq container, Kind::gcs). Inputs that are not
// containers are split into params (the first 80 bytes) and payload and wrapped in a
// valid container, so the fuzzer reaches the set's own checks behind the checksum. A set
// that loads is queried, iterated and re-serialized; it must load again to an equal set.
// Every query path must agree: contains_value with the BMI2 and the portable select,
// contains_many_hashes (in order and sorted) with contains_hash, and iteration with
// contains_value; single queries agree with the decoded values.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include <vector>

#include "amq/detail/dispatch.hpp"
#include "amq/error.hpp"
#include "amq/format.hpp"
#include "amq/golomb_coded_set.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  std::vector<std::byte> wrapped;
  if (!amq::has_container_magic(in)) {
    const size_t split = std::min<size_t>(80, size);
    wrapped = amq::write_container(amq::Kind::gcs, in.first(split), in.subspan(split));
    in = wrapped;
  }
  try {
    const auto s = amq::GolombCodedSet::load(in);
    uint64_t n = 0;
    for (uint64_t v : s) {
      if (!s.contains_value(v)) std::abort();
      ++n;
    }
    if (n != s.size()) std::abort();
    const auto t = [&] {  // the portable kernels
      const amq::detail::ScopedIsaMask portable(amq::detail::isa_bit(amq::detail::Isa::portable));
      return amq::GolombCodedSet::load(in);
    }();
    uint64_t probes[64];
    for (uint64_t i = 0; i < 64; ++i) probes[i] = (i * 0x9e3779b97f4a7c15ull) ^ size;
    probes[0] = 0;
    probes[1] = ~uint64_t{0};
    bool out[64];
    for (size_t batch : {size_t{1}, size_t{5}, size_t{64}}) {
      const size_t found = s.contains_many_hashes(std::span<const uint64_t>(probes, batch), std::span<bool>(out, batch));
      size_t expect = 0;
      for (size_t i = 0; i < batch; ++i) {
        if (out[i] != s.contains_hash(probes[i]) || out[i] != t.contains_hash(probes[i])) std::abort();
        expect += out[i];
      }
      if (found != expect) std::abort();
    }
    for (uint64_t v : {uint64_t{0}, uint64_t{1}, s.range() / 2, s.range() - 1, s.range()})
      if (s.contains_value(v) != t.contains_value(v)) std::abort();
    // Single queries against the decoded values: each value's neighbours and spread
    // probes are found exactly when they are values.
    const std::vector<uint64_t> values = s.decode_all();
    auto is_value = [&](uint64_t v) { return std::binary_search(values.begin(), values.end(), v); };
    for (size_t i = 0; i < values.size() && i < 512; ++i)
      for (uint64_t v : {values[i] - 1, values[i] + 1})
        if (v < s.range() && s.contains_value(v) != is_value(v)) std::abort();
    for (uint64_t i = 0; i < 64; ++i) {
      const uint64_t v = s.range() ? probes[i] % s.range() : 0;
      if (s.range() && s.contains_value(v) != is_value(v)) std::abort();
    }
    const auto again = amq::GolombCodedSet::load(s.serialize());
    if (!(again == s)) std::abort();
  } catch (const amq::Error&) {
  }
  return 0;
}
