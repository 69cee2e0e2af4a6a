// Internal: the argument checks every structure shares, so that a false-positive rate
// or a size out of range is reported in the same words by every kind.
#pragma once

#include <string>
#include <string_view>

#include "amq/error.hpp"

namespace amq::detail {

// A double in messages and infos: %g's six significant digits ("0.01", "1e-300", "nan").
std::string number_text(double v);

// Throws Error(code, "<what>false-positive probability must be in (0, MAX), got X")
// unless fpp is a number with 0 < fpp < max (fpp <= max when max_inclusive). Loaders
// pass Errc::corrupt: the value came from a file.
void check_fpp(double fpp, double max = 1.0, bool max_inclusive = false, std::string_view what = {},
               Errc code = Errc::invalid_argument);

}  // namespace amq::detail
