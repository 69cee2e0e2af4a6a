// ExpandableFilter rows (issue 31): the filter grown one bucket at a time from n / 1000 keys to
// n, beside a CuckooFilter sized for n up front and a ScalableCuckooFilter grown from
// the same start, at 0.2% and at the bench's --fpp target (1% by default), in one run.
// The expandable row's note gives the longest single insert (a copy of the table as its
// vector grows, or a widening) and the ratios to the static filter; its build time
// includes all growth.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>

#include "amq/cuckoo_filter.hpp"
#include "amq/expandable_filter.hpp"
#include "amq/scalable_cuckoo_filter.hpp"
#include "bench_table.hpp"

namespace amq::bench {
namespace {

// The longest single insert while growing from `start` to the dataset's keys.
double worst_insert_ns(const Dataset& d, uint64_t start, double fpp) {
  ExpandableFilter f(start, fpp);
  double worst = 0;
  for (Bytes k : d.key_views) {
    const auto a = std::chrono::steady_clock::now();
    f.insert(k);
    const auto b = std::chrono::steady_clock::now();
    worst = std::max(worst, std::chrono::duration<double, std::nano>(b - a).count());
  }
  return worst;
}

void rows_at(const Options& o, const Dataset& d, const Sink& sink, double fpp) {
  const uint64_t n = d.keys.size();
  const uint64_t start = std::max<uint64_t>(1, n / 1000);

  Row stat{.structure = fmt::format("CuckooFilter (sized for n, {:g})", fpp), .fpp_target = fpp};
  CuckooFilter c = CuckooFilter::create(n, fpp);
  stat.build_ns_per_key = median_ns(o.repeats, [&] {
                            c = CuckooFilter::create(n, fpp);
                            for (Bytes k : d.key_views) c.insert(k);
                          }) /
                          static_cast<double>(n);
  stat.bytes = c.size_in_bytes();
  stat.params = fmt::format("f={} b={} load {:.3f}", c.fingerprint_bits(), c.bucket_size(), c.load_factor());

  Row grow{.structure = fmt::format("ExpandableFilter (n/1000 to n, {:g})", fpp), .fpp_target = fpp};
  ExpandableFilter e(start, fpp);
  grow.build_ns_per_key = median_ns(o.repeats, [&] {
                            e = ExpandableFilter(start, fpp);
                            for (Bytes k : d.key_views) e.insert(k);
                          }) /
                          static_cast<double>(n);
  grow.bytes = e.size_in_bytes();
  grow.params = fmt::format("W={} m={} load {:.3f} bound {:.2g}", e.slot_bits(), e.num_buckets(), e.load_factor(),
                            e.fpp_bound());

  Row scal{.structure = fmt::format("ScalableCuckooFilter (n/1000 to n, {:g})", fpp), .fpp_target = fpp};
  const ScalableCuckooParams p{.initial_capacity = start, .fpp = fpp};
  ScalableCuckooFilter s(p);
  scal.build_ns_per_key = median_ns(o.repeats, [&] {
                            s = ScalableCuckooFilter(p);
                            for (Bytes k : d.key_views) s.insert(k);
                          }) /
                          static_cast<double>(n);
  scal.bytes = s.size_in_bytes();
  scal.params = fmt::format("levels={} load {:.3f}", s.num_levels(), s.load_factor());

  Contender all[3] = {set_contender(stat, c), set_contender(grow, e), set_contender(scal, s)};
  measure_contenders(all, d, o);
  finish_row(stat, d);
  finish_row(grow, d);
  finish_row(scal, d);
  const double worst = worst_insert_ns(d, start, fpp);
  grow.note = fmt::format(
      "longest insert {:.1f} ms; vs the static CuckooFilter: {:+.1f} bits/key, lookups {:.2f}x / {:.2f}x "
      "(present / absent), inserts {:.2f}x; lookups {:.1f}x / {:.1f}x faster than ScalableCuckooFilter",
      worst / 1e6, grow.bits_per_key - stat.bits_per_key, grow.lookup_pos_ns / stat.lookup_pos_ns,
      grow.lookup_neg_ns / stat.lookup_neg_ns, grow.build_ns_per_key / stat.build_ns_per_key,
      scal.lookup_pos_ns / grow.lookup_pos_ns, scal.lookup_neg_ns / grow.lookup_neg_ns);
  sink(stat);
  sink(grow);
  sink(scal);
}

}  // namespace

void bench_expandable(const Options& o, const Dataset& d, const Sink& sink) {
  rows_at(o, d, sink, 0.002);
  if (o.fpp != 0.002) rows_at(o, d, sink, o.fpp);
}

const RegisterFamily kFamily{"expandable", 40, bench_expandable};

}  // namespace amq::bench
