// Golomb-coded set rows: GolombCodedSet (default Rice coding, and general Golomb) at
// ε = 1/256, the space target of issue 4 (<= 9.7 bits/key with the index), beside a
// BloomFilter at the same rate so the lookup ratio (target: within 3x) is measured in the
// same run. "batch" is contains_many over batches of 1024 present keys.
//
// Lookups are timed by measure_contenders, as every other row.
#include <fmt/core.h>

#include "amq/bloom_filter.hpp"
#include "amq/golomb_coded_set.hpp"
#include "bench_table.hpp"
#include "bloom_row.hpp"

namespace amq::bench {

void bench_gcs(const Options& o, const Dataset& d, const Sink& sink) {
  constexpr double kEps = 1.0 / 256;
  const uint64_t n = d.keys.size();
  using Coding = GolombCodedSet::Coding;

  Row bloom{.structure = "BloomFilter eps=1/256", .fpp_target = kEps};
  const BloomFilter f = build_bloom_row(bloom, d, o.repeats, kEps);
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

  Contender contenders[3] = {set_contender(bloom, f), set_contender(rows[0], sets[0]),
                             set_contender(rows[1], sets[1])};
  measure_contenders(contenders, d, o);
  finish_row(bloom, d);
  sink(bloom);

  for (int j = 0; j < 2; ++j) {
    Row& row = rows[j];
    const GolombCodedSet& s = sets[j];
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

const RegisterFamily kFamily{"gcs", 70, bench_gcs};

}  // namespace amq::bench
