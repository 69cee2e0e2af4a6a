#include "amq/blocked_bloom_filter.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <unordered_set>

#include "amq/any_set.hpp"
#include "amq/detail/byte_io.hpp"
#include "amq/detail/dispatch.hpp"
#include "amq/detail/prefetch.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "amq/format.hpp"
#include "test_util.hpp"

namespace amq {
namespace {

using detail::sbbf::Block;

using test::code_of;

// The Parquet spec's algorithm, written out here independently of the library:
// block = ((h >> 32) * z) >> 32; in word i set bit (uint32(h) * salt_i) >> 27.
constexpr uint32_t kSpecSalt[8] = {0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d,
                                   0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31};
void spec_insert(std::vector<uint32_t>& words, uint64_t h) {
  const uint64_t z = words.size() / 8;
  const uint64_t block = ((h >> 32) * z) >> 32;
  const uint32_t x = static_cast<uint32_t>(h);
  for (int i = 0; i < 8; ++i) words[block * 8 + i] |= uint32_t{1} << ((x * kSpecSalt[i]) >> 27);
}
std::vector<std::byte> le_bytes(const std::vector<uint32_t>& words) {
  std::vector<std::byte> out;
  for (uint32_t w : words)
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<std::byte>(w >> (8 * b)));
  return out;
}

TEST(BlockedBloomFilter, HandComputedParquetBitPattern) {
  // One block, h = 1: word i gets bit salt_i >> 27 (the top five bits of each salt):
  // 0x47 >> 3 = 8, 0x44 >> 3 = 8, 0x88 >> 3 = 17, 0xa2 >> 3 = 20, 0x70 >> 3 = 14,
  // 0x2d >> 3 = 5, 0x9e >> 3 = 19, 0x5c >> 3 = 11.
  ParquetBloomFilter f(1);
  EXPECT_TRUE(f.insert_hash(1));
  const uint32_t expect[8] = {1u << 8, 1u << 8, 1u << 17, 1u << 20, 1u << 14, 1u << 5, 1u << 19, 1u << 11};
  EXPECT_EQ(std::memcmp(f.blocks()[0].w, expect, 32), 0);
  EXPECT_FALSE(f.insert_hash(1));
  // Ten blocks: high half 2^31 picks block (2^31 * 10) >> 32 = 5; x = 3 sets bit
  // (3 * salt_0 mod 2^32) >> 27 = 0xd7223a71 >> 27 = 26 in word 0.
  ParquetBloomFilter g(10);
  g.insert_hash((uint64_t{0x80000000} << 32) | 3);
  for (uint64_t b = 0; b < 10; ++b) {
    uint32_t any = 0;
    for (uint32_t w : g.blocks()[b].w) any |= w;
    EXPECT_EQ(any != 0, b == 5) << b;
  }
  EXPECT_EQ(g.blocks()[5].w[0], 1u << 26);
  // XXH64 seed 0 (Parquet's hash) of the empty string.
  EXPECT_EQ(ParquetBloomFilter(1).hasher()(Bytes{}), 0xef46db3751d8e999ULL);
}

TEST(BlockedBloomFilter, ParquetBitsetMatchesTheSpecComputedIndependently) {
  for (uint64_t z : {uint64_t{1}, uint64_t{7}, uint64_t{64}, uint64_t{1000}}) {
    auto f = ParquetBloomFilter(z);
    std::vector<uint32_t> words(z * 8, 0);
    const auto keys = test::random_keys(3000, z);
    for (const auto& k : keys) {
      f.insert(k);
      spec_insert(words, XXH64(k.data(), k.size(), 0));
    }
    for (uint64_t v = 0; v < 2000; ++v) {  // INT64 values: 8 little-endian bytes
      f.insert(v * 0x9e3779b97f4a7c15ULL);
      const uint64_t le = v * 0x9e3779b97f4a7c15ULL;
      spec_insert(words, XXH64(&le, 8, 0));
    }
    EXPECT_EQ(f.to_parquet_bitset(), le_bytes(words)) << z;
    const auto back = ParquetBloomFilter::from_parquet_bitset(le_bytes(words));
    EXPECT_TRUE(back == f);
    for (const auto& k : keys) ASSERT_TRUE(back.contains(k));
  }
}

TEST(BlockedBloomFilter, VectorAndPortablePathsSetTheSameBits) {
  std::mt19937_64 rng(5);
  // The inline single-lookup kernel (AVX2 when this test is compiled for it, else SSE2
  // on x86) and the SSE2 one against the portable one, on random blocks and keys:
  // every shift 0..31 in every lane occurs many times.
  for (int i = 0; i < 200000; ++i) {
    Block a{};
    for (int w = 0; w < 8; ++w) a.w[w] = static_cast<uint32_t>(i % 2 ? rng() | rng() : rng() & rng());
    const auto key = static_cast<uint32_t>(rng());
    ASSERT_EQ(detail::sbbf::contains_vector(a, key), detail::sbbf::contains_portable(a, key));
#if AMQ_SBBF_SSE2
    ASSERT_EQ(detail::sbbf::contains_sse2(a, key), detail::sbbf::contains_portable(a, key));
#endif
    Block b = a;
    detail::sbbf::insert_portable(b, key);
    ASSERT_TRUE(detail::sbbf::contains_vector(b, key));
#if AMQ_SBBF_SSE2
    ASSERT_TRUE(detail::sbbf::contains_sse2(b, key));
#endif
  }
  if (!detail::cpu_has_avx2()) GTEST_SKIP() << "this CPU has no AVX2";
  // The kernels, on random blocks and keys.
  for (int i = 0; i < 100000; ++i) {
    Block a{}, b{};
    for (int w = 0; w < 8; ++w) a.w[w] = b.w[w] = static_cast<uint32_t>(rng() & rng());
    const auto key = static_cast<uint32_t>(rng());
    ASSERT_EQ(detail::sbbf::contains_avx2(a, key), detail::sbbf::contains_portable(a, key));
    detail::sbbf::insert_avx2(a, key);
    detail::sbbf::insert_portable(b, key);
    ASSERT_EQ(std::memcmp(&a, &b, sizeof a), 0);
    ASSERT_TRUE(detail::sbbf::contains_avx2(a, key));
  }
  // Whole filters built through each path.
  auto fast = BlockedBloomFilter::create(50000, 0.01, 3);
  auto slow = [] {
    const detail::ScopedIsaMask portable(detail::isa_bit(detail::Isa::portable));
    return BlockedBloomFilter::create(50000, 0.01, 3);
  }();
  ASSERT_TRUE(fast.uses_avx2() && fast.uses_simd());
  ASSERT_FALSE(slow.uses_avx2() || slow.uses_simd());
  std::vector<uint64_t> keys(50000);
  for (auto& k : keys) k = rng();
  for (uint64_t k : keys) ASSERT_EQ(fast.insert(k), slow.insert(k));
  EXPECT_TRUE(fast == slow);
  std::vector<uint64_t> probe(100000);
  for (auto& k : probe) k = rng();
  probe.insert(probe.end(), keys.begin(), keys.end());
  std::unique_ptr<bool[]> a(new bool[probe.size()]), b(new bool[probe.size()]);
  EXPECT_EQ(fast.contains_many(probe, std::span<bool>(a.get(), probe.size())),
            slow.contains_many(probe, std::span<bool>(b.get(), probe.size())));
  for (size_t i = 0; i < probe.size(); ++i) {
    ASSERT_EQ(a[i], b[i]) << i;
    ASSERT_EQ(fast.contains(probe[i]), slow.contains(probe[i])) << i;
    ASSERT_EQ(a[i], fast.contains(probe[i])) << i;
  }
}

TEST(BlockedBloomFilter, SizingIsParquetsFormulaCorrected) {
  for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{100}, uint64_t{12345}, uint64_t{1'000'000}}) {
    for (double p : {0.1, 0.01, 0.001, 0.0001}) {
      const uint64_t z = detail::sbbf::blocks_for(n, p);
      const double nn = static_cast<double>(std::max<uint64_t>(n, 1));
      const double parquet_bits = -8 * nn / std::log(1 - std::pow(p, 1.0 / 8));
      EXPECT_GE(z, static_cast<uint64_t>(std::ceil(parquet_bits / 256))) << n << " " << p;
      EXPECT_LE(detail::sbbf::model_fpp(nn, z), 0.97 * p) << n << " " << p;
      if (z > static_cast<uint64_t>(std::ceil(parquet_bits / 256))) {
        EXPECT_GT(detail::sbbf::model_fpp(nn, z - 1), 0.97 * p) << "not the least: " << n << " " << p;
      }
      EXPECT_EQ(BlockedBloomFilter::create(n, p).num_blocks(), z);
    }
  }
  EXPECT_NE(detail::sbbf::blocks_for(1'000'000, 0.01) & (detail::sbbf::blocks_for(1'000'000, 0.01) - 1), 0u)
      << "any block count, not only powers of two";
  EXPECT_EQ(code_of([] { BlockedBloomFilter::create(10, 0); }), Errc::invalid_argument);
  EXPECT_EQ(code_of([] { BlockedBloomFilter::create(10, 1); }), Errc::invalid_argument);
  EXPECT_EQ(code_of([] { BlockedBloomFilter::create(10, std::nan("")); }), Errc::invalid_argument);
  EXPECT_EQ(code_of([] { BlockedBloomFilter::create(uint64_t{1} << 41, 0.01); }), Errc::too_large);
  EXPECT_EQ(code_of([] { BlockedBloomFilter::create(uint64_t{1} << 40, 1e-12); }), Errc::too_large);
  EXPECT_EQ(code_of([] { BlockedBloomFilter(0); }), Errc::invalid_argument);
}

template <class Filter>
void check_fpr(double p, uint64_t n, uint64_t seed) {
  auto f = Filter::create(n, p, seed);
  for (uint64_t i = 0; i < n; ++i) f.insert(i * 2654435761ULL);
  for (uint64_t i = 0; i < n; ++i) ASSERT_TRUE(f.contains(i * 2654435761ULL)) << "false negative";
  size_t fp = 0;
  // 10^6 absent keys measure 1% to +-1% (1 sigma), within the sizing's 3% headroom;
  // rarer rates need more keys for the same relative precision.
  const uint64_t absent = p >= 0.01 ? 1'000'000 : 10'000'000;
  for (uint64_t i = 0; i < absent; ++i) fp += f.contains((uint64_t{1} << 62) + i);
  const double rate = static_cast<double>(fp) / static_cast<double>(absent);
  EXPECT_LE(rate, p) << "n " << n << " target " << p << " measured " << rate;
  EXPECT_GT(rate, p / 2) << "much better than asked: oversized";
  const double tolerance = 0.05 * p + 4 * std::sqrt(p / absent);
  EXPECT_NEAR(f.expected_fpp(), rate, tolerance);
  EXPECT_NEAR(detail::sbbf::model_fpp(static_cast<double>(n), f.num_blocks()), rate, tolerance);
  const double est = static_cast<double>(f.approximate_element_count());
  EXPECT_NEAR(est, static_cast<double>(n), 0.03 * static_cast<double>(n));
}

TEST(BlockedBloomFilter, MeasuredFprAtCapacityIsWithinTarget) {
  check_fpr<BlockedBloomFilter>(0.01, 1'000'000, 0);
  check_fpr<BlockedBloomFilter>(0.05, 1'000'000, 9);
  check_fpr<BlockedBloomFilter>(0.001, 1'000'000, 1);
  check_fpr<ParquetBloomFilter>(0.01, 1'000'000, 0);
  check_fpr<BlockedBloomFilter>(0.02, 3000, 4);
}

// contains_many answers key by key within the last-level cache with the SIMD kernels,
// and prefetches above it or with the portable kernel; both paths (and
// contains_many_prefetched on a small filter) give contains's answers.
TEST(BlockedBloomFilter, ContainsManyPrefetchesOnlyAboveTheLastLevelCache) {
  const size_t llc = detail::last_level_cache_bytes();
  auto small = BlockedBloomFilter::create(20000, 0.01);
  auto big = BlockedBloomFilter::create(llc, 0.01);  // ~10 bits a key: > LLC bytes
  auto portable = [] {
    const detail::ScopedIsaMask isas(detail::isa_bit(detail::Isa::portable));
    return BlockedBloomFilter::create(20000, 0.01);
  }();
  ASSERT_LE(small.size_in_bytes(), llc);
  ASSERT_GT(big.size_in_bytes(), llc);
  EXPECT_EQ(small.prefetches_batches(), !small.uses_simd());
  EXPECT_TRUE(big.prefetches_batches());
  EXPECT_FALSE(portable.uses_simd());
  EXPECT_TRUE(portable.prefetches_batches());
  const auto keys = test::random_keys(40000, 31);
  for (size_t i = 0; i < keys.size(); i += 2) {
    small.insert(keys[i]);
    big.insert(keys[i]);
    portable.insert(keys[i]);
  }
  std::unique_ptr<bool[]> out(new bool[keys.size()]);
  const std::span<bool> o(out.get(), keys.size());
  for (const BlockedBloomFilter* f : {&small, &big, &portable}) {
    for (int path = 0; path < 2; ++path) {
      for (size_t i = 0; i < keys.size(); ++i) out[i] = !f->contains(keys[i]);  // stale answers to overwrite
      const size_t found = path == 0 ? f->contains_many(keys, o) : f->contains_many_prefetched(keys, o);
      size_t expect = 0;
      for (size_t i = 0; i < keys.size(); ++i) {
        ASSERT_EQ(out[i], f->contains(keys[i])) << "path " << path << " key " << i;
        if (i % 2 == 0) {
          ASSERT_TRUE(out[i]) << i;
        }
        expect += out[i];
      }
      EXPECT_EQ(found, expect);
    }
  }
}

TEST(BlockedBloomFilter, AgreesWithUnorderedSet) {
  auto f = BlockedBloomFilter::create(20000, 0.01, 77);
  std::unordered_set<std::string> truth;
  const auto keys = test::random_keys(40000, 3);
  for (size_t i = 0; i < 20000; ++i) {
    const bool was = f.contains(keys[i]);
    EXPECT_EQ(f.insert(keys[i]), !was) << "insert reports whether bits changed";
    truth.insert(keys[i]);
  }
  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::unique_ptr<bool[]> out(new bool[views.size()]);
  const size_t found = f.contains_many(views, std::span<bool>(out.get(), views.size()));
  size_t fp = 0, count = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(out[i], f.contains(keys[i]));
    count += out[i];
    if (truth.count(keys[i])) {
      ASSERT_TRUE(out[i]) << "false negative";
    } else {
      fp += out[i];
    }
  }
  EXPECT_EQ(found, count);
  EXPECT_LE(fp, 20000 * 0.015);
}

TEST(BlockedBloomFilter, MergeIsUnion) {
  auto a = BlockedBloomFilter::create(5000, 0.01, 1), b = BlockedBloomFilter::create(5000, 0.01, 1);
  const auto keys = test::random_keys(6000, 4);
  for (size_t i = 0; i < keys.size(); ++i) (i % 2 ? a : b).insert(keys[i]);
  auto both = BlockedBloomFilter::create(5000, 0.01, 1);
  for (const auto& k : keys) both.insert(k);
  a.merge(b);
  EXPECT_TRUE(a == both);
  EXPECT_EQ(code_of([&] { a.merge(BlockedBloomFilter::create(50000, 0.01, 1)); }), Errc::incompatible);
  EXPECT_EQ(code_of([&] { a.merge(BlockedBloomFilter::create(5000, 0.01, 2)); }), Errc::incompatible);
}

std::vector<std::byte> make_file(uint32_t id, uint32_t reserved, uint64_t seed, uint64_t blocks,
                                 std::span<const std::byte> payload) {
  detail::ByteWriter w;
  w.u32(id);
  w.u32(reserved);
  w.u64(seed);
  w.u64(blocks);
  return write_container(Kind::blocked_bloom, w.buffer(), payload);
}

TEST(BlockedBloomFilter, RoundTripsAndRejectsBadFiles) {
  auto f = BlockedBloomFilter::create(1000, 0.01, 99);
  for (const auto& k : test::random_keys(1000, 6)) f.insert(k);
  const auto file = f.serialize();
  const auto g = BlockedBloomFilter::load(file);
  EXPECT_TRUE(f == g);
  EXPECT_EQ(g.seed(), 99u);
  EXPECT_EQ(g.serialize(), file);
  const auto bitset = f.to_parquet_bitset();
  ASSERT_NO_THROW(BlockedBloomFilter::load(make_file(4, 0, 99, f.num_blocks(), bitset)));
  // Id 1 (XXH3, the files before Mix64Hasher) is another type's; id 3 no blocked filter's.
  EXPECT_EQ(code_of([&] { BlockedBloomFilter::load(make_file(1, 0, 99, f.num_blocks(), bitset)); }), Errc::unsupported);
  EXPECT_EQ(Xxh3BlockedBloomFilter::load(make_file(1, 0, 99, f.num_blocks(), bitset)).num_blocks(), f.num_blocks());
  EXPECT_EQ(code_of([&] { Xxh3BlockedBloomFilter::load(file); }), Errc::unsupported);
  EXPECT_EQ(code_of([&] { load_set(make_file(3, 0, 99, f.num_blocks(), bitset)); }), Errc::unsupported);

  EXPECT_EQ(code_of([&] { ParquetBloomFilter::load(file); }), Errc::unsupported);
  EXPECT_EQ(code_of([&] { BlockedBloomFilter::load(make_file(4, 1, 99, f.num_blocks(), bitset)); }), Errc::corrupt);
  EXPECT_EQ(code_of([&] { BlockedBloomFilter::load(make_file(4, 0, 99, 0, {})); }), Errc::corrupt);
  EXPECT_EQ(code_of([&] { BlockedBloomFilter::load(make_file(4, 0, 99, (uint64_t{1} << 32) + 1, bitset)); }),
            Errc::too_large);
  EXPECT_EQ(code_of([&] { BlockedBloomFilter::load(make_file(4, 0, 99, ~uint64_t{0} / 32 + 1, bitset)); }),
            Errc::too_large);
  EXPECT_EQ(code_of([&] { BlockedBloomFilter::load(make_file(4, 0, 99, f.num_blocks() + 1, bitset)); }),
            Errc::truncated);
  EXPECT_EQ(code_of([&] { BlockedBloomFilter::load(make_file(4, 0, 99, f.num_blocks() - 1, bitset)); }),
            Errc::corrupt);
  EXPECT_EQ(code_of([&] {
              BlockedBloomFilter::load(make_file(4, 0, 99, f.num_blocks(), std::span(bitset).first(bitset.size() - 4)));
            }),
            Errc::truncated);
  EXPECT_EQ(code_of([&] { BlockedBloomFilter::load(std::span(file).first(file.size() - 8)); }), Errc::truncated);
  auto flipped = file;
  flipped[100] ^= std::byte{1};
  EXPECT_EQ(code_of([&] { BlockedBloomFilter::load(flipped); }), Errc::checksum_mismatch);
  EXPECT_EQ(code_of([&] { BlockedBloomFilter::load(write_container(Kind::scalable_bloom, {}, {})); }),
            Errc::wrong_kind);
  // Raw Parquet bitsets.
  EXPECT_EQ(code_of([&] { ParquetBloomFilter::from_parquet_bitset({}); }), Errc::truncated);
  EXPECT_EQ(code_of([&] { ParquetBloomFilter::from_parquet_bitset(std::span(bitset).first(33)); }), Errc::corrupt);
  EXPECT_EQ(ParquetBloomFilter::from_parquet_bitset(std::span(bitset).first(64)).num_blocks(), 2u);
}

TEST(BlockedBloomFilter, LargeFiltersOnHugePageAllocations) {
  // Past detail::kHugeThreshold the blocks come 2 MiB-aligned from the huge-page path.
  auto f = BlockedBloomFilter::create(4'000'000, 0.01, 2);
  ASSERT_GE(f.size_in_bytes(), detail::kHugeThreshold);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(f.blocks().data()) % detail::kHugePage, 0u);
  for (uint64_t i = 0; i < 100000; ++i) f.insert(i * 7919);
  auto copy = f;
  EXPECT_TRUE(copy == f);
  const auto g = BlockedBloomFilter::load(f.serialize());
  EXPECT_TRUE(g == f);
  const auto h = BlockedBloomFilter::from_parquet_bitset(f.to_parquet_bitset(), 2);
  EXPECT_TRUE(h == f);
  for (uint64_t i = 0; i < 100000; ++i) ASSERT_TRUE(h.contains(i * 7919));
  copy = BlockedBloomFilter::create(10, 0.01, 2);  // a small one replaces a large one
  EXPECT_EQ(copy.num_blocks(), BlockedBloomFilter::create(10, 0.01).num_blocks());
}

TEST(BlockedBloomFilter, AnySetBuildAddInfo) {
  const auto keys = test::random_keys(5000, 12);
  std::vector<Bytes> views;
  for (const auto& k : keys) views.push_back(as_bytes(k));
  for (bool parquet : {false, true}) {
    BuildOptions o;
    o.fpp = 0.01;
    o.seed = parquet ? 0 : 8;
    if (parquet) o.extra["parquet"] = "1";
    auto set = build_set(Kind::blocked_bloom, o, views);
    EXPECT_TRUE(set->is_dynamic());
    set->insert(as_bytes("one more"));
    auto again = load_set(set->serialize());
    EXPECT_EQ(again->kind(), Kind::blocked_bloom);
    for (Bytes k : views) ASSERT_TRUE(again->contains(k));
    EXPECT_TRUE(again->contains(as_bytes("one more")));
    const SetInfo i = again->info();
    std::map<std::string, std::string> p(i.params.begin(), i.params.end());
    EXPECT_EQ(p["hash"], parquet ? "xxh64 seed 0 (parquet)" : "mix64 seed 8");
    EXPECT_EQ(p["blocks"], std::to_string(detail::sbbf::blocks_for(5000, 0.01)));
    EXPECT_EQ(p["bits"], std::to_string(detail::sbbf::blocks_for(5000, 0.01) * 256));
    EXPECT_NEAR(static_cast<double>(i.items), 5001, 200);
    EXPECT_LT(i.fpp_expected, 0.01);
    if (parquet) {
      // The same bits as a ParquetBloomFilter built directly.
      auto f = ParquetBloomFilter::create(5000, 0.01);
      for (const auto& k : keys) f.insert(k);
      f.insert("one more");
      EXPECT_EQ(again->serialize(), f.serialize());
    }
  }
  // Format "parquet": the raw bitset, read back with load_set(..., "parquet").
  BuildOptions raw;
  raw.format = "parquet";
  auto set = build_set(Kind::blocked_bloom, raw, views);
  auto direct = ParquetBloomFilter::create(5000, 0.01);
  for (const auto& k : keys) direct.insert(k);
  EXPECT_EQ(set->serialize(), direct.to_parquet_bitset());
  auto back = load_set(set->serialize(), "parquet");
  EXPECT_EQ(back->info().format, "parquet");
  back->insert(as_bytes("added"));
  direct.insert("added");
  EXPECT_EQ(back->serialize(), direct.to_parquet_bitset());
  for (Bytes k : views) ASSERT_TRUE(back->contains(k));
  const auto bitset = direct.to_parquet_bitset();
  EXPECT_EQ(code_of([&] { load_set(std::span(bitset).first(40), "parquet"); }), Errc::corrupt);
  raw.seed = 1;
  EXPECT_EQ(code_of([&] { build_set(Kind::blocked_bloom, raw, views); }), Errc::invalid_argument);
  raw = {};
  raw.format = "guava";
  EXPECT_EQ(code_of([&] { build_set(Kind::blocked_bloom, raw, views); }), Errc::invalid_argument);

  BuildOptions bad;
  bad.extra["parquet"] = "1";
  bad.seed = 3;
  EXPECT_EQ(code_of([&] { build_set(Kind::blocked_bloom, bad, views); }), Errc::invalid_argument);
  bad = {};
  bad.extra["growth"] = "2";
  EXPECT_EQ(code_of([&] { build_set(Kind::blocked_bloom, bad, views); }), Errc::invalid_argument);
}

std::string hash_param(const AnySet& s) {
  for (const auto& [k, v] : s.info().params)
    if (k == "hash") return v;
  return "";
}

// The hasher id a blocked Bloom filter file names (its params' first 4 bytes).
uint32_t file_hasher_id(const std::vector<std::byte>& file) {
  const auto params = parse_container(file, Kind::blocked_bloom).params;
  EXPECT_GE(params.size(), 4u);
  return params.size() >= 4 ? detail::load_le32(params.data()) : 0;
}

// Mix64Hasher's values, computed independently (splitmix64's output function of k ^ seed,
// written out in Python): they are part of every file that names hasher id 4.
TEST(Mix64Hasher, PinnedValues) {
  auto h = [](uint64_t key, uint64_t seed) { return Mix64Hasher{.seed = seed}(KeyView(key).bytes()); };
  EXPECT_EQ(Mix64Hasher::id, 4u);
  EXPECT_EQ(hasher_name(Mix64Hasher::id), "mix64");
  EXPECT_EQ(h(0, 0), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(h(1, 0), 0x910a2dec89025cc1ULL);
  EXPECT_EQ(h(0x0123456789abcdefULL, 42), 0x773b80f8c7837c8bULL);
  EXPECT_EQ(h(~uint64_t{0}, 7), 0x88fca0195de67e12ULL);
  // An 8-byte string is the uint64_t of its little-endian bytes.
  EXPECT_EQ(Mix64Hasher{.seed = 3}(as_bytes("abcdefgh")), 0x1949dfc6ea31d16dULL);
  EXPECT_EQ(Mix64Hasher{.seed = 3}(as_bytes("abcdefgh")), h(0x6867666564636261ULL, 3));
  // Every other length is XXH3-64 with the seed, as Xxh3Hasher.
  for (const auto& k : test::random_keys(2000, 31, 40)) {
    if (k.size() == 8) continue;
    ASSERT_EQ(Mix64Hasher{.seed = 9}(as_bytes(k)), Xxh3Hasher{.seed = 9}(as_bytes(k))) << k;
  }
  EXPECT_EQ(Mix64Hasher{}(Bytes{}), Xxh3Hasher{}(Bytes{}));
}

// Sequential integer keys (0..n-1, absent keys n..) must spread like random ones: a weak
// mixer puts them in few blocks (the identity hash would put them all in block 0).
TEST(BlockedBloomFilter, SequentialIntegerKeysKeepTheRate) {
  constexpr uint64_t n = 200'000, q = 400'000;
  for (uint64_t seed : {0, 1}) {
    auto f = BlockedBloomFilter::create(n, 0.01, seed);
    for (uint64_t k = 0; k < n; ++k) f.insert(k);
    for (uint64_t k = 0; k < n; ++k) ASSERT_TRUE(f.contains(k));
    uint64_t fp = 0;
    for (uint64_t k = n; k < n + q; ++k) fp += f.contains(k);
    EXPECT_LT(static_cast<double>(fp) / q, 0.0105) << "seed " << seed;
    EXPECT_NEAR(f.expected_fpp(), detail::sbbf::model_fpp(n, f.num_blocks()), 0.001);
  }
}

// New files name Mix64Hasher (id 4); Xxh3BlockedBloomFilter still makes id-1 files.
TEST(BlockedBloomFilter, FilesNameTheirHash) {
  auto f = BlockedBloomFilter::create(100, 0.01, 5);
  f.insert(uint64_t{12});
  EXPECT_EQ(file_hasher_id(f.serialize()), 4u);
  auto x = Xxh3BlockedBloomFilter::create(100, 0.01, 5);
  x.insert(uint64_t{12});
  EXPECT_EQ(file_hasher_id(x.serialize()), 1u);
  // The same key, two hashes: u64 keys set other bits, byte keys of other lengths the same.
  EXPECT_NE(f.to_parquet_bitset(), x.to_parquet_bitset());
  auto fs = BlockedBloomFilter::create(100, 0.01, 5);
  auto xs = Xxh3BlockedBloomFilter::create(100, 0.01, 5);
  fs.insert("not eight");
  xs.insert("not eight");
  EXPECT_EQ(fs.to_parquet_bitset(), xs.to_parquet_bitset());
  // Through AnySet the type follows the file's id.
  EXPECT_EQ(hash_param(*load_set(x.serialize())), "xxh3 seed 5");
  EXPECT_EQ(hash_param(*load_set(f.serialize())), "mix64 seed 5");
  EXPECT_TRUE(load_set(x.serialize())->contains(KeyView(uint64_t{12}).bytes()));
  EXPECT_TRUE(load_set(f.serialize())->contains(KeyView(uint64_t{12}).bytes()));
}

// A file written by amq before Mix64Hasher (`amq build -t blocked-bloom --key-type u64
// --seed 7`, keys i * 1000003 for i < 300): it loads and answers exactly as it did then.
// The absent keys i * 1000003 for 300 <= i < 20300 gave 130 false positives, the first
// of them at i = 419, 580, 583, 614, 715.
TEST(BlockedBloomFilter, ReadsFilesWrittenWithXxh3) {
  const auto file = read_file(std::string(AMQ_SOURCE_DIR) + "/tests/data/blocked_bloom_xxh3_u64_seed7_300.amq");
  EXPECT_EQ(code_of([&] { BlockedBloomFilter::load(file); }), Errc::unsupported);
  const auto f = Xxh3BlockedBloomFilter::load(file);
  EXPECT_EQ(f.seed(), 7u);
  EXPECT_EQ(f.num_blocks(), 13u);
  auto set = load_set(file);
  EXPECT_EQ(hash_param(*set), "xxh3 seed 7");
  for (uint64_t i = 0; i < 300; ++i) {
    ASSERT_TRUE(f.contains(i * 1000003));
    ASSERT_TRUE(set->contains(KeyView(i * 1000003).bytes()));
  }
  std::vector<uint64_t> fp;
  for (uint64_t i = 300; i < 20300; ++i) {
    const bool hit = f.contains(i * 1000003);
    ASSERT_EQ(set->contains(KeyView(i * 1000003).bytes()), hit);
    if (hit) fp.push_back(i);
  }
  EXPECT_EQ(fp.size(), 130u);
  ASSERT_GE(fp.size(), 5u);
  EXPECT_EQ(std::vector<uint64_t>(fp.begin(), fp.begin() + 5), (std::vector<uint64_t>{419, 580, 583, 614, 715}));
  // Rebuilt with the XXH3 type, the same bits; saved again, the same id.
  auto again = Xxh3BlockedBloomFilter::create(300, 0.01, 7);
  for (uint64_t i = 0; i < 300; ++i) again.insert(i * 1000003);
  EXPECT_TRUE(again == f);
  EXPECT_EQ(file_hasher_id(set->serialize()), 1u);
}

}  // namespace
}  // namespace amq
