#include "amq/cuckoo_filter.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <unordered_set>

#include "amq/detail/byte_io.hpp"
#include "amq/detail/prefetch.hpp"
#include "amq/error.hpp"
#include "amq/format.hpp"
#include "multiset_model.hpp"
#include "test_util.hpp"

namespace amq {
namespace detail {
struct CuckooFilterTestPeer {
  template <class H>
  static const CuckooTable& table(const BasicCuckooFilter<H>& f) {
    return f.table_;
  }
};
}  // namespace detail
namespace {

using detail::CuckooTable;

using test::code_of;

TEST(CuckooTable, AlternateBucketIsAnInvolutionWithoutFixedPoints) {
  // Even sizes, powers of two and not, small and large.
  for (uint64_t m : {2, 4, 6, 10, 1000, 1024, 3002, 999'998}) {
    const CuckooTable t(m, 12, 4);
    std::mt19937_64 rng(m);
    for (int r = 0; r < 2000; ++r) {
      const uint64_t i = rng() % m;
      const uint32_t fp = static_cast<uint32_t>(rng() % 4095) + 1;
      const uint64_t a = t.alt(i, fp);
      ASSERT_LT(a, m);
      ASSERT_NE(a, i) << "m=" << m << " i=" << i << " fp=" << fp;
      ASSERT_EQ(t.alt(a, fp), i) << "m=" << m << " i=" << i << " fp=" << fp;
    }
  }
  // Exhaustively on a small odd-ish size: every bucket, every 6-bit fingerprint.
  const CuckooTable t(14, 6, 2);
  std::map<uint64_t, int> hits;
  for (uint64_t i = 0; i < 14; ++i)
    for (uint32_t fp = 1; fp < 64; ++fp) {
      ASSERT_NE(t.alt(i, fp), i);
      ASSERT_EQ(t.alt(t.alt(i, fp), fp), i);
      ++hits[t.alt(i, fp)];
    }
  EXPECT_EQ(hits.size(), 14u);  // every bucket is someone's alternate
}

TEST(CuckooTable, NestedAlternateCommutesWithProjection) {
  // The scalable filter's levels: m_l = m_0 g^l, alternate from the low alt_bits of
  // the fingerprint. alt is an involution without fixed points, and reducing bucket
  // numbers mod m_k (k < l) maps level l's pair onto level k's.
  std::mt19937_64 rng(3);
  for (uint64_t m0 : {2, 6, 1000, 1026})
    for (uint64_t g : {1, 2, 3}) {
      const CuckooTable small(m0 * g, 12, 4, 0, 8), big(m0 * g * g * g, 14, 4, 0, 8);
      for (int r = 0; r < 3000; ++r) {
        const uint64_t i = rng() % big.num_buckets();
        const uint32_t fp = static_cast<uint32_t>(rng() % 16383) + 1;
        const uint64_t a = big.alt(i, fp);
        ASSERT_NE(a, i);
        ASSERT_EQ(big.alt(a, fp), i);
        const uint32_t fp_small = (fp & 4095) ? (fp & 4095) : 1;  // the same key's shorter fingerprint
        ASSERT_EQ(a % small.num_buckets(), small.alt(i % small.num_buckets(), fp_small))
            << m0 << " " << g << " " << i << " " << fp;
        // G computed once from the hash (as ScalableCuckooFilter does) gives every
        // level's alternate bucket, also when the hash's low bits are 0.
        const uint64_t h = r % 50 == 0 ? rng() << 14 : rng();
        const uint64_t G = CuckooTable::nested_g(h, 8);
        ASSERT_EQ(big.alt_nested(i, G), big.alt(i, big.fingerprint(h)));
        ASSERT_EQ(small.alt_nested(i % small.num_buckets(), G),
                  small.alt(i % small.num_buckets(), small.fingerprint(h)));
      }
    }
}

TEST(CuckooTable, FingerprintAndIndexUseIndependentBits) {
  const CuckooTable t(1'000'002, 12, 4);
  // Same high half, different low bits: same bucket, different fingerprints.
  const uint64_t hi = uint64_t{0x12345678} << 32;
  EXPECT_EQ(t.index(hi | 5), t.index(hi | 4000));
  EXPECT_NE(t.fingerprint(hi | 5), t.fingerprint(hi | 4000));
  // Same low bits, different high halves: same fingerprint, buckets spread.
  std::unordered_set<uint64_t> buckets;
  for (uint64_t k = 0; k < 1000; ++k) {
    const uint64_t h = ((k * 0x9E3779B97F4A7C15ULL) & 0xffffffff00000000ULL) | 77;
    EXPECT_EQ(t.fingerprint(h), 77u);
    buckets.insert(t.index(h));
  }
  EXPECT_GT(buckets.size(), 990u);
  EXPECT_EQ(t.fingerprint(uint64_t{1} << 40), 1u);  // low bits 0 -> fingerprint 1, never the empty mark
}

TEST(CuckooTable, PackedSlotsRoundTripForEveryGeometry) {
  std::mt19937_64 rng(5);
  for (uint32_t f = 4; f <= 32; ++f)
    for (uint32_t b : {2u, 4u, 8u}) {
      CuckooTable t(34, f, b);
      std::vector<uint32_t> want(34 * b);
      const uint32_t mask = f == 32 ? 0xffffffffu : (1u << f) - 1;
      for (int pass = 0; pass < 3; ++pass) {
        for (uint64_t i = 0; i < 34; ++i)
          for (uint32_t s = 0; s < b; ++s) {
            const uint32_t v = static_cast<uint32_t>(rng()) & mask;
            t.set(i, s, v);
            want[i * b + s] = v;
          }
        for (uint64_t i = 0; i < 34; ++i)
          for (uint32_t s = 0; s < b; ++s) ASSERT_EQ(t.get(i, s), want[i * b + s]) << f << " " << b;
        // The SWAR probe (fast path or generic) agrees with a slot scan, for present
        // and absent values.
        for (uint64_t i = 0; i < 34; ++i) {
          for (uint32_t s = 0; s < b; ++s) ASSERT_TRUE((t.bucket_has<0, 0>(i, want[i * b + s]))) << f << " " << b;
          for (int r = 0; r < 20; ++r) {
            const uint32_t v = static_cast<uint32_t>(rng()) & mask;
            ASSERT_EQ((t.bucket_has<0, 0>(i, v)), t.find(i, v) >= 0) << f << " " << b << " " << v;
          }
        }
      }
    }
}

TEST(CuckooTable, FastPathsAgreeWithGenericProbe) {
  // contains_hash (one- or two-load windows where the geometry allows, the chunked
  // probe elsewhere) against the reference probe and an exact slot scan, for every
  // geometry. Short fingerprints put fp in neighbouring buckets' slots often, which
  // the unmasked window loads must ignore.
  std::mt19937_64 rng(6);
  using Path = CuckooTable::Path;
  for (uint32_t f = 4; f <= 32; ++f)
    for (uint32_t b : {2u, 4u, 8u}) {
      CuckooTable t(100, f, b);
      const uint32_t bits = f * b;
      const Path want = bits % 8 == 0 && bits <= 64 ? Path::byte_window
                        : bits + 8 - std::gcd(bits, 8u) <= 64 ? Path::bit_window
                        : b == 8 && f <= 16             ? Path::split_window
                                                        : Path::generic;
      EXPECT_EQ(t.path(), want) << f << " " << b;
      if (f == 8 || f == 12 || f == 16) {
        EXPECT_NE(t.path(), Path::generic) << f << " " << b;
      }
      const uint32_t mask = f == 32 ? 0xffffffffu : (1u << f) - 1;
      for (uint64_t i = 0; i < 100; ++i)
        for (uint32_t s = 0; s < b; ++s)
          if (rng() % 3) t.set(i, s, static_cast<uint32_t>(rng()) & mask);
      for (int r = 0; r < 4000; ++r) {
        const uint64_t h = rng();
        const bool generic = t.contains_fp<0, 0>(t.index(h), t.fingerprint(h));
        ASSERT_EQ(t.contains_hash(h), generic) << f << " " << b;
        ASSERT_EQ(generic, t.count_hash(h) > 0) << f << " " << b;
      }
      // Every stored fingerprint is found from both of its buckets.
      for (uint64_t i = 0; i < 100; ++i)
        for (uint32_t s = 0; s < b; ++s) {
          const uint32_t fp = t.get(i, s);
          if (fp == 0) continue;
          ASSERT_TRUE(t.contains_at(i, fp)) << f << " " << b;
          ASSERT_TRUE(t.contains_at(t.alt(i, fp), fp)) << f << " " << b;
        }
    }
}

TEST(CuckooFilter, ChoosesParametersAndSaysWhich) {
  const CuckooParams p = choose_cuckoo_params(10'000'000, 0.002);
  EXPECT_EQ(p.fingerprint_bits, 12u);
  EXPECT_EQ(p.bucket_size, 4u);
  EXPECT_LE(p.fpp_bound, 0.002);
  EXPECT_LE(12.0 * 4 * static_cast<double>(p.num_buckets) / 1e7, 12.8);  // bits per key at capacity
  for (double fpp : {0.5, 0.1, 0.03, 0.01, 1e-3, 1e-4, 1e-6, 1e-8}) {
    const auto f = CuckooFilter::create(50'000, fpp);
    EXPECT_LE(f.fpp_bound(), fpp) << fpp;
    EXPECT_GE(static_cast<double>(f.slots()) * CuckooTable::design_load(f.bucket_size(), f.fingerprint_bits()),
              50'000.0)
        << fpp;
    EXPECT_EQ(f.num_buckets() % 2, 0u);
  }
  EXPECT_EQ(code_of([] { (void)choose_cuckoo_params(10, 0.0); }), Errc::invalid_argument);
  EXPECT_EQ(code_of([] { (void)choose_cuckoo_params(10, 1.0); }), Errc::invalid_argument);
  EXPECT_EQ(code_of([] { (void)choose_cuckoo_params(10, std::nan("")); }), Errc::invalid_argument);
  EXPECT_EQ(code_of([] { (void)choose_cuckoo_params(10, 1e-12); }), Errc::invalid_argument);  // f > 32
  EXPECT_EQ(code_of([] { (void)choose_cuckoo_params(uint64_t{1} << 40, 0.01); }), Errc::too_large);
  EXPECT_EQ(code_of([] { CuckooFilter(100, 3, 4); }), Errc::invalid_argument);
  EXPECT_EQ(code_of([] { CuckooFilter(100, 33, 4); }), Errc::invalid_argument);
  EXPECT_EQ(code_of([] { CuckooFilter(100, 12, 3); }), Errc::invalid_argument);
  EXPECT_EQ(code_of([] { (void)CuckooFilter::with_buckets(7, 12, 4); }), Errc::invalid_argument);
  EXPECT_EQ(code_of([] { (void)CuckooFilter::with_buckets(0, 12, 4); }), Errc::invalid_argument);
}

TEST(CuckooFilter, NoFalseNegativesAndFppWithinBound) {
  // The same absent keys for both fingerprint sizes (each filter skips its own keys).
  const auto absent = test::random_keys(1'000'000, 107, 30);
  for (uint32_t f : {8u, 12u}) {
    const auto keys = test::random_keys(200'000, 21 + f);
    CuckooFilter cf(keys.size(), f, 4);
    for (const auto& k : keys) ASSERT_EQ(cf.insert(k), CuckooStatus::inserted);
    EXPECT_GT(cf.load_factor(), 0.9);
    for (const auto& k : keys) ASSERT_TRUE(cf.contains(k));
    const std::unordered_set<std::string> present(keys.begin(), keys.end());
    size_t fp = 0, n = absent.size();
    for (const auto& k : absent) {
      if (!cf.contains(k)) continue;
      // A positive answer: false unless the key is one of the filter's own (not counted).
      if (present.count(k))
        --n;
      else
        ++fp;
    }
    const double rate = static_cast<double>(fp) / static_cast<double>(n);
    // Bound 2b a / 2^f with 15% statistical slack at these sample sizes.
    const double expect = 2.0 * 4 * cf.load_factor() / std::ldexp(1.0, static_cast<int>(f));
    EXPECT_LT(rate, cf.fpp_bound()) << f;
    EXPECT_NEAR(rate, expect, expect * 0.15) << f;
    EXPECT_NEAR(cf.expected_fpp(), expect, expect * 0.03) << f;
  }
}

TEST(CuckooFilter, ReachesDesignLoadBeforeFirstFailure) {
  // Also the regression for seiflotfy/cuckoofilter's inserts failing at low load when
  // fingerprint and bucket came from correlated hash bits: sequential keys, tables of
  // powers of two and not, must still fill to the design load.
  // b = 4: >= 95% for the fast fingerprint sizes, table sizes that are not powers of two.
  struct Case {
    uint32_t b, f;
    uint64_t m;
    double load;
  };
  for (const Case& c : {Case{4, 12, 250'002, 0.95}, Case{4, 8, 65'538, 0.95}, Case{4, 16, 100'000, 0.95},
                        Case{4, 12, 1 << 16, 0.95}, Case{4, 13, 30'000, 0.95}, Case{2, 12, 100'000, 0.84},
                        Case{8, 12, 50'000, 0.97}}) {
    for (uint64_t seed = 0; seed < 2; ++seed) {
      auto cf = CuckooFilter::with_buckets(c.m, c.f, c.b, Xxh3Hasher{.seed = seed});
      uint64_t i = 0;
      while (cf.insert(uint64_t{i}) == CuckooStatus::inserted) ++i;
      EXPECT_GE(cf.load_factor(), c.load) << "b=" << c.b << " f=" << c.f << " m=" << c.m << " seed=" << seed;
      EXPECT_EQ(cf.size(), i);
    }
  }
  // Tiny tables fill completely: with two buckets every key may use every slot.
  for (uint32_t b : {2u, 4u, 8u}) {
    auto cf = CuckooFilter::with_buckets(2, 12, b);
    for (uint64_t i = 0; i < 2 * b; ++i) ASSERT_EQ(cf.insert(uint64_t{i}), CuckooStatus::inserted) << b;
    EXPECT_EQ(cf.insert(uint64_t{999}), CuckooStatus::full);
    EXPECT_EQ(cf.load_factor(), 1.0);
  }
}

TEST(CuckooFilter, FullInsertLosesNothingAndChangesNothing) {
  // seiflotfy/cuckoofilter: inserting into a full filter dropped the last evicted
  // fingerprint (an element already in the filter). Here the kick chain is undone.
  for (uint32_t b : {2u, 4u, 8u}) {
    auto cf = CuckooFilter::with_buckets(1002, 10, b);
    std::vector<uint64_t> in;
    uint64_t next = 0, failures = 0;
    while (failures < 50) {
      const auto before = cf.serialize();
      const uint64_t k = next++;
      if (cf.insert(k) == CuckooStatus::inserted) {
        in.push_back(k);
        continue;
      }
      ++failures;
      ASSERT_EQ(cf.serialize(), before) << "a failed insert changed the filter (b=" << b << ")";
      ASSERT_EQ(cf.size(), in.size());
    }
    for (uint64_t k : in) ASSERT_TRUE(cf.contains(k)) << k;
  }
}

TEST(CuckooFilter, OneKeyManyTimes) {
  for (uint32_t b : {2u, 4u, 8u}) {
    auto cf = CuckooFilter::create(10'000, 0.001);
    cf = CuckooFilter(10'000, 12, b);
    for (uint32_t i = 0; i < 2 * b; ++i) ASSERT_EQ(cf.insert("same"), CuckooStatus::inserted) << i;
    EXPECT_EQ(cf.count("same"), 2 * b);
    const auto before = cf.serialize();
    EXPECT_EQ(cf.insert("same"), CuckooStatus::full);  // the paper's limit: 2b copies
    EXPECT_EQ(cf.serialize(), before);
    EXPECT_EQ(cf.insert_unique("same"), CuckooStatus::present);
    for (uint32_t i = 0; i < 2 * b; ++i) {
      ASSERT_TRUE(cf.contains("same"));
      ASSERT_TRUE(cf.erase("same"));
      ASSERT_EQ(cf.count("same"), 2 * b - 1 - i);
    }
    EXPECT_FALSE(cf.contains("same"));
    EXPECT_FALSE(cf.erase("same"));
    EXPECT_TRUE(cf.empty());
    EXPECT_EQ(cf.insert_unique("same"), CuckooStatus::inserted);
    EXPECT_EQ(cf.insert_unique("same"), CuckooStatus::present);
    EXPECT_EQ(cf.count("same"), 1u);
  }
}

// Random insert / erase / contains / count against std::unordered_multiset, up to
// full. Erase is only asked for keys the multiset holds (erasing others may remove
// a colliding key's fingerprint, as documented).
void property_run(uint32_t f, uint32_t b, uint64_t m, uint64_t seed, int ops, bool exact_counts) {
  auto cf = CuckooFilter::with_buckets(m, f, b, Xxh3Hasher{.seed = seed});
  test::MultisetModel model;
  std::mt19937_64 rng(seed * 7 + f);
  const uint64_t pool = m * b;  // key universe: about the table's slots
  uint64_t fulls = 0;
  auto check_key = [&](uint64_t k) {
    const uint64_t want = model.count(k);
    if (want) {
      ASSERT_TRUE(cf.contains(k)) << "false negative for " << k;
    }
    const size_t c = cf.count(k);
    if (exact_counts) ASSERT_EQ(c, want) << k;
    else ASSERT_GE(c, want) << k;
  };
  for (int op = 0; op < ops; ++op) {
    const unsigned what = rng() % 10;
    if (what < 5) {  // insert: more inserts than erases, so the run reaches full
      const uint64_t k = rng() % pool;
      const auto before_size = cf.size();
      const CuckooStatus s = cf.insert(k);
      if (s == CuckooStatus::inserted) {
        model.inserted(k);
      } else {
        ASSERT_EQ(s, CuckooStatus::full);
        ASSERT_EQ(cf.size(), before_size);
        ++fulls;
      }
    } else if (what < 7 && !model.empty()) {  // erase a present key
      const uint64_t k = model.pick(rng);
      ASSERT_TRUE(cf.erase(k)) << k;
      model.erased_picked();
    } else {
      check_key(rng() % pool);
    }
    ASSERT_EQ(cf.size(), model.total()) << op;
    if (op % 997 == 0)
      for (uint64_t k : model.live()) check_key(k);
  }
  for (uint64_t k : model.live()) check_key(k);
  EXPECT_GT(fulls, 0u) << "the run should reach full (f=" << f << " b=" << b << ")";
}

TEST(CuckooFilter, PropertyAgainstMultiset) {
  // f = 32: collisions practically never happen, so counts must match exactly.
  property_run(32, 4, 250, 1, 40'000, true);
  property_run(32, 2, 300, 2, 40'000, true);
  property_run(32, 8, 100, 3, 40'000, true);
  // Short fingerprints: many collisions; no false negatives, counts never too low.
  for (uint32_t f : {4u, 5u, 8u, 12u, 16u})
    for (uint32_t b : {2u, 4u, 8u}) property_run(f, b, 128, 10 + f * b, 20'000, false);
}

// Builds a filter by a fixed recipe (inserts to `load` of its slots, erases every 7th
// key, re-inserts every 11th), reloads its file, and returns {XXH64 of the file,
// XXH64 of the reloaded filter's answers (contains, count) to inserted and random
// keys}. Also checks there, for the keys asked, no false negatives and that
// contains_many answers as contains.
std::pair<uint64_t, uint64_t> cuckoo_recipe_digest(CuckooFilter f, double load, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> keys;
  const uint64_t n = static_cast<uint64_t>(static_cast<double>(f.slots()) * load);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t k = rng();
    if (f.insert(k) == CuckooStatus::inserted) keys.push_back(k);
  }
  std::vector<bool> erased(keys.size());
  for (size_t i = 0; i < keys.size(); i += 7) erased[i] = f.erase(keys[i]);
  for (size_t i = 0; i < keys.size(); i += 11)
    if (f.insert(keys[i]) == CuckooStatus::inserted) erased[i] = false;
  const std::vector<std::byte> file = f.serialize();
  const CuckooFilter g = CuckooFilter::load(file);
  std::vector<uint8_t> answers;
  std::vector<uint64_t> asked;
  for (int i = 0; i < 1 << 15; ++i) {
    const size_t at = i % 2 ? rng() % keys.size() : 0;
    const uint64_t k = i % 2 ? keys[at] : rng();
    const bool yes = g.contains(k);
    if (i % 2 && !erased[at]) {
      EXPECT_TRUE(yes) << k;
    }
    answers.push_back(static_cast<uint8_t>(yes | g.count(k) << 1));
    asked.push_back(k);
  }
  std::unique_ptr<bool[]> out(new bool[asked.size()]);
  g.contains_many(asked, std::span<bool>(out.get(), asked.size()));
  for (size_t i = 0; i < asked.size(); ++i) EXPECT_EQ(out[i], (answers[i] & 1) != 0) << i;
  return {XXH64(file.data(), file.size(), 0), XXH64(answers.data(), answers.size(), 0)};
}

TEST(CuckooFilter, SamePlacementAndAnswersAsBeforeTheFastPaths) {
  // Digests recorded with the code before the alternate-bucket array, the two-window
  // SSE test and the window-based free-slot search: the same recipe must write the same
  // bytes (so every slot is placed as before) and a file reloaded must answer the same.
  // The geometries cover the array (f <= 12 on a large table: the first three and
  // f = 8, b = 8) and its absence (b = 2 here, f = 16, a small table, f = 10).
  struct Case {
    uint64_t buckets;
    uint32_t f, b;
    uint64_t seed;
    double load;
    bool alt_table;
    uint64_t file, answers;
  };
  const Case cases[] = {
      {uint64_t{1} << 18, 12, 4, 7, 0.95, true, 0xe33ec8cbb072a45aULL, 0x48404772834be480ULL},
      {300002, 12, 4, 8, 0.94, true, 0x2a2075bd9bbdb174ULL, 0x0578783aaa5c42d4ULL},
      {60000, 8, 4, 9, 0.95, true, 0xaf8ff9faab47274aULL, 0xed405dcd6f0e7167ULL},
      {200000, 12, 2, 10, 0.84, false, 0xa10d886971d233c3ULL, 0xc43f144b5e512992ULL},
      {40000, 8, 8, 11, 0.97, true, 0xab7a359db240f091ULL, 0x77ac316c5ddfec3dULL},
      {20000, 16, 4, 12, 0.95, false, 0xce9f7969ee27ae36ULL, 0xe4e02e3a75b4cf08ULL},
      {1000, 12, 4, 13, 0.95, false, 0xcce757cbe31a1807ULL, 0x9427108207f3fe23ULL},
      {50000, 10, 4, 14, 0.94, false, 0xbb9f484e6ffb48e9ULL, 0xfe09794909f0939aULL},
  };
  for (const Case& c : cases) {
    const auto f = CuckooFilter::with_buckets(c.buckets, c.f, c.b, {.seed = c.seed});
    EXPECT_EQ(detail::CuckooFilterTestPeer::table(f).has_alt_table(), c.alt_table) << c.f << " " << c.b << " " << c.buckets;
    const auto [file, answers] = cuckoo_recipe_digest(f, c.load, 42);
    EXPECT_EQ(file, c.file) << c.f << " " << c.b << " " << c.buckets;
    EXPECT_EQ(answers, c.answers) << c.f << " " << c.b << " " << c.buckets;
  }
}

TEST(CuckooTable, AlternateArrayAgreesWithTheFormula) {
  // With the array, alt() must equal the plain formula for every fingerprint and a
  // spread of buckets, including the last ones (where H - i wraps).
  for (uint32_t f : {4u, 8u, 12u}) {
    const uint64_t m = (uint64_t{64} * 4 << f) / (4 * f / 8 + (4 * f % 8 != 0)) + 2;
    CuckooTable t(m + m % 2, f, 4);
    ASSERT_TRUE(t.has_alt_table()) << f;
    CuckooTable small(64, f, 4);
    ASSERT_FALSE(small.has_alt_table()) << f;
    for (uint32_t fp = 1; fp < (1u << f); ++fp)
      for (uint64_t i : {uint64_t{0}, uint64_t{1}, t.num_buckets() / 2, t.num_buckets() - 2, t.num_buckets() - 1}) {
        ASSERT_EQ(t.alt(i, fp), t.alt_plain(i, fp)) << f << " " << fp << " " << i;
        ASSERT_EQ(t.alt(t.alt(i, fp), fp), i);
      }
  }
  // Longer fingerprints, and the nested form, never take one.
  EXPECT_FALSE(CuckooTable(uint64_t{1} << 20, 13, 4).has_alt_table());
  EXPECT_FALSE(CuckooTable(uint64_t{1} << 20, 12, 4, 0, 12).has_alt_table());
}

TEST(CuckooFilter, ContainsManyPrefetchesOnlyAboveAQuarterOfTheLLC) {
  // Key by key up to a quarter of the last-level cache (the prefetching ring was up to
  // a third slower than a loop of contains there), the prefetching path above it; the
  // answers are the same.
  const uint64_t quarter = detail::last_level_cache_bytes() / 4;
  const uint64_t fit = quarter / 6 - (quarter / 6) % 2;  // f = 12, b = 4: 6-byte buckets
  EXPECT_FALSE(CuckooFilter::with_buckets(fit, 12, 4).prefetches_batches());
  auto big = CuckooFilter::with_buckets(fit + 2, 12, 4);
  EXPECT_TRUE(big.prefetches_batches());
  std::mt19937_64 rng(21);
  std::vector<uint64_t> keys(60'000);
  for (auto& k : keys) k = rng();
  for (size_t i = 0; i < keys.size(); i += 2) ASSERT_EQ(big.insert(keys[i]), CuckooStatus::inserted);
  std::unique_ptr<bool[]> out(new bool[keys.size()]);
  size_t expect = 0;
  const size_t found = big.contains_many(keys, std::span<bool>(out.get(), keys.size()));
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(out[i], big.contains(keys[i])) << i;
    if (i % 2 == 0) {
      ASSERT_TRUE(out[i]) << i;
    }
    expect += out[i];
  }
  EXPECT_EQ(found, expect);
}

TEST(CuckooFilter, ContainsManyAgreesWithContains) {
  for (uint32_t f : {5u, 8u, 12u, 16u, 21u, 32u})
    for (uint32_t b : {2u, 4u, 8u}) {
      const auto keys = test::random_keys(6'000, f * 10 + b);
      CuckooFilter cf(3'000, f, b);
      for (size_t i = 0; i < keys.size(); i += 2) ASSERT_EQ(cf.insert(keys[i]), CuckooStatus::inserted);
      std::unique_ptr<bool[]> out(new bool[keys.size()]);
      const size_t found = cf.contains_many(keys, std::span<bool>(out.get(), keys.size()));
      size_t expect = 0;
      for (size_t i = 0; i < keys.size(); ++i) {
        ASSERT_EQ(out[i], cf.contains(keys[i])) << i;
        if (i % 2 == 0) {
          ASSERT_TRUE(out[i]);
        }
        expect += out[i];
      }
      EXPECT_EQ(found, expect);
      // The prefetching path too (this small table is answered key by key).
      ASSERT_FALSE(cf.prefetches_batches());
      ASSERT_EQ(cf.contains_many_prefetched(keys, std::span<bool>(out.get(), keys.size())), expect);
      for (size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(out[i], cf.contains(keys[i])) << i;
      // Short batches (shorter than, equal to and just past the prefetch distance).
      for (size_t len : {0u, 1u, 15u, 16u, 17u, 33u}) {
        const std::span<const std::string> part(keys.data() + 7, len);
        size_t want = 0;
        for (const auto& k : part) want += cf.contains(k);
        ASSERT_EQ(cf.contains_many(part, std::span<bool>(out.get(), len)), want);
        for (size_t i = 0; i < len; ++i) ASSERT_EQ(out[i], cf.contains(part[i]));
        ASSERT_EQ(cf.contains_many_prefetched(part, std::span<bool>(out.get(), len)), want);
        for (size_t i = 0; i < len; ++i) ASSERT_EQ(out[i], cf.contains(part[i]));
      }
    }
}

TEST(CuckooFilter, U64KeysAreTheirLittleEndianBytesAndSeedsDiffer) {
  auto cf = CuckooFilter::create(1000, 0.001);
  cf.insert(uint64_t{0x0102030405060708ULL});
  const std::byte le[8] = {std::byte{8}, std::byte{7}, std::byte{6}, std::byte{5},
                           std::byte{4}, std::byte{3}, std::byte{2}, std::byte{1}};
  EXPECT_TRUE(cf.contains(Bytes(le)));
  EXPECT_EQ(cf.count(Bytes(le)), 1u);
  auto a = CuckooFilter::create(1000, 0.001, Xxh3Hasher{.seed = 1});
  auto b = CuckooFilter::create(1000, 0.001, Xxh3Hasher{.seed = 2});
  a.insert("k");
  b.insert("k");
  EXPECT_NE(a.serialize(), b.serialize());
  a.clear();
  EXPECT_TRUE(a.empty());
  EXPECT_FALSE(a.contains("k"));
}

std::vector<std::byte> rebuild(std::span<const std::byte> params, std::span<const std::byte> payload) {
  return write_container(Kind::cuckoo, params, payload);
}

TEST(CuckooFilter, SerializationRoundTripAndStrictLoading) {
  for (uint32_t f : {4u, 7u, 12u, 16u, 32u}) {
    CuckooFilter cf(500, f, 4, Xxh3Hasher{.seed = 9});
    for (int i = 0; i < 400; ++i) cf.insert(std::to_string(i));
    cf.insert("dup");
    cf.insert("dup");
    const auto bytes = cf.serialize();
    const auto back = CuckooFilter::load(bytes);
    EXPECT_EQ(back, cf);
    EXPECT_EQ(back.serialize(), bytes);
    EXPECT_EQ(back.count("dup"), cf.count("dup"));
    for (int i = 0; i < 400; ++i) ASSERT_TRUE(back.contains(std::to_string(i)));
  }
  CuckooFilter cf(100, 12, 4);
  for (int i = 0; i < 50; ++i) cf.insert(std::to_string(i));
  const auto good = cf.serialize();
  for (size_t n = 0; n < good.size(); n += 5) EXPECT_THROW(CuckooFilter::load(std::span(good).first(n)), Error) << n;
  auto flipped = good;
  flipped[40] ^= std::byte{1};
  EXPECT_EQ(code_of([&] { CuckooFilter::load(flipped); }), Errc::checksum_mismatch);

  const Container c = parse_container(good);
  const std::vector<std::byte> params(c.params.begin(), c.params.end());
  const std::vector<std::byte> payload(c.payload.begin(), c.payload.end());
  EXPECT_EQ(CuckooFilter::load(rebuild(params, payload)), cf);
  auto with = [&](size_t at, uint64_t v, size_t width) {
    auto p = params;
    std::memcpy(p.data() + at, &v, width);
    return rebuild(p, payload);
  };
  // params: hasher u32 @0, f u32 @4, b u32 @8, reserved u32 @12, seed u64 @16, m u64 @24, count u64 @32
  EXPECT_EQ(code_of([&] { CuckooFilter::load(with(0, 2, 4)); }), Errc::incompatible);
  EXPECT_EQ(code_of([&] { CuckooFilter::load(with(4, 3, 4)); }), Errc::corrupt);
  EXPECT_EQ(code_of([&] { CuckooFilter::load(with(4, 33, 4)); }), Errc::corrupt);
  EXPECT_EQ(code_of([&] { CuckooFilter::load(with(4, 13, 4)); }), Errc::corrupt);  // payload size no longer fits
  EXPECT_EQ(code_of([&] { CuckooFilter::load(with(8, 5, 4)); }), Errc::corrupt);
  EXPECT_EQ(code_of([&] { CuckooFilter::load(with(12, 1, 4)); }), Errc::corrupt);
  EXPECT_EQ(code_of([&] { CuckooFilter::load(with(24, cf.num_buckets() + 1, 8)); }), Errc::corrupt);
  EXPECT_EQ(code_of([&] { CuckooFilter::load(with(24, uint64_t{1} << 40, 8)); }), Errc::corrupt);  // huge, no alloc
  EXPECT_EQ(code_of([&] { CuckooFilter::load(with(32, 49, 8)); }), Errc::corrupt);
  EXPECT_EQ(code_of([&] { CuckooFilter::load(with(32, ~uint64_t{0}, 8)); }), Errc::corrupt);
  {
    auto p = params;
    p.push_back(std::byte{0});
    EXPECT_EQ(code_of([&] { CuckooFilter::load(rebuild(p, payload)); }), Errc::corrupt);
    p.resize(params.size() - 1);
    EXPECT_EQ(code_of([&] { CuckooFilter::load(rebuild(p, payload)); }), Errc::truncated);
  }
  {
    auto pl = payload;
    pl.pop_back();
    EXPECT_EQ(code_of([&] { CuckooFilter::load(rebuild(params, pl)); }), Errc::corrupt);
  }
  {
    // An occupied slot the header does not count.
    auto pl = payload;
    size_t zero = 0;
    while (pl[zero] != std::byte{0} || pl[zero + 1] != std::byte{0}) ++zero;
    pl[zero] = std::byte{0xff};
    EXPECT_EQ(code_of([&] { CuckooFilter::load(rebuild(params, pl)); }), Errc::corrupt);
  }
  {
    // Padding bits past the last slot: 26 buckets of 4 slots of 7 bits = 728 bits = 91 bytes exactly,
    // so use 5-bit fingerprints on 2 buckets of 2: 20 bits -> 3 bytes, 4 padding bits.
    auto small = CuckooFilter::with_buckets(2, 5, 2);
    const auto small_bytes = small.serialize();
    const Container sc = parse_container(small_bytes);
    std::vector<std::byte> pl(sc.payload.begin(), sc.payload.end());
    ASSERT_EQ(pl.size(), 3u);
    pl[2] = std::byte{0x10};
    EXPECT_EQ(code_of([&] { CuckooFilter::load(write_container(Kind::cuckoo, sc.params, pl)); }), Errc::corrupt);
  }
  EXPECT_EQ(code_of([&] { CuckooFilter::load(write_container(Kind::bloom, params, payload)); }), Errc::wrong_kind);
}

}  // namespace
}  // namespace amq
