// Fuzzes SuccinctSet::load and every query on whatever it accepts. An input that is
// not an amq file is split into params (the first 24 bytes, or 32 when bytes 24-31
// hold 1, the mark of coded tails) and payload and wrapped in a container with a
// correct checksum, so the structural validation itself is what the fuzzer works
// against.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "amq/error.hpp"
#include "amq/format.hpp"
#include "amq/detail/succinct_set_test_peer.hpp"
#include "amq/succinct_set.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  std::vector<std::byte> file;
  if (amq::has_container_magic(in) || size < 24) {
    file.assign(in.begin(), in.end());
  } else {
    const bool coded = size >= 32 && data[24] == 1 && std::all_of(data + 25, data + 32, [](uint8_t b) { return b == 0; });
    const size_t params = coded ? 32 : 24;
    file = amq::write_container(amq::Kind::succinct, in.first(params), in.subspan(params));
  }
  try {
    const auto s = amq::SuccinctSet::load(file);
    // Iterate (bounded), and cross-check the operations on what comes out.
    uint64_t i = 0;
    std::vector<std::string> batch;  // the keys seen and probes beside them
    for (std::string_view k : s) {
      if (!s.contains(k) || s.index_of(k) != i || s.key_at(i) != k) __builtin_trap();
      batch.emplace_back(k);
      batch.push_back(std::string(k) + "~");
      batch.emplace_back(k.substr(0, k.size() / 2));
      if (++i == 200) break;
    }
    const std::string probe(reinterpret_cast<const char*>(data), std::min<size_t>(size, 5));
    (void)s.contains(probe);
    // The interleaved batch descent (run at any size through the test peer) answers
    // as contains() does.
    batch.push_back(probe);
    std::unique_ptr<bool[]> out(new bool[batch.size()]);
    (void)amq::detail::SuccinctSetTestPeer::contains_many_interleaved(s, batch, std::span<bool>(out.get(), batch.size()));
    for (size_t j = 0; j < batch.size(); ++j)
      if (out[j] != s.contains(batch[j])) __builtin_trap();
    (void)s.rank(probe);
    auto it = s.lower_bound(probe);
    for (int n = 0; n < 3 && !(it == s.end()); ++n) ++it;
    for (std::string_view k : s.prefix(probe.substr(0, 1))) (void)k;
    if (!s.empty()) (void)s.key_at(s.size() - 1);
    (void)amq::SuccinctSet::load(s.serialize());
  } catch (const amq::Error&) {
  }
  return 0;
}
