// Bloom filter rows: amq's Guava-compatible BloomFilter, libbloom (peer), and the
// same BloomFilter sized past the last-level cache to show what batching buys.
#include <fmt/core.h>

#include "amq/bloom_filter.hpp"
#include "bench_table.hpp"

#if AMQ_HAVE_LIBBLOOM
extern "C" {
#include <bloom.h>
}
#endif

namespace amq::bench {

void bench_bloom(const Options& o, const Dataset& d, const Sink& sink) {
  const uint64_t n = d.keys.size();
  {
    Row row{.structure = "BloomFilter (Guava)", .fpp_target = o.fpp};
    BloomFilter f = BloomFilter::create(n, o.fpp);
    row.build_ns_per_key = median_ns(o.repeats, [&] {
                             f = BloomFilter::create(n, o.fpp);
                             for (Bytes k : d.key_views) f.insert(k);
                           }) /
                           static_cast<double>(n);
    row.params = fmt::format("k={} bits={}", f.num_hashes(), f.bit_size());
    row.bytes = f.size_in_bytes();
    measure_set_lookups(row, d, o.repeats, f);
    finish_row(row, d);
    sink(row);
  }
#if AMQ_HAVE_LIBBLOOM
  {
    Row row{.structure = "libbloom (peer)", .fpp_target = o.fpp};
    struct bloom b {};
    bool ok = true;
    row.build_ns_per_key = median_ns(o.repeats, [&] {
                             if (b.ready) bloom_free(&b);
                             ok = bloom_init(&b, static_cast<int>(n), o.fpp) == 0;
                             if (!ok) return;
                             for (Bytes k : d.key_views) bloom_add(&b, k.data(), static_cast<int>(k.size()));
                           }) /
                           static_cast<double>(n);
    if (ok) {
      row.params = fmt::format("k={} bits={}", b.hashes, static_cast<unsigned long long>(b.bits));
      row.bytes = b.bytes;
      measure_lookups(
          row, d, o.repeats,
          [&](Bytes k) { return bloom_check(&b, k.data(), static_cast<int>(k.size())) == 1; },
          [](std::span<const Bytes>, std::span<bool>) { return size_t{0}; }, false);
      finish_row(row, d);
      bloom_free(&b);
      sink(row);
    }
  }
#else
  sink(Row{.structure = "libbloom (peer)", .note = "skipped: libbloom-dev not installed"});
#endif
  {
    // The same filter type, sized so its bits are 4x the last-level cache: every
    // probe misses the cache, which is where contains_many's prefetching pays.
    const size_t llc = last_level_cache_bytes();
    const uint64_t capacity = static_cast<uint64_t>(4.0 * static_cast<double>(llc) * 8 / 9.6);
    Row row{.structure = "BloomFilter > LLC", .fpp_target = o.fpp};
    BloomFilter f = BloomFilter::create(capacity, o.fpp);
    row.build_ns_per_key = median_ns(1, [&] {
                             for (Bytes k : d.key_views) f.insert(k);
                           }) /
                           static_cast<double>(n);
    row.params = fmt::format("k={} bits={} (capacity {})", f.num_hashes(), f.bit_size(), capacity);
    row.bytes = f.size_in_bytes();
    row.note = fmt::format("filter {} MiB = 4x LLC, holding the {} keys", row.bytes >> 20, n);
    measure_set_lookups(row, d, o.repeats, f);
    finish_row(row, d);
    sink(row);
  }
}

}  // namespace amq::bench
