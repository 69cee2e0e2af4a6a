// Golomb-coded set rows: GolombCodedSet (default Rice coding, and general Golomb) at
// ε = 1/256, the space target of issue 4 (<= 9.7 bits/key with the index), beside a
// BloomFilter at the same rate so the lookup ratio (target: within 3x) is measured in the
// same run. "batch" is contains_many over batches of 1024 present keys.
#include <fmt/core.h>

#include "amq/bloom_filter.hpp"
#include "amq/golomb_coded_set.hpp"
#include "bench_table.hpp"

namespace amq::bench {

void bench_gcs(const Options& o, const Dataset& d, const Sink& sink) {
  constexpr double kEps = 1.0 / 256;
  const uint64_t n = d.keys.size();
  Row bloom{.structure = "BloomFilter eps=1/256", .fpp_target = kEps};
  {
    BloomFilter f = BloomFilter::create(n, kEps);
    bloom.build_ns_per_key = median_ns(o.repeats, [&] {
                               f = BloomFilter::create(n, kEps);
                               for (Bytes k : d.key_views) f.insert(k);
                             }) /
                             static_cast<double>(n);
    bloom.params = fmt::format("k={} bits={}", f.num_hashes(), f.bit_size());
    bloom.bytes = f.size_in_bytes();
    measure_lookups(
        bloom, d, o.repeats, [&](Bytes k) { return f.contains(k); },
        [&](std::span<const Bytes> ks, std::span<bool> out) { return f.contains_many(ks, out); }, true);
    bloom.note = "reference for the GCS lookup ratio";
    finish_row(bloom, d);
    sink(bloom);
  }
  for (auto coding : {GolombCodedSet::Coding::rice, GolombCodedSet::Coding::golomb}) {
    const bool golomb = coding == GolombCodedSet::Coding::golomb;
    Row row{.structure = golomb ? "GolombCodedSet Golomb 1/256" : "GolombCodedSet eps=1/256", .fpp_target = kEps};
    GolombCodedSet s;
    row.build_ns_per_key = median_ns(o.repeats, [&] {
                             s = GolombCodedSet::build(d.key_views, {.fpp = kEps, .coding = coding});
                           }) /
                           static_cast<double>(n);
    row.bytes = s.size_in_bytes();
    measure_lookups(
        row, d, o.repeats, [&](Bytes k) { return s.contains(k); },
        [&](std::span<const Bytes> ks, std::span<bool> out) { return s.contains_many(ks, out); }, true);
    finish_row(row, d);
    row.params = fmt::format("{} divisor={} M={} payload {:.3f} + index {:.3f} bits/key", golomb ? "Golomb" : "Rice",
                             s.divisor(),
                             s.range_per_key(), static_cast<double>(s.stream_bits()) / static_cast<double>(n),
                             row.bits_per_key - static_cast<double>(s.stream_bits()) / static_cast<double>(n));
    row.note = fmt::format("lookup vs BloomFilter: pos {:.2f}x, neg {:.2f}x; batch vs single {:.2f}x",
                           row.lookup_pos_ns / bloom.lookup_pos_ns, row.lookup_neg_ns / bloom.lookup_neg_ns,
                           row.batch_lookup_ns / row.lookup_pos_ns);
    sink(row);
  }
}

}  // namespace amq::bench
