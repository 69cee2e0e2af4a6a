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

bool is_digit(char c) { return c >= '0' && c <= '9'; }

[[noreturn]] void bad(std::string_view text, std::string_view why) {
  throw Error(Errc::invalid_argument, fmt::format("'{}' {}", text, why));
}

// Splits "123.45e-6" into its digits, fraction length and exponent; false unless the
// whole text has that form (no sign: the caller handles it).
bool split_decimal(std::string_view s, std::string& digits, int64_t& exponent) {
  size_t i = 0;
  digits.clear();
  while (i < s.size() && is_digit(s[i])) digits += s[i++];
  const size_t int_digits = digits.size();
  int64_t frac = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) {
      digits += s[i++];
      ++frac;
    }
  }
  if (digits.empty() || (int_digits == 0 && frac == 0)) return false;
  int64_t e = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool neg = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (i == s.size()) return false;
    while (i < s.size() && is_digit(s[i])) e = std::min<int64_t>(e * 10 + (s[i++] - '0'), 100000);
    if (neg) e = -e;
  }
  if (i != s.size()) return false;
  exponent = e - frac;
  return true;
}

std::string range_text(uint64_t lo, uint64_t hi) {
  if (hi == UINT64_MAX) return fmt::format(">= {}", lo);
  return fmt::format("in {}..{}", lo, hi);
}

std::string real_range_text(double lo, Bound lo_bound, double hi, Bound hi_bound) {
  return fmt::format("in {}{:g}, {:g}{}", lo_bound == Bound::open ? '(' : '[', lo, hi,
                     hi_bound == Bound::open ? ')' : ']');
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

uint64_t parse_count(std::string_view text, uint64_t lo, uint64_t hi) {
  if (text.empty()) bad(text, "is empty: expected a whole number");
  if (text[0] == '-') bad(text, "is negative: expected a whole number " + range_text(lo, hi));
  std::string digits;
  int64_t exponent = 0;
  if (!split_decimal(text, digits, exponent)) bad(text, "is not a number");
  // The digits' value times 10^exponent, exactly.
  if (exponent < 0) {
    const size_t drop = static_cast<size_t>(std::min<int64_t>(-exponent, static_cast<int64_t>(digits.size())));
    if (digits.find_first_not_of('0', digits.size() - drop) != std::string::npos)
      bad(text, "is not a whole number");
    digits.resize(digits.size() - drop);
    exponent = 0;
  }
  const auto too_large = [&] { bad(text, "is out of range: expected a whole number " + range_text(lo, hi)); };
  unsigned __int128 v = 0;
  for (char c : digits) {
    v = v * 10 + static_cast<unsigned>(c - '0');
    if (v > UINT64_MAX) too_large();
  }
  for (int64_t e = 0; e < exponent && v != 0; ++e) {
    v *= 10;
    if (v > UINT64_MAX) too_large();
  }
  const auto x = static_cast<uint64_t>(v);
  if (x < lo || x > hi) bad(text, "is out of range: expected a whole number " + range_text(lo, hi));
  return x;
}

double parse_real(std::string_view text, double lo, Bound lo_bound, double hi, Bound hi_bound) {
  std::string digits;
  int64_t exponent = 0;
  const std::string_view unsigned_part = !text.empty() && text[0] == '-' ? text.substr(1) : text;
  if (text.empty() || !split_decimal(unsigned_part, digits, exponent)) bad(text, "is not a number");
  double v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ptr != text.data() + text.size() || !std::isfinite(v))
    bad(text, "is out of range: expected a number " + real_range_text(lo, lo_bound, hi, hi_bound));
  const bool above_lo = lo_bound == Bound::open ? v > lo : v >= lo;
  const bool below_hi = hi_bound == Bound::open ? v < hi : v <= hi;
  if (!above_lo || !below_hi)
    bad(text, "is out of range: expected a number " + real_range_text(lo, lo_bound, hi, hi_bound));
  return v;
}

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
