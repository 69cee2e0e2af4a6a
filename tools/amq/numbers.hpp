// The CLI's numbers: every numeric option is read by one of these CLI11 transformers,
// with one set of rules, and numbers are shown with %g.
//
// A count is a whole number >= 0 in decimal, optionally with a fraction and an
// exponent that make it whole again (1e6, 2.5e3); a real is a decimal number with an
// optional exponent. Neither takes a sign it cannot have, nan, inf, hex, spaces or
// anything after the number, and each option states its range. The transformer
// checks the text and rewrites it in a canonical form that CLI11 then converts, so
// CLI11's own conversion (which reads "-1" as 2^64 - 1) never sees anything else.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "amq/numbers.hpp"

namespace amq::cli {

// The rules live in the library (amq/numbers.hpp), shared with the kinds' options.
using amq::Bound;
using amq::parse_count;
using amq::parse_real;
// A count of bytes with an optional suffix k, M, G or T (powers of 1024; "KiB", "MB"
// and the like are read the same).
uint64_t parse_byte_size(std::string_view text);

// The transformers: add_option(...)->transform(count_in(1, 100)).
CLI::Validator count_in(uint64_t lo = 0, uint64_t hi = UINT64_MAX);
CLI::Validator real_in(double lo, Bound lo_bound, double hi, Bound hi_bound);
CLI::Validator byte_size();

// "12884901888 bytes (12 GiB)".
std::string bytes_text(uint64_t bytes);

// The memory this process can take now: the least of /proc/meminfo's MemAvailable
// (or sysconf's free pages), its cgroup's memory.max less memory.current, and its
// RLIMIT_AS. Empty when none of them is known.
std::optional<uint64_t> available_memory();

}  // namespace amq::cli
