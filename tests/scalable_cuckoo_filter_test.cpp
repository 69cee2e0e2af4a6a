#include "amq/scalable_cuckoo_filter.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <unordered_set>

#include "amq/error.hpp"
#include "amq/format.hpp"
#include "multiset_model.hpp"
#include "test_util.hpp"

namespace amq {
namespace {

using test::code_of;

TEST(ScalableCuckooFilter, GrowsAndKeepsTheCompoundRate) {
  for (double fpp : {0.01, 0.001}) {
    ScalableCuckooFilter f({.initial_capacity = 1000, .fpp = fpp});
    const auto keys = test::random_keys(150'000, 31);
    for (const auto& k : keys) ASSERT_EQ(f.insert(k), CuckooStatus::inserted);
    EXPECT_GE(f.num_levels(), 7u);
    EXPECT_EQ(f.size(), keys.size());
    for (const auto& k : keys) ASSERT_TRUE(f.contains(k));
    // Longer fingerprints level by level.
    for (size_t l = 1; l < f.num_levels(); ++l)
      EXPECT_EQ(f.level_fingerprint_bits(l), f.level_fingerprint_bits(l - 1) + 1);
    EXPECT_LE(f.fpp_bound(), fpp);
    EXPECT_LE(f.expected_fpp(), f.fpp_bound());
    const std::unordered_set<std::string> present(keys.begin(), keys.end());
    const auto absent = test::random_keys(300'000, 32, 30);
    size_t fp = 0, n = 0;
    for (const auto& k : absent) {
      if (present.count(k)) continue;
      ++n;
      fp += f.contains(k);
    }
    const double rate = static_cast<double>(fp) / static_cast<double>(n);
    EXPECT_LT(rate, fpp) << fpp;
    EXPECT_NEAR(rate, f.expected_fpp(), f.expected_fpp() * 0.25 + 2e-5) << fpp;
  }
}

TEST(ScalableCuckooFilter, RejectsBadParameters) {
  EXPECT_EQ(code_of([] { ScalableCuckooFilter({.initial_capacity = 0}); }), Errc::invalid_argument);
  EXPECT_EQ(code_of([] { ScalableCuckooFilter({.fpp = 0}); }), Errc::invalid_argument);
  EXPECT_EQ(code_of([] { ScalableCuckooFilter({.fpp = 1e-12}); }), Errc::invalid_argument);
  EXPECT_EQ(code_of([] { ScalableCuckooFilter({.bucket_size = 3}); }), Errc::invalid_argument);
  EXPECT_EQ(code_of([] { ScalableCuckooFilter({.growth = 0}); }), Errc::invalid_argument);
  EXPECT_EQ(code_of([] { ScalableCuckooFilter({.growth = 17}); }), Errc::invalid_argument);
  EXPECT_EQ(code_of([] { ScalableCuckooFilter({.fingerprint_bits = 33}); }), Errc::invalid_argument);
  EXPECT_EQ(code_of([] { ScalableCuckooFilter({.fingerprint_bits = 3}); }), Errc::invalid_argument);
}

TEST(ScalableCuckooFilter, LevelBudgetIsFiniteAndFullChangesNothing) {
  // No growth and 28-bit level-0 fingerprints: levels of 28..32 bits, then the
  // budget 4b / 2^28 is spent and insert says full.
  ScalableCuckooFilter f({.initial_capacity = 50, .bucket_size = 4, .growth = 1, .fingerprint_bits = 28});
  EXPECT_DOUBLE_EQ(f.params().fpp, 16.0 / std::ldexp(1.0, 28));
  uint64_t i = 0;
  while (f.insert(uint64_t{i}) == CuckooStatus::inserted) ++i;
  EXPECT_EQ(f.num_levels(), f.max_levels());
  EXPECT_EQ(f.max_levels(), 6u);  // 28, 29, 30, 31, 32, 32: sum 2b (1/2^28 + ... ) <= 4b / 2^28
  EXPECT_LE(f.fpp_bound(), f.params().fpp);
  const auto before = f.serialize();
  EXPECT_EQ(f.insert(uint64_t{i + 1}), CuckooStatus::full);
  EXPECT_EQ(f.serialize(), before);
  for (uint64_t k = 0; k < i; ++k) ASSERT_TRUE(f.contains(uint64_t{k}));
}

TEST(ScalableCuckooFilter, OneKeyManyTimes) {
  ScalableCuckooFilter f({.initial_capacity = 100, .bucket_size = 4});
  for (int i = 0; i < 8; ++i) ASSERT_EQ(f.insert("same"), CuckooStatus::inserted);
  EXPECT_EQ(f.count("same"), 8u);
  // Copies stay with the level that holds the key: 2b of them, then full.
  EXPECT_EQ(f.insert("same"), CuckooStatus::full);
  EXPECT_EQ(f.num_levels(), 1u);
  EXPECT_EQ(f.insert_unique("same"), CuckooStatus::present);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(f.erase("same"));
  EXPECT_FALSE(f.contains("same"));
  EXPECT_FALSE(f.erase("same"));
}

TEST(ScalableCuckooFilter, DeleteAndReinsertAcrossLevelsKeepsEveryKey) {
  // seiflotfy/cuckoofilter's scalable filter erased from the first level that matched,
  // which could be another key's fingerprint in an older level: false negatives after
  // delete and re-insert. Short fingerprints make such collisions common here.
  for (uint32_t f0 : {6u, 8u}) {
    ScalableCuckooFilter f({.initial_capacity = 64, .bucket_size = 4, .growth = 2, .fingerprint_bits = f0});
    std::vector<uint64_t> keys;
    for (uint64_t k = 0; k < 3000; ++k)
      if (f.insert(k) == CuckooStatus::inserted) keys.push_back(k);
    ASSERT_GT(keys.size(), 2500u);
    ASSERT_GT(f.num_levels(), 3u);
    for (int round = 0; round < 3; ++round) {
      // Erase every other key, check the rest, re-insert, check all.
      for (size_t i = round % 2; i < keys.size(); i += 2) ASSERT_TRUE(f.erase(keys[i])) << keys[i];
      for (size_t i = 1 - round % 2; i < keys.size(); i += 2) ASSERT_TRUE(f.contains(keys[i])) << keys[i];
      for (size_t i = round % 2; i < keys.size(); i += 2) ASSERT_EQ(f.insert(keys[i]), CuckooStatus::inserted);
      for (uint64_t k : keys) ASSERT_TRUE(f.contains(k)) << k << " round " << round;
    }
    EXPECT_EQ(f.size(), keys.size());
  }
}

TEST(ScalableCuckooFilter, SeiflotfyIssue50Scenario) {
  // Insert "exist" keys, then "removed" keys, delete the removed ones, insert them
  // again: no "exist" key may be reported absent (seiflotfy's filter lost ~1%).
  for (uint32_t f0 : {0u, 8u}) {
    ScalableCuckooFilter f({.initial_capacity = 1000, .fpp = 0.01, .fingerprint_bits = f0});
    std::vector<std::string> exist, removed;
    for (int i = 0; i < 15000; ++i) {
      exist.push_back(std::to_string(i) + "-" + std::to_string(i * 7919));
      removed.push_back(exist.back() + "to-removed");
    }
    for (const auto& k : exist) ASSERT_EQ(f.insert(k), CuckooStatus::inserted);
    for (const auto& k : removed) ASSERT_EQ(f.insert(k), CuckooStatus::inserted);
    ASSERT_GT(f.num_levels(), 4u);
    for (const auto& k : removed) ASSERT_TRUE(f.erase(k));
    for (const auto& k : removed) ASSERT_EQ(f.insert(k), CuckooStatus::inserted);
    for (const auto& k : exist) ASSERT_TRUE(f.contains(k)) << k;
    for (const auto& k : removed) ASSERT_TRUE(f.contains(k)) << k;
    EXPECT_EQ(f.size(), 30000u);
  }
}

// Random insert / erase / contains / count against std::unordered_multiset. Erase
// is only asked for keys the multiset holds.
void property_run(ScalableCuckooParams p, uint64_t seed, int ops, uint64_t pool) {
  ScalableCuckooFilter f(p, Xxh3Hasher{.seed = seed});
  test::MultisetModel model;
  std::mt19937_64 rng(seed);
  auto check_key = [&](uint64_t k) {
    const uint64_t want = model.count(k);
    if (want) {
      ASSERT_TRUE(f.contains(k)) << "false negative for " << k;
    }
    ASSERT_GE(f.count(k), want) << k;
  };
  for (int op = 0; op < ops; ++op) {
    const unsigned what = rng() % 10;
    if (what < 5) {
      const uint64_t k = rng() % pool;
      const auto before = f.size();
      const CuckooStatus s = rng() % 4 ? f.insert(k) : f.insert_unique(k);
      if (s == CuckooStatus::inserted) {
        model.inserted(k);
      } else {
        ASSERT_EQ(f.size(), before);
        if (s == CuckooStatus::present) {
          ASSERT_TRUE(f.contains(k));
        }
      }
    } else if (what < 8 && !model.empty()) {
      const uint64_t k = model.pick(rng);
      ASSERT_TRUE(f.erase(k)) << k;
      model.erased_picked();
    } else {
      check_key(rng() % pool);
    }
    ASSERT_EQ(f.size(), model.total());
    if (op % 1009 == 0)
      for (uint64_t k : model.live()) check_key(k);
  }
  for (uint64_t k : model.live()) check_key(k);
}

TEST(ScalableCuckooFilter, PropertyAgainstMultiset) {
  property_run({.initial_capacity = 16, .bucket_size = 2, .growth = 3, .fingerprint_bits = 6}, 1, 30'000, 3000);
  property_run({.initial_capacity = 32, .bucket_size = 4, .growth = 2, .fingerprint_bits = 5}, 2, 30'000, 4000);
  property_run({.initial_capacity = 8, .bucket_size = 8, .growth = 2, .fingerprint_bits = 8}, 3, 30'000, 2000);
  property_run({.initial_capacity = 100, .fpp = 0.01, .bucket_size = 4}, 4, 30'000, 20'000);
  // A tiny key universe: many copies of each key, up to the 2b limit.
  property_run({.initial_capacity = 4, .bucket_size = 2, .growth = 2, .fingerprint_bits = 7}, 5, 20'000, 30);
}

// Both batch paths (by key in groups of 128 / levels keys; by level, newest first) give
// contains()'s answers, on batches whose length is not a multiple of either group, and
// contains_many takes the by-key path within the L2 cache and the by-level one above it.
template <class Key>
void expect_batches_agree(const ScalableCuckooFilter& f, const std::vector<Key>& keys) {
  std::unique_ptr<bool[]> out(new bool[keys.size()]);
  size_t expect = 0;
  for (const auto& k : keys) expect += f.contains(k);
  using Keys = std::span<const Key>;
  using Batch = size_t (*)(const ScalableCuckooFilter&, Keys, std::span<bool>);
  const Batch paths[] = {
      [](const ScalableCuckooFilter& g, Keys ks, std::span<bool> o) { return g.contains_many(ks, o); },
      [](const ScalableCuckooFilter& g, Keys ks, std::span<bool> o) { return g.contains_many_by_key(ks, o); },
      [](const ScalableCuckooFilter& g, Keys ks, std::span<bool> o) { return g.contains_many_by_level(ks, o); }};
  for (size_t path = 0; path < 3; ++path) {
    for (size_t len : {keys.size(), size_t{1}, size_t{37}}) {
      size_t found = 0, want = 0;
      for (size_t i = 0; i < keys.size(); i += len) {
        const size_t m = std::min(len, keys.size() - i);
        for (size_t j = i; j < i + m; ++j) out[j] = !f.contains(keys[j]);  // stale answers to overwrite
        found += paths[path](f, std::span(keys).subspan(i, m), std::span<bool>(out.get() + i, m));
        for (size_t j = i; j < i + m; ++j) {
          ASSERT_EQ(out[j], f.contains(keys[j])) << "path " << path << " batch " << len << " key " << j;
          want += out[j];
        }
      }
      EXPECT_EQ(found, want) << "path " << path;
      EXPECT_EQ(found, expect) << "path " << path;
    }
  }
}

TEST(ScalableCuckooFilter, ContainsManyAgreesWithContains) {
  ScalableCuckooFilter f({.initial_capacity = 500, .fpp = 0.05});
  const auto keys = test::random_keys(20'000, 8);
  for (size_t i = 0; i < keys.size(); i += 2) ASSERT_EQ(f.insert(keys[i]), CuckooStatus::inserted);
  ASSERT_GT(f.num_levels(), 3u);
  ASSERT_LE(f.size_in_bytes(), detail::l2_cache_bytes());
  EXPECT_FALSE(f.batches_by_level());
  expect_batches_agree(f, keys);
}

TEST(ScalableCuckooFilter, ContainsManyWithManyLevels) {
  // 128 / levels keys a group: with 20+ levels a group is a few keys.
  ScalableCuckooFilter f({.initial_capacity = 4, .bucket_size = 2, .growth = 1, .fingerprint_bits = 12});
  const auto keys = test::random_keys(600, 12);
  for (size_t i = 0; i < keys.size(); i += 2)
    if (f.insert(keys[i]) != CuckooStatus::inserted) break;  // full: at its last level
  ASSERT_GT(f.num_levels(), 20u);
  expect_batches_agree(f, keys);
}

TEST(ScalableCuckooFilter, ContainsManyBatchesByLevelAboveTheL2Cache) {
  // 64-bit keys at fpp 1e-5: fingerprints of 20+ bits, so L2 / 2 keys fill more than L2.
  const uint64_t n = detail::l2_cache_bytes() / 2;
  ScalableCuckooFilter f({.initial_capacity = n / 4, .fpp = 1e-5});
  std::vector<uint64_t> keys(n + 10'000);
  std::mt19937_64 rng(21);
  for (uint64_t& k : keys) k = rng();
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(f.insert(keys[i]), CuckooStatus::inserted);
  ASSERT_GT(f.size_in_bytes(), detail::l2_cache_bytes());
  EXPECT_TRUE(f.batches_by_level());
  expect_batches_agree(f, std::vector<uint64_t>(keys.end() - 20'000, keys.end()));
}

TEST(ScalableCuckooFilter, SerializationRoundTripAndStrictLoading) {
  ScalableCuckooFilter f({.initial_capacity = 100, .fpp = 0.01, .bucket_size = 2, .growth = 3},
                         Xxh3Hasher{.seed = 77});
  for (int i = 0; i < 2000; ++i) f.insert(std::to_string(i));
  ASSERT_GT(f.num_levels(), 3u);
  const auto good = f.serialize();
  const auto back = ScalableCuckooFilter::load(good);
  EXPECT_EQ(back, f);
  EXPECT_EQ(back.serialize(), good);
  for (int i = 0; i < 2000; ++i) ASSERT_TRUE(back.contains(std::to_string(i)));
  {
    auto g = ScalableCuckooFilter::load(good);  // stays usable: grows further
    for (int i = 2000; i < 6000; ++i) ASSERT_EQ(g.insert(std::to_string(i)), CuckooStatus::inserted);
    EXPECT_GT(g.num_levels(), f.num_levels());
  }
  for (size_t n = 0; n < good.size(); n += 11)
    EXPECT_THROW(ScalableCuckooFilter::load(std::span(good).first(n)), Error) << n;
  auto flipped = good;
  flipped[good.size() / 2] ^= std::byte{4};
  EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(flipped); }), Errc::checksum_mismatch);

  const Container c = parse_container(good);
  const std::vector<std::byte> params(c.params.begin(), c.params.end());
  const std::vector<std::byte> payload(c.payload.begin(), c.payload.end());
  auto file = [&](const std::vector<std::byte>& p, const std::vector<std::byte>& pl) {
    return write_container(Kind::scalable_cuckoo, p, pl);
  };
  EXPECT_EQ(ScalableCuckooFilter::load(file(params, payload)), f);
  auto with = [&](size_t at, uint64_t v, size_t width) {
    auto p = params;
    std::memcpy(p.data() + at, &v, width);
    return file(p, payload);
  };
  // hasher u32 @0, b @4, f0 @8, levels @12, seed u64 @16, n0 @24, growth u32 @32, reserved @36, fpp f64 @40,
  // then per level: f u32, reserved u32, m u64, count u64 (24 bytes) from @48.
  EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(with(0, 2, 4)); }), Errc::incompatible);
  EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(with(4, 4, 4)); }), Errc::corrupt);
  EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(with(4, 7, 4)); }), Errc::corrupt);
  EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(with(8, 2, 4)); }), Errc::corrupt);
  EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(with(12, 0, 4)); }), Errc::corrupt);
  EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(with(12, 1000, 4)); }), Errc::corrupt);
  EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(with(12, f.num_levels() + 1, 4)); }), Errc::corrupt);
  EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(with(24, 0, 8)); }), Errc::corrupt);
  EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(with(24, uint64_t{1} << 39, 8)); }), Errc::corrupt);
  EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(with(32, 17, 4)); }), Errc::corrupt);
  EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(with(32, 2, 4)); }), Errc::corrupt);  // other level sizes
  EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(with(36, 1, 4)); }), Errc::corrupt);
  EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(with(40, std::bit_cast<uint64_t>(2.0), 8)); }), Errc::corrupt);
  EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(with(48, 13, 4)); }), Errc::corrupt);     // level 0 f
  EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(with(52, 1, 4)); }), Errc::corrupt);      // reserved
  EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(with(56, 1 << 20, 8)); }), Errc::corrupt);  // m
  EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(with(64, f.level_size(0) + 1, 8)); }), Errc::corrupt);
  EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(with(64, ~uint64_t{0}, 8)); }), Errc::corrupt);
  {
    auto pl = payload;
    pl.resize(pl.size() - 8);
    EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(file(params, pl)); }), Errc::corrupt);
    pl = payload;
    pl.back() = std::byte{1};  // padding or a slot the count does not include
    EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(file(params, pl)); }), Errc::corrupt);
  }
  EXPECT_EQ(code_of([&] { ScalableCuckooFilter::load(write_container(Kind::cuckoo, params, payload)); }),
            Errc::wrong_kind);
}

}  // namespace
}  // namespace amq
