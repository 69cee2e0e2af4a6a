// amq-bench: the comparison table of bench/table, as text or JSON. `amq bench ARGS`
// runs `amq-bench ARGS`. Errors are the CLI's: one escaped line on stderr starting
// "amq: ", exit status 2.
#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "amq/error.hpp"
#include "bench_table.hpp"
#include "cli.hpp"
#include "json_out.hpp"
#include "numbers.hpp"
#include "plot.hpp"

namespace amq::cli {
namespace {

struct BenchOpts {
  bench::Options b;
  bool json = false;
  std::string plot;
  bool list = false;
};

// Arguments are checked before anything is printed.
void check_bench_args(const BenchOpts& o, const std::string& families) {
  if (!o.b.only.empty()) {
    bool any = false;
    for (const auto& f : bench::family_names()) any |= f.find(o.b.only) != std::string::npos;
    if (!any)
      throw Error(Errc::invalid_argument, "--only '" + o.b.only + "' names no structure family (" + families + ")");
  }
  if (o.b.synthetic == 0 && !std::ifstream(o.b.data))
    throw Error(Errc::not_found, o.b.data + ": cannot read: " + std::strerror(errno));
  if (!o.plot.empty()) {
    const std::filesystem::path dir = std::filesystem::path(o.plot).parent_path();
    std::error_code ec;
    if (!dir.empty() && !std::filesystem::is_directory(dir, ec))
      throw Error(Errc::not_found, o.plot + ": no such directory: " + dir.string());
  }
}

// The text table's heading: the machine, the data, the method and the columns.
void print_table_heading(const bench::Options& b) {
  fmt::print("amq bench — {}\n", bench::machine_description());
  fmt::print("{}\n", bench::memory_description());
  fmt::print("data: {}\n",
             b.synthetic ? fmt::format("{} random 64-bit keys, passed as uint64_t (peers without an integer "
                                       "API get the same 8 bytes)",
                                       b.synthetic)
                         : b.data);
  fmt::print(
      "ns per key; lookups: up to {} keys from each of the present and absent lists, best of {} pass{} after a "
      "warm-up, in thread CPU time; builds: median of {} in wall time\n\n",
      bench::kLookupSample, bench::lookup_passes(b), bench::lookup_passes(b) == 1 ? "" : "es", std::max(1, b.repeats));
  fmt::print("{:<28} {:>10} {:>12} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}  {}\n", "structure", "n", "bytes",
             "bits/key", "fpp tgt", "fpp meas", "build ns", "pos ns", "neg ns", "batch ns", "params / note");
}

void print_row_text(const bench::Row& r);

// A row of the text table, with a batch inversion named first in its note.
void print_table_row(const bench::Row& r) {
  if (bench::batch_inverted(r)) {
    bench::Row flagged = r;
    const std::string inversion =
        fmt::format("BATCH INVERSION: contains_many {:.2f}x a loop of contains{}", r.batch_lookup_ns / bench::batch_reference_ns(r),
                    r.loop_lookup_ns > 0 ? " storing its answers" : "");
    flagged.note = r.note.empty() ? inversion : inversion + "; " + r.note;
    return print_row_text(flagged);
  }
  print_row_text(r);
}

void print_row_text(const bench::Row& r) {
  if (r.n == 0) {
    fmt::print("{:<28} {}\n", r.structure, r.note);
    return;
  }
  fmt::print("{:<28} {:>10} {:>12} {:>8.2f} {:>9.4g} {:>9.4g} {:>9.1f} {:>9.1f} {:>9.1f} {:>9}  {}{}{}\n",
             r.structure, r.n, r.bytes, r.bits_per_key, r.fpp_target, r.fpp_measured, r.build_ns_per_key,
             r.lookup_pos_ns, r.lookup_neg_ns,
             r.batch_lookup_ns > 0 ? fmt::format("{:.1f}", r.batch_lookup_ns) : std::string("-"), r.params,
             r.note.empty() ? "" : "; ", r.note);
}

Json row_json(const bench::Row& r) {
  return {{"structure", r.structure},
          {"params", r.params},
          {"n", r.n},
          {"bytes", r.bytes},
          {"bits_per_key", r.bits_per_key},
          {"fpp_target", r.fpp_target},
          {"fpp_measured", r.fpp_measured},
          {"build_ns_per_key", r.build_ns_per_key},
          {"lookup_pos_ns", r.lookup_pos_ns},
          {"lookup_neg_ns", r.lookup_neg_ns},
          {"batch_lookup_ns", r.batch_lookup_ns},
          {"loop_lookup_ns", r.loop_lookup_ns},
          {"batch_inverted", bench::batch_inverted(r)},
          {"note", r.note}};
}

// Runs every family, printing each row as it comes (--json: one document, written when
// the table is complete), then draws --plot.
void run_bench(const BenchOpts& o) {
  std::vector<bench::Row> rows;  // kept for --plot
  Json rows_json = Json::array();
  if (!o.json) print_table_heading(o.b);
  flush_stdout();
  bench::run_all(o.b, [&](const bench::Row& r) {
    if (!o.plot.empty()) rows.push_back(r);
    if (o.json)
      rows_json.push_back(row_json(r));
    else
      print_table_row(r);
    std::fflush(stdout);
  });
  if (o.json) fmt::print("{}\n", json_text(rows_json, 2));
  // A missing gnuplot is a warning (plot_bench says so): the table, the main output, is
  // complete. gnuplot failing throws, exit status 2.
  if (!o.plot.empty()) {
    const auto measured = std::find_if(rows.begin(), rows.end(), [](const bench::Row& r) { return r.n > 0; });
    plot_bench(o.plot,
               fmt::format("amq bench: {} keys, {}", measured == rows.end() ? 0 : measured->n,
                           o.b.synthetic ? "random 64-bit" : o.b.data),
               rows);
  }
}

// The option definitions (a flat list), then the callback: --list, or check and run.
void add_bench_options(CLI::App* cmd, int& status) {
  auto o = std::make_shared<BenchOpts>();
  cmd->add_option("--data", o->b.data, "key file, one key a line")->default_val("/usr/share/dict/words");
  cmd->add_option("--synthetic", o->b.synthetic, "use N >= 1 random 64-bit keys instead of --data")
      ->transform(count_in(1));
  cmd->add_option("-p,--fpp", o->b.fpp, "target false-positive rate, in (0, 0.5]")
      ->transform(real_in(0, Bound::open, 0.5, Bound::closed))
      ->default_val(0.01);
  cmd->add_option("--repeats", o->b.repeats,
                  "builds: the median of this many runs, 1..1000; lookups: the least of at least 11 passes (or "
                  "--passes)")
      ->transform(count_in(1, 1000))
      ->default_val(3);
  cmd->add_option("--passes", o->b.passes,
                  "lookups: the least of at least this many timed passes of each kind, 1..1000, instead of "
                  "max(11, --repeats); a quick smoke run: --repeats 1 --passes 1 --absent 20000 --min-time 0")
      ->transform(count_in(1, 1000));
  cmd->add_option("--absent", o->b.absent,
                  "this many absent keys, 1..10^8 (default 10^6; with --synthetic N, N within [10^6, 2*10^6]): "
                  "the false-positive rate is measured on all of them, absent-key lookups on the first 2^18 (2^21 "
                  "in the rows sized past the LLC)")
      ->transform(count_in(1, 100'000'000));
  std::string families;
  for (const auto& f : bench::family_names()) families += (families.empty() ? "" : ", ") + f;
  cmd->add_option("--only", o->b.only,
                  "only the structure families whose name contains this: " + families);
  cmd->add_option("--min-time", o->b.min_lookup_seconds,
                  "lookups: keep timing rounds for at least this many seconds per comparison, in [0, 600] (bursts "
                  "of interference from other tenants last seconds)")
      ->transform(real_in(0, Bound::closed, 600, Bound::closed))
      ->default_val(3);
  cmd->add_flag("--json", o->json, "print a JSON array of rows");
  cmd->add_option("--plot", o->plot,
                  "also draw bits/key against lookup ns of the filter rows, with the bound log2(1/eps), into this "
                  "file with gnuplot: SVG, or PNG when it ends in .png (without gnuplot: a warning, the table still "
                  "prints)");
  cmd->add_flag("--list", o->list, "print the names of the structure families, one a line, and run nothing");
  cmd->callback([o, families, &status] {
    if (o->list) {
      for (const auto& f : bench::family_names()) fmt::print("{}\n", f);
      status = 0;
      return;
    }
    check_bench_args(*o, families);
    run_bench(*o);
    status = 0;
  });
}

void print_error(std::string_view what) { fmt::print(stderr, "amq: {}\n", escape_text(what)); }

}  // namespace
}  // namespace amq::cli

int main(int argc, char** argv) {
  CLI::App app{"amq-bench — measure every amq structure and its peers on the same keys (also: amq bench)",
               "amq-bench"};
  int status = 0;
  amq::cli::add_bench_options(&app, status);
  try {
    app.parse(argc, argv);
    amq::cli::flush_stdout();
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    amq::cli::print_error(e.what());
    return 2;
  } catch (const std::exception& e) {
    amq::cli::print_error(e.what());
    return 2;
  }
  return status;
}
