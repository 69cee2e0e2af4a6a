#include "amq/numbers.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "amq/error.hpp"

namespace amq {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw Error(Errc::invalid_argument, "'" + std::string(text) + "' " + why);
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

std::string g_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

std::string count_range_text(uint64_t lo, uint64_t hi) {
  if (hi == UINT64_MAX) return ">= " + std::to_string(lo);
  return "in " + std::to_string(lo) + ".." + std::to_string(hi);
}

std::string real_range_text(double lo, Bound lo_bound, double hi, Bound hi_bound) {
  return std::string("in ") + (lo_bound == Bound::open ? "(" : "[") + g_text(lo) + ", " + g_text(hi) +
         (hi_bound == Bound::open ? ")" : "]");
}

std::string shortest_text(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

uint64_t parse_count(std::string_view text, uint64_t lo, uint64_t hi) {
  if (text.empty()) bad(text, "is empty: expected a whole number");
  if (text[0] == '-') bad(text, "is negative: expected a whole number " + count_range_text(lo, hi));
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
  const auto too_large = [&] { bad(text, "is out of range: expected a whole number " + count_range_text(lo, hi)); };
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
  if (x < lo || x > hi) bad(text, "is out of range: expected a whole number " + count_range_text(lo, hi));
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

}  // namespace amq
