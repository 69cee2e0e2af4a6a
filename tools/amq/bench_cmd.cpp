// amq bench: the comparison table of bench/table, as text or JSON.
#include <fmt/core.h>

#include <memory>

#include "bench_table.hpp"
#include "cli.hpp"

namespace amq::cli {

void add_bench(CLI::App& app, int& status) {
  struct Opts {
    bench::Options b;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("bench", "measure every structure and its peers on the same keys");
  cmd->add_option("--data", o->b.data, "key file, one key a line")->default_val("/usr/share/dict/words");
  cmd->add_option("--synthetic", o->b.synthetic, "use N random 64-bit keys instead of --data");
  cmd->add_option("-p,--fpp", o->b.fpp, "target false-positive rate")->default_val(0.01);
  cmd->add_option("--repeats", o->b.repeats, "builds: the median of this many runs; lookups: the least of at least 11 passes")->default_val(3);
  cmd->add_option("--only", o->b.only, "only the structure families whose name contains this");
  cmd->add_option("--min-time", o->b.min_lookup_seconds,
                  "lookups: keep timing rounds for at least this many seconds per comparison (bursts of "
                  "interference from other tenants last seconds)")
      ->default_val(3)
      ->check(CLI::Range(0.0, 600.0));
  cmd->add_flag("--json", o->json, "print a JSON array of rows");
  cmd->callback([o, &status] {
    const bool json = o->json;
    bool first = true;
    if (json) {
      fmt::print("[");
    } else {
      fmt::print("amq bench — {}\n", bench::machine_description());
      fmt::print("{}\n", bench::memory_description());
      fmt::print("data: {}\n",
                 o->b.synthetic ? fmt::format("{} random 64-bit keys, passed as uint64_t (peers without an integer "
                                                "API get the same 8 bytes)",
                                                o->b.synthetic)
                                  : o->b.data);
      fmt::print(
          "ns per key; lookups: up to {} keys from each of the present and absent lists, best of {} passes after a "
          "warm-up, in thread CPU time; builds: median of {} in wall time\n\n",
          bench::kLookupSample, bench::lookup_passes(o->b.repeats), std::max(1, o->b.repeats));
      fmt::print("{:<28} {:>10} {:>12} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}  {}\n", "structure", "n", "bytes",
                 "bits/key", "fpp tgt", "fpp meas", "build ns", "pos ns", "neg ns", "batch ns", "params / note");
    }
    flush_stdout();
    bench::run_all(o->b, [&](const bench::Row& r) {
      if (json) {
        fmt::print(
            "{}\n  {{\"structure\":\"{}\",\"params\":\"{}\",\"n\":{},\"bytes\":{},\"bits_per_key\":{:.3f},"
            "\"fpp_target\":{:.6g},\"fpp_measured\":{:.6g},\"build_ns_per_key\":{:.2f},\"lookup_pos_ns\":{:.2f},"
            "\"lookup_neg_ns\":{:.2f},\"batch_lookup_ns\":{:.2f},\"note\":\"{}\"}}",
            first ? "" : ",", r.structure, r.params, r.n, r.bytes, r.bits_per_key, r.fpp_target, r.fpp_measured,
            r.build_ns_per_key, r.lookup_pos_ns, r.lookup_neg_ns, r.batch_lookup_ns, r.note);
      } else if (r.n == 0) {
        fmt::print("{:<28} {}\n", r.structure, r.note);
      } else {
        fmt::print("{:<28} {:>10} {:>12} {:>8.2f} {:>9.4g} {:>9.4g} {:>9.1f} {:>9.1f} {:>9.1f} {:>9}  {}{}{}\n",
                   r.structure, r.n, r.bytes, r.bits_per_key, r.fpp_target, r.fpp_measured, r.build_ns_per_key,
                   r.lookup_pos_ns, r.lookup_neg_ns,
                   r.batch_lookup_ns > 0 ? fmt::format("{:.1f}", r.batch_lookup_ns) : std::string("-"), r.params,
                   r.note.empty() ? "" : "; ", r.note);
      }
      first = false;
      std::fflush(stdout);
    });
    if (json) fmt::print("\n]\n");
    status = 0;
  });
}

}  // namespace amq::cli
