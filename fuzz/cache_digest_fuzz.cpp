// Fuzzes the HTTP Cache Digest decoders: base64url text and the raw digest bits. A
// digest that parses is queried and its values must be strictly ascending.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "amq/error.hpp"
#include "amq/golomb_coded_set.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  auto check = [](std::span<const std::byte> raw) {
    try {
      const auto d = amq::CacheDigest::parse(raw);
      for (size_t i = 1; i < d.values().size(); ++i)
        if (d.values()[i] <= d.values()[i - 1]) std::abort();
      (void)d.contains("https://example.com/", "\"x\"");
      for (uint64_t v : d.values())
        if (!d.contains_value(v)) std::abort();
    } catch (const amq::Error&) {
    }
  };
  check(in);
  try {
    check(amq::base64url_decode(std::string_view(reinterpret_cast<const char*>(data), size)));
  } catch (const amq::Error&) {
  }
  return 0;
}
