#include "numbers.hpp"

#include <fmt/core.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "amq/error.hpp"

namespace amq::cli {
namespace {

[[noreturn]] void bad(std::string_view text, std::string_view why) {
  throw Error(Errc::invalid_argument, fmt::format("'{}' {}", text, why));
}

template <class Parse>
CLI::Validator transformer(std::string desc, Parse parse) {
  return CLI::Validator(
      [parse](std::string& text) -> std::string {
        try {
          text = parse(text);
          return {};
        } catch (const Error& e) {
          return e.what();
        }
      },
      std::move(desc));
}

}  // namespace

uint64_t parse_byte_size(std::string_view text) {
  std::string_view number = text;
  const bool binary = number.ends_with("iB");  // "GiB": the unit letter is required
  if (binary) number.remove_suffix(2);
  else if (number.ends_with("B")) number.remove_suffix(1);
  int shift = 0;
  if (!number.empty()) {
    switch (number.back()) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      case 't': case 'T': shift = 40; break;
      default: break;
    }
  }
  if (shift) number.remove_suffix(1);
  else if (binary) bad(text, "is not a size (a number of bytes, with k, M, G or T)");
  uint64_t n = 0;
  try {
    n = parse_count(number);
  } catch (const Error&) {
    bad(text, "is not a size (a number of bytes, with k, M, G or T)");
  }
  if (shift && n > (UINT64_MAX >> shift)) bad(text, "is out of range");
  return n << shift;
}

CLI::Validator count_in(uint64_t lo, uint64_t hi) {
  return transformer("", [lo, hi](const std::string& s) { return std::to_string(parse_count(s, lo, hi)); });
}

CLI::Validator real_in(double lo, Bound lo_bound, double hi, Bound hi_bound) {
  return transformer("", [=](const std::string& s) {
    return fmt::format("{}", parse_real(s, lo, lo_bound, hi, hi_bound));  // shortest text that reads back the same
  });
}

CLI::Validator byte_size() {
  return transformer("", [](const std::string& s) { return std::to_string(parse_byte_size(s)); });
}

std::string bytes_text(uint64_t bytes) {
  static const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{} bytes ({:.3g} {})", bytes, v, units[u]);
}

namespace {

std::optional<uint64_t> read_number(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  if (!(in >> s)) return std::nullopt;
  uint64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;  // "max": no limit
  return v;
}

std::optional<uint64_t> meminfo_available() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    uint64_t kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  return std::nullopt;
}

// cgroup v2: memory.max less memory.current of this process's group.
std::optional<uint64_t> cgroup_available() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) != 0) continue;
    const std::string dir = "/sys/fs/cgroup" + line.substr(3);
    const auto max = read_number(dir + "/memory.max");
    if (!max) return std::nullopt;
    const uint64_t current = read_number(dir + "/memory.current").value_or(0);
    return *max > current ? *max - current : 0;
  }
  return std::nullopt;
}

}  // namespace

std::optional<uint64_t> available_memory() {
  std::optional<uint64_t> least;
  const auto take = [&](std::optional<uint64_t> v) {
    if (v && (!least || *v < *least)) least = v;
  };
  take(meminfo_available());
  take(cgroup_available());
  rlimit rl{};
  if (::getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) take(static_cast<uint64_t>(rl.rlim_cur));
  return least;
}

}  // namespace amq::cli
