// Fuzzes LogStore recovery: the input (after one mode byte) becomes the records of a
// segment behind a valid header (or, mode bit 1, the whole segment file). Open must
// either throw amq::Error or give a store that reads, writes, compacts and reopens.
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "amq/detail/crc32c.hpp"
#include "amq/error.hpp"
#include "amq/log_store.hpp"

namespace {

std::string segment_header() {
  std::array<char, 40> h{};
  std::memcpy(h.data(), "AMQSEG\r\n", 8);
  const uint16_t version = 1;
  std::memcpy(h.data() + 8, &version, 2);
  const uint64_t gen = 1;
  std::memcpy(h.data() + 16, &gen, 8);
  const uint32_t crc = amq::detail::crc32c(h.data(), h.size());
  std::memcpy(h.data() + 12, &crc, 4);
  return std::string(h.data(), h.size());
}

const std::string& work_dir() {
  static const std::string dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "amq-fuzz-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) std::abort();
    return tmpl;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::string dir = work_dir() + "/db";
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir + "/seg-0000000000000001.log", std::ios::binary);
    f << ((mode & 2) ? body : segment_header() + body);
  }
  amq::LogStoreOptions o;
  o.skip_corrupt = mode & 1;
  o.segment_bytes = 64 << 10;
  o.use_snapshot = mode & 8;
  try {
    auto db = amq::LogStore::open(dir, o);
    size_t n = 0;
    std::string first;
    bool had_fuzz = false;
    db.for_each([&](amq::Bytes k, amq::Bytes) {
      const std::string key(reinterpret_cast<const char*>(k.data()), k.size());
      if (n++ == 0) first = key;
      had_fuzz |= key == "fuzz";
    });
    if (n != db.size()) std::abort();
    if (n > 0 && !db.contains(first)) std::abort();
    db.put("fuzz", "value");
    if (mode & 4) db.compact();  // (fsyncs: slow, so only sometimes)
    if (db.get("fuzz") != "value") std::abort();
    db.close();
    auto again = amq::LogStore::open(dir, o);
    if (again.size() != n + (had_fuzz ? 0 : 1)) std::abort();
  } catch (const amq::Error&) {
  }
  return 0;
}
