// Internal: the argument checks every structure shares, so that a false-positive rate
// or a size out of range is reported in the same words by every kind.
#pragma once

#include <string>
#include <string_view>

namespace amq::detail {

// A double in messages and infos: %g's six significant digits ("0.01", "1e-300", "nan").
std::string number_text(double v);

// Throws Error(invalid_argument, "<what>false-positive probability must be in (0, MAX),
// got X") unless fpp is a number with 0 < fpp < max (fpp <= max when max_inclusive).
void check_fpp(double fpp, double max = 1.0, bool max_inclusive = false, std::string_view what = {});

}  // namespace amq::detail
