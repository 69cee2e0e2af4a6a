#include "amq/error.hpp"

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

}  // namespace amq
