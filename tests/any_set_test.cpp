// AnySet's sizing and argument checks: build_bytes for every kind, the max_bytes limit
// checked before anything is allocated, and the shared false-positive-rate messages.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "amq/any_set.hpp"
#include "amq/bloom_filter.hpp"
#include "amq/error.hpp"
#include "amq/registry.hpp"
#include "amq/scalable_bloom_filter.hpp"
#include "amq/scalable_cuckoo_filter.hpp"
#include "test_util.hpp"

namespace {

using amq::BuildOptions;
using amq::Errc;
using amq::Kind;

const Kind kKinds[] = {Kind::bloom, Kind::blocked_bloom, Kind::scalable_bloom, Kind::cuckoo,
                       Kind::scalable_cuckoo, Kind::gcs, Kind::succinct};

std::vector<amq::Bytes> views_of(const std::vector<std::string>& keys) {
  std::vector<amq::Bytes> v;
  for (const auto& k : keys) v.push_back(amq::as_bytes(k));
  return v;
}

template <class F>
void expect_error(Errc code, const std::string& fragment, F&& f) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing '" << fragment << "'";
  } catch (const amq::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

// The filters' size is known before they are built: build_bytes is what the built set
// holds (its file, less the container's header and metadata).
TEST(AnySetSize, BuildBytesIsTheBuiltSize) {
  const auto keys = amq::test::random_keys(20000, 1);
  const auto views = views_of(keys);
  for (Kind kind : {Kind::bloom, Kind::blocked_bloom, Kind::scalable_bloom, Kind::cuckoo, Kind::scalable_cuckoo}) {
    SCOPED_TRACE(std::string(amq::kind_name(kind)));
    for (const std::optional<uint64_t> capacity : {std::optional<uint64_t>{}, std::optional<uint64_t>{500}}) {
      if (capacity && (kind == Kind::cuckoo)) continue;  // a cuckoo filter of 500 cannot take 20000 keys
      BuildOptions o;
      o.capacity = capacity;
      o.fpp = 0.01;
      if (capacity && kind != Kind::scalable_bloom && kind != Kind::scalable_cuckoo) o.fpp = 0.3;
      const uint64_t predicted = amq::build_bytes(kind, o, views);
      const uint64_t file = amq::build_set(kind, o, views)->info().bytes;
      // The cuckoo kinds drop repeated keys first, sorting a pair of hash and index a
      // key beside a bit a key: the build peaks there while the pairs outweigh the filter.
      const bool dedupes = kind == Kind::cuckoo || kind == Kind::scalable_cuckoo;
      const uint64_t pairs = 16 * uint64_t{keys.size()}, first_bits = 8 * ((keys.size() + 63) / 64);
      if (dedupes) {
        EXPECT_GE(predicted, pairs + first_bits);
      }
      EXPECT_LE(predicted, dedupes ? std::max(file, pairs) + first_bits : file);
      EXPECT_GE(predicted + 1024, file) << "predicted " << predicted << ", file " << file;
    }
  }
  // gcs and succinct: an estimate of the building's peak, at least the file.
  for (Kind kind : {Kind::gcs, Kind::succinct}) {
    const uint64_t predicted = amq::build_bytes(kind, BuildOptions{}, views);
    EXPECT_GE(predicted, amq::build_set(kind, BuildOptions{}, views)->info().bytes) << amq::kind_name(kind);
  }
}

// build_bytes of a scalable Bloom filter is the bytes of the layers its build opens:
// exact when every key is added, never below, and at most one layer above (a key that
// is already a false positive is not added, and may leave the last layer counted
// unopened). Key counts around the layers' capacities, at rates where no key of a full
// layer (1e-4) or some (1e-2) are false positives; the default capacity (= the keys) too.
TEST(AnySetSize, ScalableBloomBuildBytesIsTheLayersBuilt) {
  const auto keys = amq::test::random_keys(40000, 11);
  const auto all = views_of(keys);
  for (double fpp : {1e-2, 1e-3, 1e-4}) {
    const amq::ScalableBloomParams p{.initial_capacity = 5000, .fpp = fpp};
    const uint64_t c0 = amq::detail::layer_geometry(p, 0).capacity, c1 = amq::detail::layer_geometry(p, 1).capacity;
    ASSERT_EQ(c0, 5000u);
    const std::pair<std::optional<uint64_t>, uint64_t> cases[] = {
        {std::nullopt, 1},  {std::nullopt, 1000}, {std::nullopt, 20000}, {5000, c0 - 1},     {5000, c0},
        {5000, c0 + 1},     {5000, c0 + c1 - 1},  {5000, c0 + c1},       {5000, c0 + c1 + 1}};
    for (const auto& [capacity, n] : cases) {
      SCOPED_TRACE("fpp " + std::to_string(fpp) + ", capacity " + std::to_string(capacity.value_or(n)) + ", keys " +
                   std::to_string(n));
      BuildOptions o;
      o.fpp = fpp;
      o.capacity = capacity;
      const auto views = std::span(all).first(n);
      const uint64_t predicted = amq::build_bytes(Kind::scalable_bloom, o, views);
      const auto built = amq::ScalableBloomFilter::load(amq::build_set(Kind::scalable_bloom, o, views)->serialize());
      const size_t layers = built.layer_count();
      EXPECT_GE(predicted, built.size_in_bytes()) << layers << " layers";
      if (fpp == 1e-4 && n <= c0 + 1) {
        EXPECT_EQ(built.size(), n);  // no false positive among these keys: all added
      }
      if (built.size() == n) {
        EXPECT_EQ(predicted, built.size_in_bytes()) << layers << " layers";
      } else {
        EXPECT_LE(predicted, built.size_in_bytes() + amq::detail::layer_geometry(built.params(), layers).bits / 8);
      }
    }
  }
}

// A build that max_bytes lets through takes no more: 20000 keys at 1e-4 took three
// times what build_bytes said (layer 0 filled exactly and opened layer 1, empty).
TEST(AnySetSize, MaxBytesBoundsTheScalableBloomBuilt) {
  const auto keys = amq::test::random_keys(20000, 12);
  const auto views = views_of(keys);
  for (double fpp : {1e-2, 1e-3, 1e-4}) {
    SCOPED_TRACE(fpp);
    BuildOptions o;
    o.fpp = fpp;
    const uint64_t need = amq::build_bytes(Kind::scalable_bloom, o, views);
    o.max_bytes = need;
    const auto built = amq::ScalableBloomFilter::load(amq::build_set(Kind::scalable_bloom, o, views)->serialize());
    EXPECT_LE(built.size_in_bytes(), need);
    EXPECT_EQ(built.layer_count(), 1u);
    o.max_bytes = need - 1;
    expect_error(Errc::too_large, "needs " + std::to_string(need) + " bytes of memory",
                 [&] { amq::build_set(Kind::scalable_bloom, o, views); });
  }
}

// Every kind's build_bytes against the file it builds, at several rates and sizes: at
// least the file less its header and params (under 128 bytes). A filter's is its
// structure, so no more than the file; the others' (built through sorted copies or
// construction tables), the building's peak, is more.
TEST(AnySetSize, BuildBytesCoversTheFileOfEveryKind) {
  const auto keys = amq::test::random_keys(20000, 13);
  const auto all = views_of(keys);
  for (const amq::KindRow* row : amq::kind_rows()) {
    const bool structure = row->kind == Kind::bloom || row->kind == Kind::blocked_bloom ||
                           row->kind == Kind::scalable_bloom || row->kind == Kind::cuckoo ||
                           row->kind == Kind::scalable_cuckoo;
    for (double fpp : {1e-2, 1e-3, 1e-4}) {
      for (size_t n : {size_t{1}, size_t{1000}, size_t{20000}}) {
        SCOPED_TRACE(std::string(row->name) + ", fpp " + std::to_string(fpp) + ", keys " + std::to_string(n));
        BuildOptions o;
        if (!row->caps.exact) o.fpp = fpp;
        const auto views = std::span(all).first(n);
        const uint64_t predicted = amq::build_bytes(row->kind, o, views);
        const uint64_t file = amq::build_set(row->kind, o, views)->info().bytes;
        EXPECT_GE(predicted + 128, file) << "predicted " << predicted << ", file " << file;
        // The cuckoo kinds drop repeated keys first, sorting a pair of hash and index a
        // key: their build peaks at those pairs while they outweigh the filter.
        const bool dedupes = row->kind == Kind::cuckoo || row->kind == Kind::scalable_cuckoo;
        const uint64_t pairs = 16 * uint64_t{n}, first_bits = 8 * ((n + 63) / 64);
        if (dedupes) {
          EXPECT_GE(predicted, pairs + first_bits);
        }
        if (structure) {
          EXPECT_LE(predicted, dedupes ? std::max(file, pairs) + first_bits : file);
        }
      }
    }
  }
}

// Sizes far beyond any machine are refused at once, with the bytes they would need,
// instead of being allocated (1e10 keys: 10-25 GB; scalable-cuckoo 1e12: 22 GB).
TEST(AnySetSize, MaxBytesRefusesBeforeAllocating) {
  const auto keys = amq::test::random_keys(100, 2);
  const auto views = views_of(keys);
  for (Kind kind : kKinds) {
    SCOPED_TRACE(std::string(amq::kind_name(kind)));
    BuildOptions o;
    if (kind != Kind::gcs && kind != Kind::succinct)
      o.capacity = kind == Kind::scalable_cuckoo ? 1'000'000'000'000 : 10'000'000'000;
    o.max_bytes = 100;
    const uint64_t need = amq::build_bytes(kind, o, views);
    EXPECT_GT(need, 100u);
    expect_error(Errc::too_large, "needs " + std::to_string(need) + " bytes of memory, more than the limit of 100 ",
                 [&] { amq::build_set(kind, o, views); });
    o.max_bytes = need;  // exactly enough is enough (for the small ones)
    if (kind == Kind::gcs || kind == Kind::succinct) {
      EXPECT_NO_THROW(amq::build_set(kind, o, views));
    }
  }
}

// fpp out of range (nan included) is refused by every kind, in the same words.
TEST(AnySetSize, FppIsCheckedByEveryKindInTheSameWords) {
  const auto keys = amq::test::random_keys(10, 3);
  const auto views = views_of(keys);
  for (Kind kind : {Kind::bloom, Kind::blocked_bloom, Kind::scalable_bloom, Kind::cuckoo, Kind::scalable_cuckoo,
                    Kind::gcs}) {
    SCOPED_TRACE(std::string(amq::kind_name(kind)));
    for (double fpp : {std::nan(""), 0.0, -0.1, 1.0, HUGE_VAL}) {
      BuildOptions o;
      o.fpp = fpp;
      expect_error(Errc::invalid_argument, "false-positive probability must be in (0, ",
                   [&] { amq::build_bytes(kind, o, views); });
      expect_error(Errc::invalid_argument, "false-positive probability must be in (0, ",
                   [&] { amq::build_set(kind, o, views); });
    }
  }
  BuildOptions o;
  o.fpp = 0.6;
  expect_error(Errc::invalid_argument, "must be in (0, 0.5], got 0.6", [&] { amq::build_set(Kind::gcs, o, views); });
  // Numbers in messages are %g: "1e-300", never "0.000000".
  expect_error(Errc::invalid_argument, "fpp 1e-300 needs 997 hash functions",
               [] { amq::BloomFilter::create(10, 1e-300); });
}

TEST(AnySetSize, CapacityDoesNotApplyToExactSets) {
  const auto keys = amq::test::random_keys(10, 4);
  const auto views = views_of(keys);
  for (Kind kind : {Kind::gcs, Kind::succinct}) {
    BuildOptions o;
    o.capacity = 100;
    expect_error(Errc::invalid_argument, "--capacity does not apply", [&] { amq::build_set(kind, o, views); });
  }
}

// A Bloom filter with every bit set counts m ln m / k items (Guava: infinity, which
// amq showed as 2^64 - 1 with 0 bits a key).
TEST(AnySetSize, SaturatedBloomFilterHasAFiniteCount) {
  amq::BloomFilter f(1, 6);
  for (const auto& k : amq::test::random_keys(1000, 5)) f.insert(k);
  ASSERT_EQ(f.bit_count(), 64u);
  EXPECT_EQ(f.approximate_element_count(), UINT64_MAX);  // Guava's count overflows
  // amq info counts it as one bit short of full.
  EXPECT_EQ(amq::load_set(f.serialize(), "auto")->info().items,
            static_cast<uint64_t>(std::llround(64 * std::log(64.0) / 6)));
}

TEST(AnySetSize, EmptyScalableCuckooExpectsZeroNotMinusZero) {
  const amq::ScalableCuckooFilter f;
  EXPECT_EQ(f.expected_fpp(), 0.0);
  EXPECT_FALSE(std::signbit(f.expected_fpp()));
}

}  // namespace
