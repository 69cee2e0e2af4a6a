// Golomb-coded set rows: GolombCodedSet (default Rice coding, and general Golomb) at
// ε = 1/256, the space target of issue 4 (<= 9.7 bits/key with the index), beside a
// BloomFilter at the same rate so the lookup ratio (target: within 3x) is measured in the
// same run. "batch" is contains_many over batches of 1024 present keys.
//
// The three structures are built first and then timed in turns — in each round, each
// structure gets an untimed warm-up pass and a timed one; the least of the rounds is
// reported (see best_cpu_ns) — so that a load change on a shared machine hits all three
// alike instead of skewing the ratio. Lookup passes are timed in thread CPU time.
#include <fmt/core.h>

#include <memory>

#include "amq/bloom_filter.hpp"
#include "amq/golomb_coded_set.hpp"
#include "bench_table.hpp"

namespace amq::bench {
namespace {

double least(const std::vector<double>& t) { return t.empty() ? 0 : *std::min_element(t.begin(), t.end()); }

// ns per key of one pass of `contains` over `keys`.
template <class Contains>
double pass(std::span<const Bytes> keys, const Contains& contains) {
  const double a = cpu_now_ns();
  size_t s = 0;
  for (Bytes k : keys) s += contains(k);
  g_sink = s;
  return (cpu_now_ns() - a) / static_cast<double>(std::max<size_t>(keys.size(), 1));
}

// ns per key of contains_many over batches of 1024 keys.
template <class Many>
double batch_pass(std::span<const Bytes> keys, const Many& many) {
  std::unique_ptr<bool[]> out(new bool[1024]);
  const double a = cpu_now_ns();
  size_t s = 0;
  for (size_t i = 0; i < keys.size(); i += 1024) {
    const size_t m = std::min<size_t>(1024, keys.size() - i);
    s += many(keys.subspan(i, m), std::span<bool>(out.get(), m));
  }
  g_sink = s;
  return (cpu_now_ns() - a) / static_cast<double>(std::max<size_t>(keys.size(), 1));
}

template <class Contains>
double false_positive_rate(const Dataset& d, const Contains& contains) {
  size_t fp = 0;
  for (Bytes k : d.absent_views) fp += contains(k) ? 1 : 0;
  return d.absent_views.empty() ? 0 : static_cast<double>(fp) / static_cast<double>(d.absent_views.size());
}

}  // namespace

void bench_gcs(const Options& o, const Dataset& d, const Sink& sink) {
  constexpr double kEps = 1.0 / 256;
  const uint64_t n = d.keys.size();
  using Coding = GolombCodedSet::Coding;

  Row bloom{.structure = "BloomFilter eps=1/256", .fpp_target = kEps};
  BloomFilter f = BloomFilter::create(n, kEps);
  bloom.build_ns_per_key = median_ns(o.repeats, [&] {
                             f = BloomFilter::create(n, kEps);
                             for (Bytes k : d.key_views) f.insert(k);
                           }) /
                           static_cast<double>(n);
  bloom.params = fmt::format("k={} bits={}", f.num_hashes(), f.bit_size());
  bloom.bytes = f.size_in_bytes();
  bloom.note = "reference for the GCS lookup ratio";

  Row rows[2] = {{.structure = "GolombCodedSet eps=1/256", .fpp_target = kEps},
                 {.structure = "GolombCodedSet Golomb 1/256", .fpp_target = kEps}};
  GolombCodedSet sets[2];
  for (int j = 0; j < 2; ++j) {
    const Coding coding = j == 0 ? Coding::rice : Coding::golomb;
    rows[j].build_ns_per_key = median_ns(o.repeats, [&] {
                                 sets[j] = GolombCodedSet::build(d.key_views, {.fpp = kEps, .coding = coding});
                               }) /
                               static_cast<double>(n);
    rows[j].bytes = sets[j].size_in_bytes();
  }

  auto bloom_contains = [&](Bytes k) { return f.contains(k); };
  auto bloom_many = [&](std::span<const Bytes> ks, std::span<bool> out) { return f.contains_many(ks, out); };
  auto set_contains = [&](int j) { return [&s = sets[j]](Bytes k) { return s.contains(k); }; };
  auto set_many = [&](int j) {
    return [&s = sets[j]](std::span<const Bytes> ks, std::span<bool> out) { return s.contains_many(ks, out); };
  };
  bloom.fpp_measured = false_positive_rate(d, bloom_contains);
  for (int j = 0; j < 2; ++j) rows[j].fpp_measured = false_positive_rate(d, set_contains(j));

  // [structure][pos, neg, batch] samples, one per round.
  std::vector<double> t[3][3];
  const std::span<const Bytes> present = d.probe_keys(), absent = d.probe_absent();
  // The structure's warm-up pass, then the timed one.
  auto timed = [](auto run) {
    run();
    return run();
  };
  for (int r = 0; r < std::max(kMinPasses, o.repeats); ++r) {
    t[0][0].push_back(timed([&] { return pass(present, bloom_contains); }));
    t[0][1].push_back(timed([&] { return pass(absent, bloom_contains); }));
    t[0][2].push_back(timed([&] { return batch_pass(present, bloom_many); }));
    for (int j = 0; j < 2; ++j) {
      t[1 + j][0].push_back(timed([&] { return pass(present, set_contains(j)); }));
      t[1 + j][1].push_back(timed([&] { return pass(absent, set_contains(j)); }));
      t[1 + j][2].push_back(timed([&] { return batch_pass(present, set_many(j)); }));
    }
  }
  bloom.lookup_pos_ns = least(t[0][0]);
  bloom.lookup_neg_ns = least(t[0][1]);
  bloom.batch_lookup_ns = least(t[0][2]);
  finish_row(bloom, d);
  sink(bloom);

  for (int j = 0; j < 2; ++j) {
    Row& row = rows[j];
    const GolombCodedSet& s = sets[j];
    row.lookup_pos_ns = least(t[1 + j][0]);
    row.lookup_neg_ns = least(t[1 + j][1]);
    row.batch_lookup_ns = least(t[1 + j][2]);
    finish_row(row, d);
    const double payload = static_cast<double>(s.stream_bits()) / static_cast<double>(n);
    row.params = fmt::format("{} divisor={} M={} payload {:.3f} + index {:.3f} bits/key",
                             j == 0 ? "Rice" : "Golomb", s.divisor(), s.range_per_key(), payload,
                             row.bits_per_key - payload);
    row.note = fmt::format("lookup vs BloomFilter: pos {:.2f}x, neg {:.2f}x; batch vs single {:.2f}x",
                           row.lookup_pos_ns / bloom.lookup_pos_ns, row.lookup_neg_ns / bloom.lookup_neg_ns,
                           row.batch_lookup_ns / row.lookup_pos_ns);
    sink(row);
  }
}

}  // namespace amq::bench
