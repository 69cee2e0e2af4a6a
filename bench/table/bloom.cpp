// Bloom filter rows: amq's Guava-compatible BloomFilter, libbloom (peer), and the
// same BloomFilter sized past the last-level cache to show what batching buys.
#include <fmt/core.h>

#include <vector>

#include "amq/bloom_filter.hpp"
#include "bench_table.hpp"
#include "bloom_row.hpp"

#if AMQ_HAVE_LIBBLOOM
extern "C" {
#include <bloom.h>
}
#endif

namespace amq::bench {

void bench_bloom(const Options& o, const Dataset& d, const Sink& sink) {
  const uint64_t n = d.keys.size();
  // amq's BloomFilter and libbloom, on the same keys; the row states the ratio.
  Row row{.structure = "BloomFilter (Guava)", .fpp_target = o.fpp};
  const BloomFilter f = build_bloom_row(row, d, o.repeats, o.fpp);
  std::vector<Contender> contenders{set_contender(row, f)};
#if AMQ_HAVE_LIBBLOOM
  Row peer{.structure = "libbloom (peer)", .fpp_target = o.fpp};
  struct bloom b {};
  bool ok = true;
  peer.build_ns_per_key = median_ns(o.repeats, [&] {
                            if (b.ready) bloom_free(&b);
                            ok = bloom_init(&b, static_cast<int>(n), o.fpp) == 0;
                            if (!ok) return;
                            for (Bytes k : d.key_views) bloom_add(&b, k.data(), static_cast<int>(k.size()));
                          }) /
                          static_cast<double>(n);
  const auto libbloom_contains = [&b](Bytes k) { return bloom_check(&b, k.data(), static_cast<int>(k.size())) == 1; };
  if (ok) {
    peer.params = fmt::format("k={} bits={}", b.hashes, static_cast<unsigned long long>(b.bits));
    peer.bytes = b.bytes;
    contenders.push_back(contender(peer, libbloom_contains));
  } else {
    peer.note = "skipped: bloom_init failed";
  }
#else
  Row peer{.structure = "libbloom (peer)", .note = "skipped: libbloom-dev not installed"};
  const bool ok = false;
#endif
  measure_contenders(contenders, d, o);
  finish_row(row, d);
  if (ok) {
    finish_row(peer, d);
    row.note = fmt::format("lookups vs libbloom: {:.2f}x (present) / {:.2f}x (absent) faster",
                           peer.lookup_pos_ns / row.lookup_pos_ns, peer.lookup_neg_ns / row.lookup_neg_ns);
  }
  sink(row);
  sink(peer);
#if AMQ_HAVE_LIBBLOOM
  if (b.ready) bloom_free(&b);
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
    measure_set_lookups(row, d, o, f, kBeyondCacheSample);
    finish_row(row, d);
    sink(row);
  }
}

const RegisterFamily kFamily{"bloom", 10, bench_bloom};

}  // namespace amq::bench
