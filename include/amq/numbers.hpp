// amq/numbers.hpp — the one set of rules amq reads numbers given as text by: the CLI's
// numeric options and the kinds' typed options (amq/registry.hpp) share them.
//
// A count is a whole number >= 0 in decimal, optionally with a fraction and an exponent
// that make it whole again (1e6, 2.5e3); a real is a decimal number with an optional
// exponent. Neither takes a sign it cannot have, nan, inf, hex, spaces or anything after
// the number, and each caller states its range.
//
//   uint64_t n = amq::parse_count("1e6");                                   // 1000000
//   double p = amq::parse_real("0.01", 0, amq::Bound::open, 1, amq::Bound::open);
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace amq {

// Both throw amq::Error(invalid_argument) with a message that quotes the text and names
// the rule broken ("'1.5' is not a whole number", "'40' is out of range: expected a
// whole number in 4..32").
uint64_t parse_count(std::string_view text, uint64_t lo = 0, uint64_t hi = UINT64_MAX);
// Bounds are open (excluded) or closed (included).
enum class Bound { open, closed };
double parse_real(std::string_view text, double lo, Bound lo_bound, double hi, Bound hi_bound);

// "in 4..32", ">= 1": a count's range as the messages state it.
std::string count_range_text(uint64_t lo, uint64_t hi);
// "in (0, 1)", "in [1, 16]": a real's range as the messages state it.
std::string real_range_text(double lo, Bound lo_bound, double hi, Bound hi_bound);
// The shortest decimal text that reads back as `v` ("3", "0.7", "1e-07").
std::string shortest_text(double v);

}  // namespace amq
