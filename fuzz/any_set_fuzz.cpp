// Fuzzes amq::load_set: every amq container kind and the Guava stream. A loaded set
// is queried, described and re-serialized; the re-serialized bytes must load again.
#include <cstddef>
#include <cstdint>

#include "amq/any_set.hpp"
#include "amq/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  try {
    auto set = amq::load_set(in);
    (void)set->contains(in.first(std::min<size_t>(size, 8)));
    (void)set->info();
    auto again = amq::load_set(set->serialize());
    (void)again->contains(in.first(std::min<size_t>(size, 3)));
  } catch (const amq::Error&) {
  }
  return 0;
}
