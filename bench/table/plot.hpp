// amq bench --plot: bits/key against lookup time for the filter rows of the bench
// table, drawn by gnuplot, with the space lower bound log2(1/eps) of each target rate.
#pragma once

#include <span>
#include <string>

#include "bench_table.hpp"

namespace amq::cli {

// Rows that are filters: measured (n > 0), with a false-positive target and lookup
// times. Exact structures (no target rate) are left out.
bool is_plotted_row(const bench::Row& r);

// Draws the plotted rows of `rows` into `output` (SVG, or PNG when the name ends in
// ".png") with gnuplot, found on PATH and run without a shell; its data and script go
// to a temporary directory that is removed after. Returns false, after one line on
// stderr saying what is missing, when gnuplot is not on PATH or no row is a filter;
// throws Error when gnuplot cannot be run or fails.
bool plot_bench(const std::string& output, const std::string& title, std::span<const bench::Row> rows);

}  // namespace amq::cli
