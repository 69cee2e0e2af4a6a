// Fuzzes BinaryFuseFilter::load and the queries on whatever it accepts, then builds a
// filter from the input's bytes as keys (repeats included) and checks it for false
// negatives. An input that is not an amq file is split into params (its first 40 bytes)
// and payload and wrapped in a container with a correct checksum, so the loader's own
// validation is what the fuzzer works against.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "amq/binary_fuse_filter.hpp"
#include "amq/error.hpp"
#include "amq/format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  std::vector<std::byte> file;
  if (amq::has_container_magic(in) || size < 40) file.assign(in.begin(), in.end());
  else file = amq::write_container(amq::Kind::binary_fuse, in.first(40), in.subspan(40));
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto f = amq::BinaryFuseFilter::load(file);
    std::vector<std::string_view> probes;
    for (size_t i = 0; i + 4 <= size && probes.size() < 64; i += 4) probes.push_back(text.substr(i, 4));
    std::unique_ptr<bool[]> out(new bool[probes.size() + 1]);
    (void)f.contains_many(probes, std::span<bool>(out.get(), probes.size()));
    for (size_t i = 0; i < probes.size(); ++i)
      if (out[i] != f.contains(probes[i])) __builtin_trap();
    for (uint64_t h = 0; h < 16; ++h) (void)f.contains_hash(h * 0x9E3779B97F4A7C15ULL);
    if (amq::BinaryFuseFilter::load(f.serialize()).size() != f.size()) __builtin_trap();
  } catch (const amq::Error&) {
  }
  // Construction: keys of 1-3 bytes cut from the input (many repeat), every width.
  std::vector<std::string_view> keys;
  for (size_t i = 0; i < size && keys.size() < 256; i += 1 + data[i] % 3)
    keys.push_back(text.substr(i, 1 + data[i] % 3));
  amq::BinaryFuseOptions o;
  o.arity = size % 2 ? 4 : 3;
  o.fingerprint_bits = 1 + static_cast<unsigned>(size % 32);
  o.seed = size;
  const auto f = amq::BinaryFuseFilter::build(keys, o);
  for (auto k : keys)
    if (!f.contains(k)) __builtin_trap();
  return 0;
}
