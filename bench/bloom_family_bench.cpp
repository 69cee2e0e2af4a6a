// Google Benchmark: BlockedBloomFilter (AVX2 / portable, single / batched),
// ParquetBloomFilter and ScalableBloomFilter lookups, at 10^5 and 10^7 keys and 1%.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "amq/blocked_bloom_filter.hpp"
#include "amq/detail/dispatch.hpp"
#include "amq/scalable_bloom_filter.hpp"

namespace {

std::vector<uint64_t> make_keys(size_t n, uint64_t salt) {
  std::vector<uint64_t> k(n);
  uint64_t x = salt;
  for (auto& v : k) {
    x += 0x9e3779b97f4a7c15ULL;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    v = z ^ (z >> 31);
  }
  return k;
}

template <class Filter>
void BM_BlockedContains(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  const bool avx2 = state.range(1) != 0;
  const bool batched = state.range(2) != 0;
  auto f = [&] {  // the vector kernels, or the portable ones everywhere
    const amq::detail::ScopedIsaMask isas(avx2 ? amq::detail::kAllIsas
                                               : amq::detail::isa_bit(amq::detail::Isa::portable));
    return Filter::create(n, 0.01);
  }();
  if (f.uses_avx2() != avx2) {
    state.SkipWithError("no AVX2 on this CPU");
    return;
  }
  const auto keys = make_keys(n, 1);
  for (uint64_t k : keys) f.insert(k);
  const auto probe = make_keys(1 << 20, 2);
  std::unique_ptr<bool[]> out(new bool[1024]);
  size_t i = 0;
  for (auto _ : state) {
    if (batched) {
      benchmark::DoNotOptimize(
          f.contains_many(std::span<const uint64_t>(probe).subspan(i, 1024), std::span<bool>(out.get(), 1024)));
      i = (i + 1024) & ((1 << 20) - 1);
    } else {
      benchmark::DoNotOptimize(f.contains(probe[i]));
      i = (i + 1) & ((1 << 20) - 1);
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * (batched ? 1024 : 1));
}

void BM_ScalableContains(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  amq::ScalableBloomFilter f({.initial_capacity = std::max<size_t>(1, n / 100), .fpp = 0.01});
  const auto keys = make_keys(n, 1);
  for (uint64_t k : keys) f.insert(k);
  const auto probe = make_keys(1 << 20, 2);
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(f.contains(probe[i]));
    i = (i + 1) & ((1 << 20) - 1);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

// Args: keys, AVX2, batched.
BENCHMARK(BM_BlockedContains<amq::BlockedBloomFilter>)
    ->ArgsProduct({{100'000, 10'000'000}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kNanosecond);
BENCHMARK(BM_BlockedContains<amq::ParquetBloomFilter>)->Args({10'000'000, 1, 0})->Unit(benchmark::kNanosecond);
BENCHMARK(BM_ScalableContains)->Arg(100'000)->Arg(10'000'000)->Unit(benchmark::kNanosecond);

}  // namespace
