#include "amq/bloom_filter.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <unordered_set>
#include <vector>

#include "amq/detail/fastmod.hpp"
#include "amq/detail/prefetch.hpp"
#include "amq/error.hpp"
#include "test_util.hpp"

namespace amq {
namespace {

TEST(FastMod, MatchesDivision) {
  std::mt19937_64 rng(1);
  for (int d_i = 0; d_i < 2000; ++d_i) {
    uint64_t d = rng() >> (rng() % 64);
    if (d == 0) d = 1;
    const detail::FastMod64 m(d);
    for (int i = 0; i < 200; ++i) {
      const uint64_t a = rng() >> (rng() % 64);
      ASSERT_EQ(m.mod(a), a % d) << a << " % " << d;
    }
    ASSERT_EQ(m.mod(~uint64_t{0}), ~uint64_t{0} % d);
    ASSERT_EQ(m.mod(d - 1), d - 1);
    ASSERT_EQ(m.mod(d), 0u);
  }
}

TEST(FastMod63, MatchesDivisionBelow2To63) {
  std::mt19937_64 rng(2);
  const uint64_t top = (uint64_t{1} << 63) - 1;
  std::vector<uint64_t> divisors{2, 3, 63, 64, 65, 127, 128, 129, top, top - 1, uint64_t{1} << 62,
                                 (uint64_t{1} << 62) + 1, (uint64_t{1} << 32) - 1, uint64_t{1} << 32};
  for (int i = 0; i < 3000; ++i) divisors.push_back(std::max<uint64_t>(2, rng() >> (1 + rng() % 63)));
  for (uint64_t d : divisors) {
    const detail::FastMod63 m(d);
    for (int i = 0; i < 300; ++i) {
      const uint64_t a = rng() >> (1 + rng() % 63);
      ASSERT_EQ(m.mod(a), a % d) << a << " % " << d;
    }
    for (uint64_t a : {uint64_t{0}, d - 1, d, d + 1, top, top - 1, top - d, (top / d) * d, (top / d) * d - 1})
      if (a <= top) {
        ASSERT_EQ(m.mod(a), a % d) << a << " % " << d;
      }
  }
}

TEST(Murmur3, KnownValues) {
  // Guava: Hashing.murmur3_128().hashBytes(new byte[0]) is all zeros; the others are
  // the reference implementation's outputs for these strings (seed 0).
  EXPECT_EQ(murmur3_x64_128(as_bytes(""), 0), (Hash128{0, 0}));
  EXPECT_EQ(murmur3_x64_128(as_bytes("hello"), 0), (Hash128{0xcbd8a7b341bd9b02ULL, 0x5b1e906a48ae1d19ULL}));
  EXPECT_EQ(murmur3_x64_128(as_bytes("The quick brown fox jumps over the lazy dog"), 0),
            (Hash128{0xe34bbc7bbc071b6cULL, 0x7a433ca9c49a9347ULL}));
}

// Calls check(key, seed) for `trials` random keys of every length 0..max_len (each key
// its own buffer, so it ends exactly where the buffer does) and random seeds.
template <class Check>
void for_random_short_keys(uint64_t rng_seed, int trials, size_t max_len, Check&& check) {
  std::mt19937_64 rng(rng_seed);
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<std::byte> key(static_cast<size_t>(trial) % (max_len + 1));
    for (auto& b : key) b = static_cast<std::byte>(rng());
    check(std::span<const std::byte>(key), trial % 3 == 0 ? rng() : rng() % 100);
  }
}

TEST(Murmur3, InlineShortKeysEqualTheGeneralPath) {
  // murmur3_x64_128 hashes keys of <= 16 bytes inline with overlapping loads; it must
  // agree with the general block-and-tail code for every length and seed.
  for_random_short_keys(11, 20000, 16, [](Bytes key, uint64_t s) {
    const auto seed = static_cast<uint32_t>(s);
    ASSERT_EQ(murmur3_x64_128(key, seed), detail::murmur3_x64_128_any(key, seed)) << "length " << key.size();
  });
}

TEST(Xxh3, InlineShortKeysEqualTheLibrary) {
  // Xxh3Hasher hashes keys of <= 16 bytes through xxHash's inlined short-input path;
  // it must equal the library's XXH3_64bits_withSeed for every length and seed.
  for_random_short_keys(12, 40000, 17, [](Bytes key, uint64_t seed) {
    ASSERT_EQ(Xxh3Hasher{.seed = seed}(key), XXH3_64bits_withSeed(key.data(), key.size(), seed))
        << "length " << key.size();
  });
}

// The bits a key sets, by Guava's formulas written out directly (one division per probe).
std::vector<uint64_t> reference_bits(const BloomFilter& f, std::string_view key) {
  const Hash128 h = murmur3_x64_128(as_bytes(key));
  const uint64_t m = f.bit_size();
  std::vector<uint64_t> bits;
  if (f.strategy() == GuavaStrategy::murmur128_mitz_64) {
    uint64_t combined = h.low;
    for (int i = 0; i < f.num_hashes(); ++i) {
      bits.push_back((combined & 0x7fffffffffffffffULL) % m);
      combined += h.high;
    }
  } else {
    const auto hash1 = static_cast<int32_t>(h.low), hash2 = static_cast<int32_t>(h.low >> 32);
    for (int i = 1; i <= f.num_hashes(); ++i) {
      int32_t c = static_cast<int32_t>(static_cast<uint32_t>(hash1) + static_cast<uint32_t>(i) * static_cast<uint32_t>(hash2));
      if (c < 0) c = ~c;
      bits.push_back(static_cast<uint64_t>(c) % m);
    }
  }
  std::sort(bits.begin(), bits.end());
  bits.erase(std::unique(bits.begin(), bits.end()), bits.end());
  return bits;
}

TEST(BloomFilter, ContainsIsTheAndOfGuavasBits) {
  // contains() (grouped branch-free probes) against the bits of Guava's formulas, on
  // filters of many sizes, k and densities of random bits, both strategies.
  std::mt19937_64 rng(23);
  for (int trial = 0; trial < 300; ++trial) {
    const uint64_t words = trial % 3 == 0 ? 1 + rng() % 60 : 64 + rng() % 20000;
    const int k = 1 + static_cast<int>(rng() % 16);
    BloomFilter f(words, k, trial % 5 ? GuavaStrategy::murmur128_mitz_64 : GuavaStrategy::murmur128_mitz_32);
    const int density = 1 + static_cast<int>(rng() % 3);  // words of 1/2, 3/4 or 7/8 ones
    for (uint64_t& w : f.mutable_words()) {
      w = rng();
      for (int d = 1; d < density; ++d) w |= rng();
    }
    for (int j = 0; j < 200; ++j) {
      const std::string key = std::to_string(rng());
      bool all = true;
      for (uint64_t bit : reference_bits(f, key)) all &= ((f.words()[bit >> 6] >> (bit & 63)) & 1) != 0;
      ASSERT_EQ(f.contains(key), all) << "trial " << trial << " key " << key;
    }
  }
}

TEST(BloomFilter, ProbesAreGuavasFormulas) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 3000; ++trial) {
    const uint64_t words = 1 + rng() % 5000;
    const int k = 1 + static_cast<int>(rng() % (trial % 10 == 0 ? 255 : 30));
    const auto strategy = trial % 3 ? GuavaStrategy::murmur128_mitz_64 : GuavaStrategy::murmur128_mitz_32;
    BloomFilter f(words, k, strategy);
    const std::string key = std::to_string(rng());
    f.insert(key);
    std::vector<uint64_t> set;
    for (uint64_t w = 0; w < words; ++w)
      for (int b = 0; b < 64; ++b)
        if ((f.words()[w] >> b) & 1) set.push_back(w * 64 + static_cast<uint64_t>(b));
    ASSERT_EQ(set, reference_bits(f, key)) << "words " << words << " k " << k;
  }
}

TEST(BloomFilter, ProbesAreGuavasFormulasOnLargeFilters) {
  // Larger, odd sizes: 2^63 mod m is non-zero and x wraps past 2^63 on about half the steps.
  std::mt19937_64 rng(6);
  for (uint64_t words : {(uint64_t{1} << 20) + 7, uint64_t{1} << 19, uint64_t{1234567}}) {
    BloomFilter f(words, 40);
    for (int t = 0; t < 50; ++t) {
      const std::string key = "key" + std::to_string(rng());
      for (uint64_t bit : reference_bits(f, key)) ASSERT_EQ(f.words()[bit / 64] >> (bit % 64) & 1, 0u);
      f.insert(key);
      for (uint64_t bit : reference_bits(f, key)) ASSERT_EQ(f.words()[bit / 64] >> (bit % 64) & 1, 1u);
      ASSERT_TRUE(f.contains(key));
      // clear the key's bits again so the next key's check starts from zeros
      for (uint64_t bit : reference_bits(f, key)) f.mutable_words()[bit / 64] &= ~(uint64_t{1} << (bit % 64));
    }
  }
}

TEST(BloomFilter, GuavaSizing) {
  // Guava 31.1 BloomFilter.create(funnel, n, fpp): word count and k, as printed by
  // real Guava (writeTo header) for these arguments.
  struct Case {
    uint64_t n;
    double p;
    uint64_t words;
    int k;
  };
  for (const Case& c : {Case{1000, 0.03, 115, 5}, Case{1000, 0.01, 150, 7}, Case{0, 0.03, 1, 5},
                        Case{1'000'000, 0.01, 149767, 7}, Case{100, 0.000001, 45, 20}}) {
    const auto f = BloomFilter::create(c.n, c.p);
    const int64_t n = c.n ? static_cast<int64_t>(c.n) : 1;
    const auto bits = static_cast<int64_t>(-static_cast<double>(n) * std::log(c.p) / (std::log(2.0) * std::log(2.0)));
    EXPECT_EQ(f.bit_size(), static_cast<uint64_t>((bits + 63) / 64 * 64)) << c.n << " " << c.p;
    EXPECT_EQ(f.bit_size() / 64, c.words) << c.n << " " << c.p;
    EXPECT_EQ(f.num_hashes(), c.k) << c.n << " " << c.p;
  }
}

TEST(BloomFilter, RejectsBadArguments) {
  EXPECT_THROW(BloomFilter::create(10, 0.0), Error);
  EXPECT_THROW(BloomFilter::create(10, 1.0), Error);
  EXPECT_THROW(BloomFilter::create(10, -0.5), Error);
  EXPECT_THROW(BloomFilter::create(10, std::nan("")), Error);
  EXPECT_THROW(BloomFilter::create(1, 0.99), Error);  // zero bits, as Guava refuses
  try {
    BloomFilter::create(10, 1e-300);  // needs > 255 hash functions
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
  }
}

TEST(BloomFilter, NoFalseNegativesAndFppWithinBound) {
  // The same keys for both strategies.
  const auto keys = test::random_keys(100'000, 11);
  std::vector<std::string> absent = test::random_keys(1'000'000, 12, 30);
  {
    const std::unordered_set<std::string> present(keys.begin(), keys.end());
    std::erase_if(absent, [&](const std::string& k) { return present.count(k) > 0; });
  }
  for (auto strategy : {GuavaStrategy::murmur128_mitz_64, GuavaStrategy::murmur128_mitz_32}) {
    auto f = BloomFilter::create(keys.size(), 0.01, strategy);
    for (const auto& k : keys) f.insert(k);
    for (const auto& k : keys) ASSERT_TRUE(f.contains(k));
    size_t fp = 0;
    for (const auto& k : absent) fp += f.contains(k);
    const double rate = static_cast<double>(fp) / static_cast<double>(absent.size());
    EXPECT_LT(rate, 0.0115) << "strategy " << static_cast<int>(strategy);
    EXPECT_GT(rate, 0.005);
    EXPECT_NEAR(static_cast<double>(f.approximate_element_count()), 100'000, 2'000);
    EXPECT_NEAR(f.expected_fpp(), 0.01, 0.002);
  }
}

TEST(BloomFilter, U64KeysAreTheirLittleEndianBytes) {
  auto f = BloomFilter::create(1000, 0.01);
  f.insert(uint64_t{0x0102030405060708ULL});
  const std::byte le[8] = {std::byte{8}, std::byte{7}, std::byte{6}, std::byte{5},
                           std::byte{4}, std::byte{3}, std::byte{2}, std::byte{1}};
  EXPECT_TRUE(f.contains(Bytes(le)));
  EXPECT_FALSE(f.insert(Bytes(le)));  // nothing changes: the same key
}

TEST(BloomFilter, ContainsManyAgreesWithContains) {
  const auto keys = test::random_keys(20'000, 3);
  auto f = BloomFilter::create(10'000, 0.05);
  for (size_t i = 0; i < keys.size(); i += 2) f.insert(keys[i]);
  // Both paths: key by key (a filter this small) and prefetching (large filters).
  for (const bool prefetched : {false, true}) {
    std::unique_ptr<bool[]> out(new bool[keys.size()]);
    const std::span<bool> o(out.get(), keys.size());
    const size_t found = prefetched ? f.contains_many_prefetched(keys, o) : f.contains_many(keys, o);
    size_t expect = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      ASSERT_EQ(out[i], f.contains(keys[i])) << i << (prefetched ? " prefetched" : "");
      expect += out[i];
    }
    EXPECT_EQ(found, expect);
  }
  std::vector<uint64_t> ints = {1, 2, 3};
  bool o3[3];
  f.insert(uint64_t{2});
  f.contains_many(ints, std::span<bool>(o3, 3));
  EXPECT_TRUE(o3[1]);
}

TEST(BloomFilter, ContainsManyPrefetchesAboveTwiceTheL2Cache) {
  // The prefetching path from twice one core's L2 cache: not only from the last-level
  // cache's size (a filter below the LLC answered key by key lost to it), and not from
  // L2 itself (between L2 and twice L2 it lost to a loop of contains, docs/decisions/0046).
  const size_t l2 = detail::l2_cache_bytes();
  ASSERT_GE(l2, size_t{16} << 10);
  ASSERT_LE(l2, detail::last_level_cache_bytes());
  EXPECT_FALSE(BloomFilter(l2 / 8, 7).prefetches_batches());
  EXPECT_FALSE(BloomFilter(l2 / 8 + 1, 7).prefetches_batches());
  EXPECT_FALSE(BloomFilter(l2 / 4, 7).prefetches_batches());
  EXPECT_TRUE(BloomFilter(l2 / 4 + 1, 7).prefetches_batches());
  const BloomFilter big(uint64_t{12} << 17, 7);  // 12 MiB
  EXPECT_TRUE(big.prefetches_batches());
  // Each path contains_many takes answers as contains, with no false negatives.
  for (const uint64_t words : {l2 / 4, l2 / 4 + 1}) {
    BloomFilter f(words, 7);
    const auto keys = test::random_keys(40'000, 9);
    for (size_t i = 0; i < keys.size(); i += 2) f.insert(keys[i]);
    std::unique_ptr<bool[]> out(new bool[keys.size()]);
    const size_t found = f.contains_many(keys, std::span<bool>(out.get(), keys.size()));
    size_t expect = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      ASSERT_EQ(out[i], f.contains(keys[i])) << i;
      if (i % 2 == 0) {
        ASSERT_TRUE(out[i]) << i;
      }
      expect += out[i];
    }
    EXPECT_EQ(found, expect);
  }
}

TEST(BloomFilter, MergeIsUnionAndRefusesIncompatible) {
  auto a = BloomFilter::create(1000, 0.01), b = BloomFilter::create(1000, 0.01);
  a.insert("left");
  b.insert("right");
  a.merge(b);
  EXPECT_TRUE(a.contains("left"));
  EXPECT_TRUE(a.contains("right"));
  auto c = BloomFilter::create(2000, 0.01);
  try {
    a.merge(c);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::incompatible);
  }
  auto d = BloomFilter::create(1000, 0.01, GuavaStrategy::murmur128_mitz_32);
  EXPECT_THROW(a.insert_all(d), Error);
}

TEST(BloomFilter, GuavaStreamAndContainerRoundTrip) {
  auto f = BloomFilter::create(500, 0.02);
  for (int i = 0; i < 300; ++i) f.insert(std::to_string(i));
  const auto g = f.to_guava();
  EXPECT_EQ(g.size(), 6 + f.bit_size() / 8);
  EXPECT_EQ(g[0], std::byte{1});
  EXPECT_TRUE(BloomFilter::looks_like_guava(g));
  EXPECT_EQ(BloomFilter::from_guava(g), f);
  EXPECT_EQ(BloomFilter::load(f.serialize()), f);
  // Every truncation and a few corruptions of the Guava stream are typed errors.
  for (size_t n = 0; n < g.size(); n += 7) EXPECT_THROW(BloomFilter::from_guava(std::span(g).first(n)), Error);
  auto bad = g;
  bad[0] = std::byte{5};
  EXPECT_THROW(BloomFilter::from_guava(bad), Error);
  bad = g;
  bad[1] = std::byte{0};
  EXPECT_THROW(BloomFilter::from_guava(bad), Error);
  bad = g;
  bad[2] = std::byte{0x80};  // negative int
  EXPECT_THROW(BloomFilter::from_guava(bad), Error);
}

}  // namespace
}  // namespace amq
