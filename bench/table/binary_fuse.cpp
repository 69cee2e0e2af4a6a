// Binary fuse filter rows: BinaryFuseFilter 8-bit 3-wise and 4-wise and 16-bit 3-wise,
// beside a BlockedBloomFilter and a GolombCodedSet at ε = 1/256 measured in the same
// rounds, so the ratios of issue 30 (lookups no slower than the blocked filter, build
// within 2x; smaller than the Golomb-coded set) come from one run.
// The targets: 8-bit 3-wise <= 9.1 bits/key at <= 0.40%, 4-wise <= 8.7 bits/key, 16-bit
// <= 18.2 bits/key at <= 0.002%.
#include <cmath>

#include <fmt/core.h>

#include "amq/binary_fuse_filter.hpp"
#include "amq/blocked_bloom_filter.hpp"
#include "amq/golomb_coded_set.hpp"
#include "bench_table.hpp"

namespace amq::bench {

void bench_binary_fuse(const Options& o, const Dataset& d, const Sink& sink) {
  constexpr double kEps = 1.0 / 256;
  const uint64_t n = d.keys.size();

  Row bloom{.structure = "BlockedBloomFilter eps=1/256", .fpp_target = kEps};
  BlockedBloomFilter f = BlockedBloomFilter::create(n, kEps);
  bloom.build_ns_per_key = median_ns(o.repeats, [&] {
                             f.clear();
                             for (Bytes k : d.key_views) f.insert(k);
                           }) /
                           static_cast<double>(n);
  bloom.bytes = f.size_in_bytes();
  bloom.params = fmt::format("blocks={}", f.num_blocks());
  bloom.note = "reference for the binary fuse ratios";

  Row gcs{.structure = "GolombCodedSet eps=1/256", .fpp_target = kEps};
  GolombCodedSet g;
  gcs.build_ns_per_key =
      median_ns(o.repeats, [&] { g = GolombCodedSet::build(d.key_views, {.fpp = kEps}); }) / static_cast<double>(n);
  gcs.bytes = g.size_in_bytes();
  gcs.params = "Rice";
  gcs.note = "reference: amq's other static filter";

  struct Variant {
    const char* name;
    unsigned arity, bits;
  };
  constexpr Variant kVariants[3] = {
      {"BinaryFuseFilter 8-bit 3-wise", 3, 8}, {"BinaryFuseFilter 8-bit 4-wise", 4, 8}, {"BinaryFuseFilter 16-bit", 3, 16}};
  Row rows[3];
  BinaryFuseFilter sets[3];
  for (int j = 0; j < 3; ++j) {
    const Variant& v = kVariants[j];
    rows[j] = Row{.structure = v.name, .fpp_target = std::ldexp(1.0, -static_cast<int>(v.bits))};
    const BinaryFuseOptions opt{.arity = v.arity, .fingerprint_bits = v.bits, .seed = 0};
    rows[j].build_ns_per_key =
        median_ns(o.repeats, [&] { sets[j] = BinaryFuseFilter::build(d.key_views, opt); }) / static_cast<double>(n);
    rows[j].bytes = sets[j].size_in_bytes();
    rows[j].params = fmt::format("arity={} w={} segment={} slots={}", v.arity, v.bits, sets[j].segment_length(),
                                 sets[j].slot_count());
  }

  Contender contenders[5] = {set_contender(bloom, f), set_contender(gcs, g), set_contender(rows[0], sets[0]),
                             set_contender(rows[1], sets[1]), set_contender(rows[2], sets[2])};
  measure_contenders(contenders, d, o);
  finish_row(bloom, d);
  sink(bloom);
  finish_row(gcs, d);
  sink(gcs);
  for (Row& row : rows) {
    finish_row(row, d);
    row.note = fmt::format("vs BlockedBloomFilter: lookup pos {:.2f}x, neg {:.2f}x, build {:.2f}x; batch vs single {:.2f}x",
                           row.lookup_pos_ns / bloom.lookup_pos_ns, row.lookup_neg_ns / bloom.lookup_neg_ns,
                           row.build_ns_per_key / bloom.build_ns_per_key, row.batch_lookup_ns / row.lookup_pos_ns);
    sink(row);
  }
}

const RegisterFamily kFamily{"binary-fuse", 90, bench_binary_fuse};

}  // namespace amq::bench
