// The rest of the Bloom filter family: BlockedBloomFilter (AVX2 and portable paths, and
// with the XXH3 hash of the files written before Mix64Hasher), its Parquet-hashing twin, and ScalableBloomFilter grown from a small start.
#include <fmt/core.h>

#include "amq/blocked_bloom_filter.hpp"
#include "amq/detail/dispatch.hpp"
#include "amq/scalable_bloom_filter.hpp"
#include "bench_table.hpp"

namespace amq::bench {
namespace {

template <class Filter>
void blocked_row(const Options& o, const Dataset& d, const Sink& sink, const char* name, bool avx2, uint64_t capacity,
                 std::string note, size_t sample = kLookupSample) {
  const uint64_t n = d.keys.size();
  Row row{.structure = name, .fpp_target = o.fpp};
  Filter f = [&] {  // the vector kernels, or the portable ones everywhere
    const detail::ScopedIsaMask isas(avx2 ? detail::kAllIsas : detail::isa_bit(detail::Isa::portable));
    return Filter::create(capacity, o.fpp);
  }();
  if (!f.uses_avx2() && avx2) note += note.empty() ? "no AVX2 on this CPU" : "; no AVX2 on this CPU";
  row.build_ns_per_key = median_ns(o.repeats, [&] {
                           f.clear();
                           for (Bytes k : d.key_views) f.insert(k);
                         }) /
                         static_cast<double>(n);
  row.params = fmt::format("blocks={} bits={}{}", f.num_blocks(), f.bit_size(), f.uses_avx2() ? " sse2/avx2" : f.uses_simd() ? " sse2" : " portable");
  row.bytes = f.size_in_bytes();
  row.note = std::move(note);
  measure_set_lookups(row, d, o, f, sample);
  finish_row(row, d);
  sink(row);
}

}  // namespace

void bench_bloom_family(const Options& o, const Dataset& d, const Sink& sink) {
  const uint64_t n = d.keys.size();
  blocked_row<BlockedBloomFilter>(o, d, sink, "BlockedBloomFilter", true, n, "hash mix64 (XXH3 for keys not of 8 bytes)");
  blocked_row<Xxh3BlockedBloomFilter>(o, d, sink, "BlockedBloomFilter xxh3", true, n,
                                      "XXH3 for every key, as the files written before mix64");
  blocked_row<BlockedBloomFilter>(o, d, sink, "BlockedBloomFilter portable", false, n, "");
  blocked_row<ParquetBloomFilter>(o, d, sink, "ParquetBloomFilter", true, n, "XXH64 seed 0");
  {
    // The blocked filter sized past the last-level cache, like "BloomFilter > LLC".
    const size_t llc = last_level_cache_bytes();
    const uint64_t capacity = static_cast<uint64_t>(4.0 * static_cast<double>(llc) * 8 / 10.6);
    blocked_row<BlockedBloomFilter>(o, d, sink, "BlockedBloomFilter > LLC", true, std::max(capacity, n),
                                    fmt::format("filter = 4x LLC (capacity {}), holding the {} keys", capacity, n),
                                    kBeyondCacheSample);
  }
  {
    // Grown from 1/100 of the keys (the 100x test): 7 layers, 1 + 2 + ... + 64
    // = 127 times the start, the newest about 60% full.
    const uint64_t initial = std::max<uint64_t>(1, n / 100);
    Row row{.structure = "ScalableBloomFilter", .fpp_target = o.fpp};
    const detail::ScalableParams p{.initial_capacity = initial, .fpp = o.fpp};
    ScalableBloomFilter f(p);
    row.build_ns_per_key = median_ns(o.repeats, [&] {
                             f = ScalableBloomFilter(p);
                             for (Bytes k : d.key_views) f.insert(k);
                           }) /
                           static_cast<double>(n);
    row.params = fmt::format("n0={} s={} r={} layers={}", initial, p.growth, p.tightening, f.layer_count());
    row.bytes = f.size_in_bytes();
    row.note = fmt::format("{} keys counted", f.size());
    measure_set_lookups(row, d, o, f);
    finish_row(row, d);
    sink(row);
  }
}

const RegisterFamily kFamily{"bloom-family", 20, bench_bloom_family};

}  // namespace amq::bench
