// The project's BloomFilter as a row of its own or as the reference row other
// structures are compared with (the cuckoo and GCS tables).
#pragma once

#include <fmt/core.h>

#include "amq/bloom_filter.hpp"
#include "bench_table.hpp"

namespace amq::bench {

// Builds a BloomFilter for the dataset's keys at `fpp` (median of `repeats` builds,
// into row.build_ns_per_key) and fills row.params and row.bytes.
inline BloomFilter build_bloom_row(Row& row, const Dataset& d, int repeats, double fpp) {
  const uint64_t n = d.keys.size();
  BloomFilter f = BloomFilter::create(n, fpp);
  row.build_ns_per_key = median_ns(repeats, [&] {
                           f = BloomFilter::create(n, fpp);
                           for (Bytes k : d.key_views) f.insert(k);
                         }) /
                         static_cast<double>(std::max<uint64_t>(n, 1));
  row.params = fmt::format("k={} bits={}", f.num_hashes(), f.bit_size());
  row.bytes = f.size_in_bytes();
  return f;
}

}  // namespace amq::bench
