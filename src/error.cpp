#include "amq/error.hpp"

#include <cstdio>

#include "checks.hpp"

namespace amq {

std::string_view errc_name(Errc code) noexcept {
  switch (code) {
    case Errc::invalid_argument: return "invalid argument";
    case Errc::truncated: return "truncated";
    case Errc::bad_magic: return "bad magic";
    case Errc::unsupported_version: return "unsupported version";
    case Errc::wrong_kind: return "wrong kind";
    case Errc::checksum_mismatch: return "checksum mismatch";
    case Errc::corrupt: return "corrupt";
    case Errc::too_large: return "too large";
    case Errc::incompatible: return "incompatible";
    case Errc::full: return "full";
    case Errc::unsupported: return "unsupported";
    case Errc::not_found: return "not found";
    case Errc::io: return "i/o error";
    case Errc::locked: return "locked";
    case Errc::remote: return "remote error";
  }
  return "error";
}

namespace detail {

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void check_fpp(double fpp, double max, bool max_inclusive, std::string_view what, Errc code) {
  if (fpp > 0 && (fpp < max || (max_inclusive && fpp == max))) return;
  throw Error(code, std::string(what) + "false-positive probability must be in (0, " +
                                          number_text(max) + (max_inclusive ? "]" : ")") + ", got " +
                                          number_text(fpp));
}

}  // namespace detail
}  // namespace amq
