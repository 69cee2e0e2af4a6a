#include "amq/detail/prefetch.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include <unistd.h>

namespace amq {

namespace {
// A sysfs cache size ("1024K", "32M"), in bytes; 0 if the file is missing or unreadable.
size_t read_cache_size(const std::string& path) noexcept {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return 0;
  unsigned long long v = 0;
  char unit = 0;
  const int got = std::fscanf(f, "%llu%c", &v, &unit);
  std::fclose(f);
  if (got < 1) return 0;
  if (got == 2 && unit == 'K') v <<= 10;
  if (got == 2 && unit == 'M') v <<= 20;
  return static_cast<size_t>(v);
}

std::string cache_dir(int index) { return "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/"; }

// The size of cpu0's data or unified cache of `level`, or 0.
size_t sysfs_cache_bytes(int level) noexcept {
  for (int i = 0; i < 8; ++i) {
    const std::string dir = cache_dir(i);
    std::FILE* f = std::fopen((dir + "level").c_str(), "r");
    if (!f) continue;
    int got_level = 0;
    const bool ok = std::fscanf(f, "%d", &got_level) == 1;
    std::fclose(f);
    if (!ok || got_level != level) continue;
    f = std::fopen((dir + "type").c_str(), "r");
    if (!f) continue;
    char type[16] = {};
    const bool typed = std::fscanf(f, "%15s", type) == 1;
    std::fclose(f);
    if (!typed || std::string(type) == "Instruction") continue;
    if (const size_t v = read_cache_size(dir + "size")) return v;
  }
  return 0;
}
}  // namespace

size_t detail::l2_cache_bytes() noexcept {
  static const size_t bytes = [] {
    size_t v = sysfs_cache_bytes(2);
#ifdef _SC_LEVEL2_CACHE_SIZE
    if (v == 0) {
      const long s = sysconf(_SC_LEVEL2_CACHE_SIZE);
      if (s > 0) v = static_cast<size_t>(s);
    }
#endif
    return v ? v : size_t{1} << 20;
  }();
  return bytes;
}

size_t detail::last_level_cache_bytes() noexcept {
  // sysfs names each cache of cpu0 ("32768K"); sysconf's figure may be the whole
  // package's, many times this CPU's share on a virtual machine.
  static const size_t bytes = [] {
    size_t best = 0;
    for (int i = 0; i < 8; ++i) best = std::max(best, read_cache_size(cache_dir(i) + "size"));
    return best ? best : size_t{32} << 20;
  }();
  return bytes;
}

}  // namespace amq
