#include "amq/detail/prefetch.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

namespace amq {

size_t detail::last_level_cache_bytes() noexcept {
  // sysfs names each cache of cpu0 ("32768K"); sysconf's figure may be the whole
  // package's, many times this CPU's share on a virtual machine.
  static const size_t bytes = [] {
    size_t best = 0;
    for (int i = 0; i < 8; ++i) {
      const std::string path = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size";
      std::FILE* f = std::fopen(path.c_str(), "r");
      if (!f) continue;
      unsigned long long v = 0;
      char unit = 0;
      const int got = std::fscanf(f, "%llu%c", &v, &unit);
      std::fclose(f);
      if (got < 1) continue;
      if (got == 2 && unit == 'K') v <<= 10;
      if (got == 2 && unit == 'M') v <<= 20;
      best = std::max(best, static_cast<size_t>(v));
    }
    return best ? best : size_t{32} << 20;
  }();
  return bytes;
}

}  // namespace amq
