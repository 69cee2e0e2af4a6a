// Fuzzes amq::GolombCodedSet::load (the amq container, Kind::gcs). Inputs that are not
// containers are split into params (the first 80 bytes) and payload and wrapped in a
// valid container, so the fuzzer reaches the set's own checks behind the checksum. A set
// that loads is queried, iterated and re-serialized; it must load again to an equal set.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include <vector>

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
    const uint64_t probes[] = {0, 1, s.range() / 2, s.range() - 1, s.range()};
    bool out[5];
    (void)s.contains_many_hashes(probes, out);
    (void)s.contains_hash(size);
    const auto again = amq::GolombCodedSet::load(s.serialize());
    if (!(again == s)) std::abort();
  } catch (const amq::Error&) {
  }
  return 0;
}
