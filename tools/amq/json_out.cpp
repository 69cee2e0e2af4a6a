#include "json_out.hpp"

#include <charconv>
#include <cmath>

namespace amq::cli {

std::string json_text(const Json& j, int indent) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

Json json_number_or_string(std::string_view text) {
  const std::string_view digits = !text.empty() && text[0] == '-' ? text.substr(1) : text;
  // A number starts with a digit, and a leading 0 is alone or followed by '.' (so that
  // "007" and hex such as "0a1f" stay strings).
  if (digits.empty() || digits[0] < '0' || digits[0] > '9') return std::string(text);
  if (digits[0] == '0' && digits.size() > 1 && digits[1] != '.' && digits[1] != 'e') return std::string(text);
  const char* end = text.data() + text.size();
  if (text[0] != '-') {
    uint64_t u = 0;
    if (auto r = std::from_chars(text.data(), end, u); r.ec == std::errc() && r.ptr == end) return u;
  } else {
    int64_t i = 0;
    if (auto r = std::from_chars(text.data(), end, i); r.ec == std::errc() && r.ptr == end) return i;
  }
  double d = 0;
  if (auto r = std::from_chars(text.data(), end, d); r.ec == std::errc() && r.ptr == end && std::isfinite(d)) return d;
  return std::string(text);
}

}  // namespace amq::cli
