// ExpandableFilter: property tests against std::unordered_multiset (inserts, erases
// and growth from capacity 1), the false-positive bound at each doubling, and the
// container format (round trip, every truncation, bit flips).
#include "amq/expandable_filter.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "amq/format.hpp"

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// 2^20 keys in Release, 2^16 under sanitizers; absent-key samples likewise.
constexpr uint64_t kMaxKeys = kSanitized ? (uint64_t{1} << 16) : (uint64_t{1} << 20);
constexpr uint64_t kAbsentSamples = kSanitized ? 100'000 : 1'000'000;

// Present keys have the top bit clear, absent keys set: never equal.
uint64_t present_key(std::mt19937_64& rng) { return rng() >> 1; }
uint64_t absent_key(std::mt19937_64& rng) { return rng() | (uint64_t{1} << 63); }

// Measures the false-positive rate on `n` absent keys (contains and contains_many agree).
double measure_fpp(const amq::ExpandableFilter& f, uint64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> keys(n);
  for (auto& k : keys) k = absent_key(rng);
  std::vector<char> out(n);
  std::span<bool> outs(reinterpret_cast<bool*>(out.data()), n);
  const size_t hits = f.contains_many(keys, outs);
  size_t single = 0;
  for (size_t i = 0; i < n; i += 97) {
    EXPECT_EQ(f.contains(keys[i]), outs[i]);
    single += 1;
  }
  return static_cast<double>(hits) / static_cast<double>(n);
}

// Sampling slack: the bound plus 4 standard deviations of a binomial at the bound.
double slack(double p, uint64_t n) { return p + 4 * std::sqrt(p * (1 - p) / static_cast<double>(n)) + 1.0 / n; }

class GrowthTest : public ::testing::TestWithParam<double> {};

TEST_P(GrowthTest, NoFalseNegativesAndRateWithinTargetAtEveryDoubling) {
  const double fpp = GetParam();
  amq::ExpandableFilter f(1, fpp, 7);
  std::mt19937_64 rng(42);
  std::vector<uint64_t> keys;
  keys.reserve(kMaxKeys);
  uint32_t level = f.level();
  while (keys.size() < kMaxKeys) {
    const uint64_t k = present_key(rng);
    f.insert(k);
    keys.push_back(k);
    if (f.level() != level) {
      level = f.level();
      ASSERT_LE(f.fpp_bound(), fpp) << "level " << level;
      // Every key inserted so far is found after the doubling.
      for (uint64_t x : keys) ASSERT_TRUE(f.contains(x)) << "level " << level;
      const double measured = measure_fpp(f, kAbsentSamples, level);
      EXPECT_LE(measured, slack(fpp, kAbsentSamples)) << "level " << level << " keys " << keys.size();
    }
  }
  EXPECT_GE(f.level(), kSanitized ? 14u : 18u);
  EXPECT_LE(f.stash_size(), 2u);  // distinct keys: kick chains that fail are rare
  EXPECT_EQ(f.size(), keys.size());
  for (uint64_t x : keys) ASSERT_TRUE(f.contains(x));
  const double measured = measure_fpp(f, kAbsentSamples, 99);
  EXPECT_LE(measured, slack(fpp, kAbsentSamples));
  EXPECT_LE(f.fpp_bound(), fpp);
}

INSTANTIATE_TEST_SUITE_P(Targets, GrowthTest, ::testing::Values(0.01, 0.002, 0.0001));

TEST(ExpandableFilterTest, InsertsAndErasesAgainstMultiset) {
  // Keys from a small universe, so copies and erases of repeated keys are common.
  amq::ExpandableFilter f(1, 0.01, 3);
  std::unordered_multiset<uint64_t> model;
  std::mt19937_64 rng(5);
  const uint64_t universe = kSanitized ? 20'000 : 200'000;
  const int steps = kSanitized ? 60'000 : 600'000;
  std::vector<uint64_t> inserted;
  for (int step = 0; step < steps; ++step) {
    const uint64_t r = rng() % 10;
    if (r < 6 || model.empty()) {
      const uint64_t k = rng() % universe;
      f.insert(k);
      model.insert(k);
      inserted.push_back(k);
    } else {
      // Erase a key that is in the model (one copy).
      const uint64_t k = inserted[rng() % inserted.size()];
      auto it = model.find(k);
      if (it == model.end()) continue;
      ASSERT_TRUE(f.erase(k));
      model.erase(it);
    }
    if (step % 50000 == 0) {
      for (uint64_t k : model) ASSERT_TRUE(f.contains(k)) << "step " << step;
    }
  }
  EXPECT_EQ(f.size(), model.size());
  for (uint64_t k : model) {
    ASSERT_TRUE(f.contains(k));
    ASSERT_GE(f.count(k), model.count(k));
  }
  // Erase everything that is left: the filter holds no key then (only void copies).
  for (uint64_t k : std::vector<uint64_t>(model.begin(), model.end())) {
    ASSERT_TRUE(f.erase(k));
    model.erase(model.find(k));
    if (model.size() % 5000 == 0) {
      for (uint64_t x : model) ASSERT_TRUE(f.contains(x));
    }
  }
  EXPECT_EQ(f.size(), 0u);
}

TEST(ExpandableFilterTest, CopiesAreCountedAndErasedOneAtATime) {
  amq::ExpandableFilter f(1, 0.01);
  for (int i = 0; i < 5; ++i) f.insert("apple");
  EXPECT_GE(f.count("apple"), 5u);
  EXPECT_EQ(f.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(f.erase("apple"));
  EXPECT_FALSE(f.contains("apple"));
  EXPECT_FALSE(f.erase("apple"));
  EXPECT_EQ(f.entries(), 0u);
}

TEST(ExpandableFilterTest, EightCopiesOfOneKeyFitTheNinthIsRefused) {
  // Copies of one key move together at every doubling: two buckets hold 8 of them.
  amq::ExpandableFilter f(1000, 0.01);
  for (uint64_t k = 0; k < 500; ++k) ASSERT_TRUE(f.insert(k));
  int stored = 0;
  while (stored < 20 && f.insert("same")) ++stored;
  const auto [b1, b2] = std::pair(f.count("same"), f.size());
  EXPECT_EQ(stored, 8);
  EXPECT_EQ(b1, 8u);
  EXPECT_EQ(b2, 508u);
  const auto before = f.serialize();
  EXPECT_FALSE(f.insert("same"));
  EXPECT_EQ(f.serialize(), before);  // unchanged
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(f.erase("same")) << i;
  EXPECT_FALSE(f.contains("same"));
  for (uint64_t k = 0; k < 500; ++k) ASSERT_TRUE(f.contains(k));
}

TEST(ExpandableFilterTest, VoidCopiesOfOldDuplicatesDoNotMakeItGrowForever) {
  // Eight copies of each of a few keys inserted into a tiny table: after six doublings
  // their entries are void and are copied into both children at every doubling, so
  // the buckets they fill stay full. An entry that must go there is stashed, not
  // answered with doubling after doubling.
  amq::ExpandableFilter f(1, 0.05, 1);
  std::unordered_map<uint64_t, uint64_t> model;
  for (int copy = 0; copy < 8; ++copy)
    for (uint64_t k = 0; k < 24; ++k)
      if (f.insert(k)) ++model[k];
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200'000; ++i) {
    const uint64_t k = rng() % 100'000 + 100;
    ASSERT_TRUE(f.insert(k));
    ++model[k];
  }
  EXPECT_LE(f.level(), 17u);  // 2^16 buckets hold 200,000 keys at load < 0.93
  for (const auto& [k, n] : model) {
    ASSERT_TRUE(f.contains(k)) << k;
    ASSERT_GE(f.count(k), n) << k;
  }
  const auto g = amq::ExpandableFilter::load(f.serialize());
  EXPECT_TRUE(g == f);
  for (const auto& [k, n] : model) ASSERT_GE(g.count(k), n);
  for (const auto& [k, n] : model)
    for (uint64_t c = 0; c < n; ++c) ASSERT_TRUE(f.erase(k)) << k;
  EXPECT_EQ(f.size(), 0u);
}

TEST(ExpandableFilterTest, GrowsOneBucketAtATimeKeepingTheLoadHigh) {
  // The table grows by splitting one bucket at a time (linear hashing), so past the
  // first few hundred keys its load stays near kMaxLoad whatever the count; a table
  // doubled as a whole would be between half that and that.
  amq::ExpandableFilter f(1, 0.01, 2);
  std::mt19937_64 rng(5);
  double lowest = 1;
  uint64_t buckets = f.num_buckets();
  for (uint64_t i = 1; i <= 300'000; ++i) {
    ASSERT_TRUE(f.insert(present_key(rng)));
    if (i >= 1000) {
      // One split an insert, or two when the split bucket held void entries.
      ASSERT_LE(f.num_buckets(), buckets + 2) << i;
    }
    buckets = f.num_buckets();
    if (i >= 1000) lowest = std::min(lowest, f.load_factor());
  }
  EXPECT_GE(lowest, amq::ExpandableFilter::kMaxLoad - 0.01);
  EXPECT_LE(f.load_factor(), amq::ExpandableFilter::kMaxLoad);
  EXPECT_LE(8.0 * static_cast<double>(f.size_in_bytes()) / 300'000, 16 / (amq::ExpandableFilter::kMaxLoad - 0.02));
}

TEST(ExpandableFilterTest, RejectsTargetsOutOfRange) {
  for (double bad : {0.0, -1.0, 1e-6, 0.6, std::nan("")}) {
    try {
      amq::ExpandableFilter f(1, bad);
      FAIL() << bad;
    } catch (const amq::Error& e) {
      EXPECT_EQ(e.code(), amq::Errc::invalid_argument);
    }
  }
}

TEST(ExpandableFilterTest, StartsFromAnyCapacity) {
  for (uint64_t cap : {0ull, 1ull, 3ull, 4ull, 1000ull, 123457ull}) {
    amq::ExpandableFilter f(cap, 0.01);
    EXPECT_GE(f.slots() * amq::ExpandableFilter::kMaxLoad, static_cast<double>(std::max<uint64_t>(cap, 1)));
    for (uint64_t k = 0; k < cap + 10; ++k) f.insert(k);
    for (uint64_t k = 0; k < cap + 10; ++k) ASSERT_TRUE(f.contains(k));
  }
}

TEST(ExpandableFilterTest, WidensSlotsWhenSixteenBitsWouldPassTheTarget) {
  amq::ExpandableFilter f(1, 0.002);
  EXPECT_EQ(f.slot_bits(), 16u);
  std::mt19937_64 rng(1);
  while (f.slot_bits() == 16) f.insert(rng());
  EXPECT_LE(f.fpp_bound(), 0.002);
  // A tight target starts with 32-bit slots.
  EXPECT_EQ(amq::ExpandableFilter(1, 1e-4).slot_bits(), 32u);
}

amq::ExpandableFilter small_filter() {
  amq::ExpandableFilter f(1, 0.01, 11);
  for (uint64_t k = 0; k < 40; ++k) f.insert(k * 7919);
  f.erase(uint64_t{0});
  return f;
}

TEST(ExpandableFilterFormatTest, RoundTrip) {
  for (uint64_t n : {0ull, 1ull, 40ull, 5000ull}) {
    amq::ExpandableFilter f(1, n == 5000 ? 0.0001 : 0.01, 3);
    for (uint64_t k = 0; k < n; ++k) f.insert(k);
    const auto bytes = f.serialize();
    EXPECT_EQ(amq::container_kind(bytes), amq::Kind::expandable);
    amq::ExpandableFilter g = amq::ExpandableFilter::load(bytes);
    EXPECT_TRUE(f == g);
    EXPECT_EQ(g.size(), n);
    EXPECT_EQ(g.entries(), f.entries());
    EXPECT_EQ(g.histogram(), f.histogram());
    for (uint64_t k = 0; k < n; ++k) ASSERT_TRUE(g.contains(k));
    // It keeps growing after a load.
    for (uint64_t k = n; k < n + 3000; ++k) g.insert(k);
    for (uint64_t k = 0; k < n + 3000; ++k) ASSERT_TRUE(g.contains(k));
    EXPECT_EQ(g.serialize(), amq::ExpandableFilter::load(g.serialize()).serialize());
  }
}

TEST(ExpandableFilterFormatTest, EveryTruncationIsAnError) {
  const auto bytes = small_filter().serialize();
  for (size_t n = 0; n < bytes.size(); ++n) {
    try {
      (void)amq::ExpandableFilter::load(std::span(bytes).first(n));
      FAIL() << "accepted a file cut to " << n << " bytes";
    } catch (const amq::Error&) {
    }
  }
}

TEST(ExpandableFilterFormatTest, BitFlipsAreErrorsOrAValidFilter) {
  const auto bytes = small_filter().serialize();
  for (size_t i = 0; i < bytes.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      auto copy = bytes;
      copy[i] ^= std::byte(1 << bit);
      try {
        (void)amq::ExpandableFilter::load(copy);
        FAIL() << "accepted a flip at byte " << i << " bit " << bit;
      } catch (const amq::Error&) {
      }
    }
}

// A file whose checksum is right but whose contents are impossible: each is refused
// with its own code, before the table is allocated where the length is wrong.
std::vector<std::byte> with_params(const std::vector<std::byte>& params, std::span<const std::byte> payload) {
  return amq::write_container(amq::Kind::expandable, params, payload);
}

TEST(ExpandableFilterFormatTest, ImpossibleParamsAreCorrupt) {
  const auto f = small_filter();
  const auto good = f.serialize();
  const amq::Container c = amq::parse_container(good);
  auto params = std::vector<std::byte>(c.params.begin(), c.params.end());
  auto payload = std::vector<std::byte>(c.payload.begin(), c.payload.end());
  auto expect = [&](std::vector<std::byte> p, std::span<const std::byte> pay, amq::Errc code, const char* what) {
    try {
      (void)amq::ExpandableFilter::load(with_params(p, pay));
      ADD_FAILURE() << what;
    } catch (const amq::Error& e) {
      EXPECT_EQ(e.code(), code) << what << ": " << e.what();
    }
  };
  auto set32 = [](std::vector<std::byte> p, size_t at, uint32_t v) {
    std::memcpy(p.data() + at, &v, 4);
    return p;
  };
  auto set64 = [](std::vector<std::byte> p, size_t at, uint64_t v) {
    std::memcpy(p.data() + at, &v, 8);
    return p;
  };
  expect(set32(params, 0, 2), payload, amq::Errc::incompatible, "hasher");
  expect(set32(params, 4, 8), payload, amq::Errc::corrupt, "slot bits");
  expect(set32(params, 8, 2), payload, amq::Errc::corrupt, "bucket size");
  expect(set32(params, 12, 37), payload, amq::Errc::corrupt, "level");
  expect(set32(params, 12, 30), payload, amq::Errc::corrupt, "level without its payload");
  expect(set64(params, 24, std::bit_cast<uint64_t>(0.9)), payload, amq::Errc::corrupt, "fpp");
  expect(set64(params, 32, f.entries() + 1), payload, amq::Errc::corrupt, "items above entries");
  expect(set64(params, 40, f.entries() + 1), payload, amq::Errc::corrupt, "entries");
  expect(set64(params, 48, 1), payload, amq::Errc::corrupt, "a stash the payload does not hold");
  expect(set64(params, 48, ~uint64_t{0}), payload, amq::Errc::corrupt, "a stash count that would overflow");
  {
    // One stashed entry: a valid one loads, one outside the table does not.
    auto p1 = set64(set64(params, 48, 1), 40, f.entries() + 1);
    auto pay = payload;
    const uint64_t bucket = 0, value = 0x8001;  // side 1, tag 0, L = 6 remainder bits 0
    pay.resize(payload.size() + 16);
    std::memcpy(pay.data() + payload.size(), &bucket, 8);
    std::memcpy(pay.data() + payload.size() + 8, &value, 8);
    EXPECT_NO_THROW((void)amq::ExpandableFilter::load(with_params(p1, pay)));
    const uint64_t far = uint64_t{1} << 40;
    std::memcpy(pay.data() + payload.size(), &far, 8);
    expect(p1, pay, amq::Errc::corrupt, "stashed entry outside the table");
  }
  expect(set64(params, 56, uint64_t{1} << 20), payload, amq::Errc::corrupt, "split pointer past the level");
  expect(std::vector<std::byte>(params.begin(), params.end() - 4), payload, amq::Errc::truncated, "short params");
  auto bad = payload;
  bad[0] = std::byte{0};
  bad[1] = std::byte{0x80};  // a 16-bit slot with no end marker below the tag: impossible
  expect(params, bad, amq::Errc::corrupt, "slot");
}

}  // namespace

// Files of the first layout (params of 56 bytes: a table of 2^q buckets doubled as a
// whole, buckets in address order), written by ExpandableFilter at e10c876 with keys
// 1..299 (0 inserted and erased), capacity 1, seed 5: 16-bit slots at 1%, 32-bit at
// 1e-4. They load converted, answer exactly as they did (the same entries, in other
// places), and grow on.
TEST(ExpandableFilterFormatTest, LoadsFilesOfTheDoublingLayout) {
  struct Case {
    const char* name;
    uint32_t bits;
    double bound;
    uint64_t false_positives;  // among the keys 1,000,000 .. 1,099,999, as written
  };
  for (const Case& c : {Case{"expandable_doubling_300.amq", 16, 0.0008373260498046875, 87},
                        Case{"expandable_doubling_wide_300.amq", 32, 1.2776581570506096e-08, 0}}) {
    SCOPED_TRACE(c.name);
    const auto file = amq::read_file(std::string(AMQ_SOURCE_DIR) + "/tests/data/" + c.name);
    ASSERT_EQ(amq::parse_container(file).params.size(), 56u);
    amq::ExpandableFilter f = amq::ExpandableFilter::load(file);
    EXPECT_EQ(f.slot_bits(), c.bits);
    EXPECT_EQ(f.level(), 7u);
    EXPECT_EQ(f.split_pointer(), 0u);
    EXPECT_EQ(f.size(), 299u);
    EXPECT_EQ(f.entries(), 299u);
    EXPECT_EQ(f.fpp_bound(), c.bound);
    for (uint64_t k = 1; k < 300; ++k) ASSERT_TRUE(f.contains(k)) << k;
    uint64_t fp = 0;
    for (uint64_t k = 1'000'000; k < 1'100'000; ++k) fp += f.contains(k);
    EXPECT_EQ(fp, c.false_positives);
    const auto again = f.serialize();
    EXPECT_EQ(amq::parse_container(again).params.size(), 64u);
    EXPECT_TRUE(amq::ExpandableFilter::load(again) == f);
    for (uint64_t k = 300; k < 20'000; ++k) ASSERT_TRUE(f.insert(k));
    for (uint64_t k = 1; k < 20'000; ++k) ASSERT_TRUE(f.contains(k)) << k;
    EXPECT_LE(f.fpp_bound(), 0.95 * f.target_fpp());
  }
}
