// Google Benchmark suite for BloomFilter: insert, contains (present / absent) and
// contains_many, at filter sizes inside and beyond the CPU caches.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <vector>

#include "amq/bloom_filter.hpp"

namespace {

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct Fixture {
  amq::BloomFilter filter;
  std::vector<uint64_t> present, absent;
  explicit Fixture(uint64_t n) : filter(amq::BloomFilter::create(n, 0.01)) {
    for (uint64_t i = 0; i < n; ++i) present.push_back(mix(i));
    for (uint64_t i = 0; i < std::min<uint64_t>(n, 1 << 20); ++i) absent.push_back(mix(n + i));
    for (uint64_t k : present) filter.insert(k);
  }
};

Fixture& fixture(uint64_t n) {
  static std::map<uint64_t, std::unique_ptr<Fixture>> cache;
  auto& f = cache[n];
  if (!f) f = std::make_unique<Fixture>(n);
  return *f;
}

void BM_Insert(benchmark::State& state) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  std::vector<uint64_t> keys;
  for (uint64_t i = 0; i < n; ++i) keys.push_back(mix(i));
  for (auto _ : state) {
    auto f = amq::BloomFilter::create(n, 0.01);
    for (uint64_t k : keys) f.insert(k);
    benchmark::DoNotOptimize(f.words().data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
}

void BM_ContainsPresent(benchmark::State& state) {
  auto& f = fixture(static_cast<uint64_t>(state.range(0)));
  size_t i = 0, hits = 0;
  for (auto _ : state) {
    hits += f.filter.contains(f.present[i]);
    if (++i == f.present.size()) i = 0;
  }
  benchmark::DoNotOptimize(hits);
  state.SetItemsProcessed(state.iterations());
}

void BM_ContainsAbsent(benchmark::State& state) {
  auto& f = fixture(static_cast<uint64_t>(state.range(0)));
  size_t i = 0, hits = 0;
  for (auto _ : state) {
    hits += f.filter.contains(f.absent[i]);
    if (++i == f.absent.size()) i = 0;
  }
  benchmark::DoNotOptimize(hits);
  state.SetItemsProcessed(state.iterations());
}

void BM_ContainsMany(benchmark::State& state) {
  auto& f = fixture(static_cast<uint64_t>(state.range(0)));
  constexpr size_t kChunk = 1024;
  std::unique_ptr<bool[]> out(new bool[kChunk]);
  size_t i = 0;
  for (auto _ : state) {
    if (i + kChunk > f.present.size()) i = 0;
    benchmark::DoNotOptimize(
        f.filter.contains_many(std::span(f.present).subspan(i, kChunk), std::span<bool>(out.get(), kChunk)));
    i += kChunk;
  }
  state.SetItemsProcessed(state.iterations() * kChunk);
}

}  // namespace

BENCHMARK(BM_Insert)->Arg(1 << 16)->Arg(1 << 22)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ContainsPresent)->Arg(1 << 16)->Arg(1 << 22)->Arg(1 << 25);
BENCHMARK(BM_ContainsAbsent)->Arg(1 << 16)->Arg(1 << 22)->Arg(1 << 25);
BENCHMARK(BM_ContainsMany)->Arg(1 << 16)->Arg(1 << 22)->Arg(1 << 25);
