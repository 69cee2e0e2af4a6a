// Cuckoo filter rows: amq's CuckooFilter (f = 12, b = 4), the project's BloomFilter
// at the same target false-positive rate on the same keys (the ratio the issue asks
// for), ScalableCuckooFilter, and seed 001's Go filter (seiflotfy/cuckoofilter, from
// Debian's golang-github-seiflotfy-cuckoofilter-dev) built with Debian's golang-go when
// amq-bench is built, and run on the same keys; that row is skipped with a note without Go.
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "amq/bloom_filter.hpp"
#include "amq/cuckoo_filter.hpp"
#include "amq/scalable_cuckoo_filter.hpp"
#include "bench_table.hpp"
#include "bloom_row.hpp"

namespace amq::bench {
namespace {

namespace fs = std::filesystem;

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The Go peer, built by CMake when it found Go (bench/table/CMakeLists.txt): beside
// amq-bench in the build tree, in ../libexec/amq when installed. Returns its path, or
// an empty string and the reason for the row's note.
std::string find_go_peer(std::string& why) {
#ifndef AMQ_GO_FOUND
  why = "skipped: Go was not found when amq-bench was built (Debian: golang-go golang-github-seiflotfy-cuckoofilter-dev)";
  return {};
#else
  std::error_code ec;
  const fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  for (const fs::path& p : {dir / "amq-bench-cuckoo-peer", dir / AMQ_GO_PEER_FROM_BIN / "amq-bench-cuckoo-peer"})
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  why = "skipped: the Go peer did not build with amq-bench (needs golang-github-seiflotfy-cuckoofilter-dev; see "
        "bench/table/go/build.log in the build directory)";
  return {};
#endif
}

template <class Keys>
void write_keys(const fs::path& path, const Keys& keys) {
  std::ofstream out(path, std::ios::binary);
  for (const auto& k : keys) {
    const auto n = static_cast<uint32_t>(k.size());
    out.write(reinterpret_cast<const char*>(&n), 4);
    out.write(reinterpret_cast<const char*>(k.data()), static_cast<std::streamsize>(k.size()));
  }
}

// Runs the Go peer once; its key=value output, or an empty map.
std::map<std::string, double> run_go_peer(const std::string& cmd) {
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    if (::pclose(p) != 0) out.clear();
  }
  std::map<std::string, double> v;
  std::istringstream in(out);
  for (std::string kv; in >> kv;) {
    const auto eq = kv.find('=');
    if (eq != std::string::npos) v[kv.substr(0, eq)] = std::atof(kv.c_str() + eq + 1);
  }
  if (!v.count("pos_ns") || !v.count("neg_ns") || !v.count("absent") || v["absent"] <= 0) v.clear();
  return v;
}

// The Go peer's row. The peer is a separate process, so it cannot share amq's rounds
// of blocks; instead it runs kGoRounds times, each run followed at once by a
// re-measurement of amq's filter (`remeasure`), and each side keeps its least times.
// A burst of interference then rarely favours one side.
void go_peer_row(const Options& o, const Dataset& d, const Row& amq_row, const std::function<Row()>& remeasure,
                 const Sink& sink) {
  constexpr int kGoRounds = 3;
  Row row{.structure = "seiflotfy/cuckoofilter (Go)", .fpp_target = 8.0 / 255};
  std::string why;
  const std::string bin = find_go_peer(why);
  if (bin.empty()) {
    sink(Row{.structure = row.structure, .note = why});
    return;
  }
  char tmpl[] = "/tmp/amq-bench-go-XXXXXX";
  if (!::mkdtemp(tmpl)) {
    sink(Row{.structure = row.structure, .note = "skipped: cannot make a temporary directory"});
    return;
  }
  const fs::path tmp = tmpl;
  write_keys(tmp / "keys", d.keys);
  write_keys(tmp / "absent", d.absent);
  write_keys(tmp / "probe", d.probe_keys());  // the present keys amq's rows look up
  auto command = [&](int build_repeats) {
    return shell_quote(bin) + " " + shell_quote((tmp / "keys").string()) + " " +
           shell_quote((tmp / "absent").string()) + " " + std::to_string(build_repeats) + " " +
           std::to_string(kLookupSample) + " " + shell_quote((tmp / "probe").string());
  };
  std::map<std::string, double> v = run_go_peer(command(o.repeats));
  Row amq = amq_row;
  for (int r = 1; r < kGoRounds && !v.empty(); ++r) {
    const Row again = remeasure();
    amq.lookup_pos_ns = std::min(amq.lookup_pos_ns, again.lookup_pos_ns);
    amq.lookup_neg_ns = std::min(amq.lookup_neg_ns, again.lookup_neg_ns);
    amq.batch_lookup_ns = std::min(amq.batch_lookup_ns, again.batch_lookup_ns);
    const std::map<std::string, double> w = run_go_peer(command(1));
    if (w.empty()) {
      v.clear();
      break;
    }
    v["pos_ns"] = std::min(v["pos_ns"], w.at("pos_ns"));
    v["neg_ns"] = std::min(v["neg_ns"], w.at("neg_ns"));
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);
  if (v.empty()) {
    sink(Row{.structure = row.structure, .note = "skipped: the Go peer did not answer"});
    return;
  }
  row.bytes = static_cast<uint64_t>(v["bytes"]);
  row.build_ns_per_key = v["build_ns"];
  row.lookup_pos_ns = v["pos_ns"];
  row.lookup_neg_ns = v["neg_ns"];
  row.fpp_measured = v["fp"] / v["absent"];
  const auto slots = static_cast<uint64_t>(v["buckets"]) * 4;
  row.params = fmt::format("f=8 b=4 m={} (power of two), load {:.3f}", static_cast<uint64_t>(v["buckets"]),
                           slots ? v["inserted"] / static_cast<double>(slots) : 0.0);
  if (v["inserted"] < v["n"])
    row.note = fmt::format("{} of {} inserts failed; ", static_cast<uint64_t>(v["n"] - v["inserted"]),
                           static_cast<uint64_t>(v["n"]));
  row.note += fmt::format(
      "least of {} runs, each beside a new run of amq's (then {:.1f} / {:.1f} / {:.1f} ns): amq CuckooFilter "
      "lookups {:.2f}x (present) / {:.2f}x (absent) faster, batched {:.2f}x (present)",
      kGoRounds, amq.lookup_pos_ns, amq.lookup_neg_ns, amq.batch_lookup_ns, row.lookup_pos_ns / amq.lookup_pos_ns,
      row.lookup_neg_ns / amq.lookup_neg_ns, amq.batch_lookup_ns > 0 ? row.lookup_pos_ns / amq.batch_lookup_ns : 0.0);
  finish_row(row, d);
  sink(row);
}

}  // namespace

void bench_cuckoo(const Options& o, const Dataset& d, const Sink& sink) {
  const uint64_t n = d.keys.size();
  constexpr uint32_t kF = 12, kB = 4;
  // amq CuckooFilter, f = 12, b = 4, sized for n keys at 95% load.
  Row cuckoo{.structure = "CuckooFilter f=12 b=4"};
  CuckooFilter f(n, kF, kB);
  uint64_t failed = 0;
  cuckoo.build_ns_per_key = median_ns(o.repeats, [&] {
                              f = CuckooFilter(n, kF, kB);
                              failed = 0;
                              for (Bytes k : d.key_views) failed += f.insert(k) != CuckooStatus::inserted;
                            }) /
                            static_cast<double>(n);
  cuckoo.fpp_target = f.fpp_bound();
  cuckoo.bytes = f.size_in_bytes();
  cuckoo.params = fmt::format("m={} load {:.4f}", f.num_buckets(), f.load_factor());
  if (failed) cuckoo.note = fmt::format("{} inserts failed", failed);

  // The project's BloomFilter at the same target rate, same keys, same run.
  Row bloom{.structure = "BloomFilter (same fpp)", .fpp_target = cuckoo.fpp_target};
  const BloomFilter bf = build_bloom_row(bloom, d, o.repeats, cuckoo.fpp_target);
  Contender both[2] = {set_contender(cuckoo, f), set_contender(bloom, bf)};
  measure_contenders(both, d, o);
  finish_row(cuckoo, d);
  finish_row(bloom, d);
  const double ratio_pos = bloom.lookup_pos_ns / cuckoo.lookup_pos_ns;
  const double ratio_neg = bloom.lookup_neg_ns / cuckoo.lookup_neg_ns;
  const std::string vs_bloom =
      fmt::format("lookups {:.2f}x (present) / {:.2f}x (absent) / {:.2f}x (batched) faster than BloomFilter",
                  ratio_pos, ratio_neg, bloom.batch_lookup_ns / cuckoo.batch_lookup_ns);
  cuckoo.note += (cuckoo.note.empty() ? "" : "; ") + vs_bloom;
  sink(cuckoo);
  sink(bloom);

  // ScalableCuckooFilter starting at 1/64 of the keys (7 levels at the end).
  {
    Row row{.structure = "ScalableCuckooFilter", .fpp_target = cuckoo.fpp_target};
    const ScalableCuckooParams p{.initial_capacity = std::max<uint64_t>(1, n / 64), .fpp = cuckoo.fpp_target};
    ScalableCuckooFilter s(p);
    row.build_ns_per_key = median_ns(o.repeats, [&] {
                             s = ScalableCuckooFilter(p);
                             for (Bytes k : d.key_views) s.insert(k);
                           }) /
                           static_cast<double>(n);
    row.bytes = s.size_in_bytes();
    row.params = fmt::format("n0=n/64 levels={} load {:.3f}", s.num_levels(), s.load_factor());
    measure_set_lookups(row, d, o, s);
    finish_row(row, d);
    sink(row);
  }

  go_peer_row(o, d, cuckoo,
              [&] {
                Row again = cuckoo;
                measure_set_lookups(again, d, o, f);
                return again;
              },
              sink);
}

const RegisterFamily kFamily{"cuckoo", 30, bench_cuckoo};

}  // namespace amq::bench
