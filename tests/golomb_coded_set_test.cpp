#include "amq/golomb_coded_set.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <set>
#include <unordered_set>

#include "amq/any_set.hpp"
#include "amq/detail/byte_io.hpp"
#include "amq/detail/cpu.hpp"
#include "amq/detail/dispatch.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "amq/format.hpp"
#include "gcs/test_peer.hpp"
#include "test_util.hpp"

namespace amq {
namespace {

template <class F>
void expect_errc(Errc code, F&& f) {
  try {
    f();
    ADD_FAILURE() << "no amq::Error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
  }
}

std::vector<std::string> absent_keys(size_t n, uint64_t seed, const std::vector<std::string>& present) {
  const std::unordered_set<std::string> in(present.begin(), present.end());
  std::vector<std::string> out;
  for (auto& k : test::random_keys(n + n / 8 + 100, seed, 30))
    if (!in.count(k) && out.size() < n) out.push_back(std::move(k));
  return out;
}

// The coded values, computed independently: reduce(xxh3(key), N·M), sorted, distinct.
std::vector<uint64_t> model_values(const std::vector<std::string>& keys, uint64_t seed, uint64_t m) {
  std::set<uint64_t> hashes;
  for (const auto& k : keys) hashes.insert(Xxh3Hasher{seed}(as_bytes(k)));
  std::set<uint64_t> values;
  for (uint64_t h : hashes) values.insert(reduce(h, std::max<uint64_t>(hashes.size(), 1) * m));
  return {values.begin(), values.end()};
}

TEST(GolombCodedSet, NoFalseNegativesFprOnMillionAbsentAndSpace) {
  const auto keys = test::random_keys(300'000, 11);
  const auto absent = absent_keys(1'000'000, 12, keys);
  for (auto coding : {GolombCodedSet::Coding::rice, GolombCodedSet::Coding::golomb}) {
    const auto s = GolombCodedSet::build(keys, {.fpp = 1.0 / 256, .coding = coding});
    EXPECT_EQ(s.key_count(), keys.size());
    EXPECT_EQ(s.range_per_key(), 256u);
    EXPECT_EQ(s.divisor(), coding == GolombCodedSet::Coding::rice ? 128u : 177u);
    for (const auto& k : keys) ASSERT_TRUE(s.contains(k)) << "false negative";
    size_t fp = 0;
    for (const auto& k : absent) fp += s.contains(k);
    const double rate = static_cast<double>(fp) / static_cast<double>(absent.size());
    // Expected just under 1/256 = 0.0039; 1e6 samples give a standard error of 0.00006.
    EXPECT_LT(rate, 1.0 / 256 + 0.0003) << fp;
    EXPECT_GT(rate, 1.0 / 256 - 0.0005) << fp;
    // Payload ~9.45 (Golomb) or 9.51 (Rice) bits/key plus the index.
    const double bits = 8.0 * static_cast<double>(s.size_in_bytes()) / static_cast<double>(keys.size());
    EXPECT_LE(bits, 9.7);
    const double payload = static_cast<double>(s.stream_bits()) / static_cast<double>(keys.size());
    // The bound, log2(1/ε) + 1.5, holds for Golomb coding; Rice is ~0.07 longer,
    // and its byte layout pads each bucket to a byte (+0.03).
    EXPECT_LE(payload, std::log2(256.0) + (coding == GolombCodedSet::Coding::golomb ? 1.5 : 1.56));
    EXPECT_LE(bits - payload, 0.5);
    // contains_many (sorted and merged for Golomb, in order for Rice): the same answers,
    // in the caller's order.
    std::vector<std::string> mixed(keys.begin(), keys.begin() + 50000);
    mixed.insert(mixed.end(), absent.begin(), absent.begin() + 50000);
    std::shuffle(mixed.begin(), mixed.end(), std::mt19937_64(3));
    std::unique_ptr<bool[]> out(new bool[mixed.size()]);
    const size_t found = s.contains_many(mixed, std::span<bool>(out.get(), mixed.size()));
    size_t expect_found = 0;
    for (size_t i = 0; i < mixed.size(); ++i) {
      ASSERT_EQ(out[i], s.contains(mixed[i])) << i;
      expect_found += out[i];
    }
    EXPECT_EQ(found, expect_found);
  }
}

TEST(GolombCodedSet, DecodeAllAndIterationMatchTheModel) {
  for (size_t n : {0, 1, 2, 127, 128, 129, 5000, 70000}) {
    for (auto coding : {GolombCodedSet::Coding::golomb, GolombCodedSet::Coding::rice}) {
      auto keys = test::random_keys(n, 100 + n, 6);
      const std::vector<std::string> again(keys.begin(), keys.begin() + static_cast<long>(n / 3));
      keys.insert(keys.end(), again.begin(), again.end());  // repeats count once
      const auto s = GolombCodedSet::build(keys, {.fpp = 0.01, .coding = coding, .seed = 7});
      const auto model = model_values(keys, 7, 100);
      EXPECT_EQ(s.decode_all(), model) << n;
      EXPECT_EQ(s.size(), model.size());
      EXPECT_EQ(s.key_count(), n);
      std::vector<uint64_t> iterated(s.begin(), s.end());
      EXPECT_EQ(iterated, model);
      for (uint64_t v : model) ASSERT_TRUE(s.contains_value(v));
      // Every value between the coded ones is absent.
      for (size_t i = 0; i + 1 < model.size() && i < 2000; ++i)
        for (uint64_t v = model[i] + 1; v < model[i + 1] && v < model[i] + 5; ++v) ASSERT_FALSE(s.contains_value(v));
      EXPECT_FALSE(s.contains_value(s.range()));
      if (coding == GolombCodedSet::Coding::rice) {
        EXPECT_EQ(std::popcount(s.divisor()), 1);
      }
    }
  }
}

// A hash that reduce() maps to exactly `v` in [0, range): ceil(v · 2^64 / range).
uint64_t hash_of_value(uint64_t v, uint64_t range) {
  return static_cast<uint64_t>(((static_cast<unsigned __int128>(v) << 64) + range - 1) / range);
}

// Builds from exactly these distinct values (range = values.size() · M).
GolombCodedSet set_of_values(const std::vector<uint64_t>& values, double fpp, GolombCodedSet::Coding coding) {
  const uint64_t m = static_cast<uint64_t>(std::round(1.0 / fpp));
  const uint64_t range = std::max<uint64_t>(values.size(), 1) * m;
  std::vector<uint64_t> hashes;
  for (uint64_t v : values) {
    EXPECT_LT(v, range);
    hashes.push_back(hash_of_value(v, range));
  }
  auto s = GolombCodedSet::from_hashes(hashes, {.fpp = fpp, .coding = coding});
  EXPECT_EQ(s.range(), range);
  return s;
}

// Every query path against the model: contains_value on every coded value, its
// neighbours and random values, with the BMI2 select and the portable one (the byte
// layout: the AVX2 kernel and the one on 64-bit words), and contains_many_hashes in a
// sparse (in order, prefetched) and a dense (sorted) batch.
void expect_matches_model(GolombCodedSet& s, const std::vector<uint64_t>& model, uint64_t seed) {
  ASSERT_EQ(s.decode_all(), model);
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> probes;
  for (size_t i = 0; i < model.size(); i += 1 + model.size() / 3000) {
    probes.push_back(model[i]);
    if (model[i] > 0) probes.push_back(model[i] - 1);
    probes.push_back(model[i] + 1);
  }
  for (int i = 0; i < 3000; ++i) probes.push_back(rng() % s.range());
  probes.push_back(0);
  probes.push_back(s.range() - 1);
  probes.push_back(s.range());
  for (bool bmi2 : {true, false}) {
    detail::GcsTestPeer::select(s, bmi2 ? detail::kAllIsas : detail::isa_bit(detail::Isa::portable));
    for (uint64_t v : probes)
      ASSERT_EQ(s.contains_value(v), std::binary_search(model.begin(), model.end(), v)) << v << " bmi2/simd " << bmi2;
    for (uint64_t v : model) ASSERT_TRUE(s.contains_value(v)) << v;
    // Hashes of the probes in batches (answered in order, or sorted when dense).
    std::vector<uint64_t> hashes;
    for (uint64_t v : probes)
      if (v < s.range()) hashes.push_back(hash_of_value(v, s.range()));
    for (size_t batch : {size_t{3}, size_t{40}, hashes.size()}) {
      std::unique_ptr<bool[]> out(new bool[batch]);
      for (size_t at = 0; at < hashes.size(); at += batch) {
        const size_t m = std::min(batch, hashes.size() - at);
        const auto part = std::span(hashes).subspan(at, m);
        size_t expect_found = 0;
        const size_t found = s.contains_many_hashes(part, std::span<bool>(out.get(), m));
        for (size_t i = 0; i < m; ++i) {
          ASSERT_EQ(out[i], s.contains_hash(part[i])) << i;
          expect_found += out[i];
        }
        ASSERT_EQ(found, expect_found);
      }
    }
    // A batch of 8 queries a bucket (the probes again and again): sorted when the set
    // decodes code by code, in order for the Rice kernels.
    std::vector<uint64_t> dense;
    while (dense.size() < 8 * s.bucket_count() + 2)
      dense.insert(dense.end(), hashes.begin(), hashes.end());
    const bool rice = std::has_single_bit(s.divisor());  // no truncated-binary cutoff
    const int c = std::countr_zero(s.divisor());
    const bool group_search = s.byte_layout() || (rice && c >= 1 && c <= 56);
    EXPECT_EQ(s.sorts_batch(dense.size()), !group_search) << s.divisor();
    EXPECT_FALSE(s.sorts_batch(8 * s.bucket_count() - 1));
    std::unique_ptr<bool[]> out(new bool[dense.size()]);
    size_t expect_found = 0;
    const size_t found = s.contains_many_hashes(dense, std::span<bool>(out.get(), dense.size()));
    for (size_t i = 0; i < dense.size(); ++i) {
      ASSERT_EQ(out[i], s.contains_hash(dense[i])) << i;
      expect_found += out[i];
    }
    ASSERT_EQ(found, expect_found);
  }
  detail::GcsTestPeer::select(s, detail::kAllIsas);
}

TEST(GolombCodedSet, RiceQueriesAtEveryRemainderWidth) {
  // M from 2 to 2^40: remainders of 0 .. 39 bits, groups of 8 down to 1 code, the SWAR
  // sum (3 ..= 14 bits) and the per-field one.
  for (double m : {2.0, 3.0, 5.0, 12.0, 40.0, 100.0, 256.0, 1000.0, 5000.0, 30000.0, 1e6, 0x1p30, 0x1p40}) {
    const auto keys = test::random_keys(6000, static_cast<uint64_t>(m), 12);
    auto s = GolombCodedSet::build(keys, {.fpp = 1.0 / m, .coding = GolombCodedSet::Coding::rice, .seed = 3});
    SCOPED_TRACE(m);
    expect_matches_model(s, model_values(keys, 3, s.range_per_key()), static_cast<uint64_t>(m));
    for (const auto& k : keys) ASSERT_TRUE(s.contains(k));
  }
}

TEST(GolombCodedSet, RiceEdgeCases) {
  using C = GolombCodedSet::Coding;
  for (C coding : {C::rice, C::golomb}) {
    SCOPED_TRACE(coding == C::rice ? "rice" : "golomb");
    {  // empty
      auto s = set_of_values({}, 1.0 / 256, coding);
      expect_matches_model(s, {}, 1);
      EXPECT_FALSE(s.contains("x"));
    }
    {  // one key, at 0 (a first gap of 0) and at the last value
      auto s = set_of_values({0}, 1.0 / 256, coding);
      expect_matches_model(s, {0}, 2);
      auto t = set_of_values({255}, 1.0 / 256, coding);
      expect_matches_model(t, {255}, 3);
    }
    {  // all 5000 values in one bucket, consecutive: zero quotients, 0 coded first
      std::vector<uint64_t> v(5000);
      for (uint64_t i = 0; i < v.size(); ++i) v[i] = i;
      auto s = set_of_values(v, 1.0 / 256, coding);
      expect_matches_model(s, v, 4);
      // ...and spread over the first bucket only, with a gap of ~W at its end.
      for (uint64_t i = 0; i < v.size(); ++i) v[i] = i * 6;
      auto t = set_of_values(v, 1.0 / 256, coding);
      EXPECT_GT(t.bucket_count(), 30u);
      expect_matches_model(t, v, 5);
    }
    {  // huge gaps: quotient runs far longer than a 57-bit window, in one bucket and across
      // empty buckets, and the largest values of the range
      const uint64_t m = 256, n = 1000, range = n * m;
      std::vector<uint64_t> v = {0, 1, 128 * m - 1, 128 * m, 300 * m, 300 * m + 200, 500 * m};
      for (uint64_t x = 600 * m; v.size() < n - 3; x += 37) v.push_back(x);
      for (uint64_t x : {range - 300, range - 2, range - 1}) v.push_back(x);
      auto s = set_of_values(v, 1.0 / 256, coding);
      expect_matches_model(s, v, 6);
    }
    {  // a group's quotients overflow one window: gaps of ~8·128 between some values
      std::vector<uint64_t> v;
      for (uint64_t x = 0; v.size() < 4000; x += v.size() % 64 < 8 ? 1000 : 3) v.push_back(x);
      auto s = set_of_values(v, 1.0 / 256, coding);
      expect_matches_model(s, v, 7);
    }
  }
}

// Rice queries enter a bucket at a group estimated from the target's place in it (for
// ~128 codes a bucket): buckets far denser or sparser than that, and gaps of every size
// inside one, must still answer exactly (the entry falls back to the bucket's start).
TEST(GolombCodedSet, RiceEntryNearTheTargetOnUnevenBuckets) {
  const uint64_t m = 256, n = 40000, range = n * m;
  std::mt19937_64 rng(41);
  std::vector<uint64_t> v;
  // Stretches of ~8 buckets each 1/4, 1, 3 or 40 times as dense as the mean.
  const double density[] = {0.25, 1.0, 3.0, 40.0, 1.0, 0.25};
  for (uint64_t x = 0, part = 0; v.size() < n;) {
    const double mean_gap = static_cast<double>(m) / density[part % 6];
    x += 1 + static_cast<uint64_t>(std::exponential_distribution<double>(1.0 / mean_gap)(rng));
    if (x >= range) break;
    v.push_back(x);
    if (x / (8 * 128 * m) != part) part = x / (8 * 128 * m);
  }
  ASSERT_GT(v.size(), 1000u);
  // 1/256 and 1/200: the byte layout (divisor 128, M <= 256); 1/260: divisor 128 in the
  // split layout; 1/16, 1/4096: other widths.
  for (double fpp : {1.0 / 256, 1.0 / 200, 1.0 / 260, 1.0 / 16, 1.0 / 4096}) {
    const uint64_t mm = static_cast<uint64_t>(std::round(1.0 / fpp));
    std::vector<uint64_t> w;
    for (uint64_t x : v) w.push_back(x * mm / m);  // the same shape in the range n·M'
    w.erase(std::unique(w.begin(), w.end()), w.end());
    while (w.size() < v.size()) w.push_back(w.back() + 1);  // keep range = size · M'
    w.resize(v.size());
    auto s = set_of_values(w, fpp, GolombCodedSet::Coding::rice);
    SCOPED_TRACE(fpp);
    EXPECT_EQ(s.byte_layout(), s.divisor() == 128 && mm <= 256);
    if (mm == 200 || mm == 260) {
      EXPECT_EQ(s.divisor(), 128u);
    }
    expect_matches_model(s, w, 42);
    const auto t = GolombCodedSet::load(s.serialize());
    EXPECT_EQ(t.byte_layout(), s.byte_layout());
    EXPECT_EQ(t.decode_all(), w);
  }
}

TEST(GolombCodedSet, SimdKernelOnlyForTheByteLayout) {
  const auto keys = test::random_keys(20000, 21);
  // Rice with divisor 128 at M = 256: the byte layout, searched with AVX2 when the CPU has it.
  auto s = GolombCodedSet::build(keys, {.fpp = 1.0 / 256, .coding = GolombCodedSet::Coding::rice, .seed = 5});
  using detail::GcsTestPeer;
  using detail::Isa;
  EXPECT_EQ(GcsTestPeer::isa(s) == Isa::avx2, detail::cpu_has_avx2());
  const auto probes = test::random_keys(20000, 22);
  std::vector<bool> fast;
  for (const auto& k : probes) fast.push_back(s.contains(k));
  EXPECT_EQ(GcsTestPeer::select(s, detail::isa_bit(Isa::portable)), Isa::portable);
  for (size_t i = 0; i < probes.size(); ++i) ASSERT_EQ(s.contains(probes[i]), fast[i]) << i;
  for (const auto& k : keys) ASSERT_TRUE(s.contains(k));
  EXPECT_EQ(GcsTestPeer::select(s, detail::kAllIsas) == Isa::avx2, detail::cpu_has_avx2());
  // Other layouts have no such kernel.
  for (auto coding : {GolombCodedSet::Coding::rice, GolombCodedSet::Coding::golomb}) {
    auto t = GolombCodedSet::build(keys, {.fpp = 1.0 / 1000, .coding = coding, .seed = 5});
    EXPECT_NE(GcsTestPeer::isa(t), Isa::avx2);
    EXPECT_NE(GcsTestPeer::select(t, detail::kAllIsas), Isa::avx2);
  }
}

TEST(GolombCodedSet, ContainsManySparseAndDense) {
  const auto keys = test::random_keys(200000, 61);
  const auto absent = absent_keys(20000, 62, keys);
  const auto s = GolombCodedSet::build(keys);  // Rice, the default
  EXPECT_EQ(s.coding(), GolombCodedSet::Coding::rice);
  std::vector<std::string> mixed;
  for (size_t i = 0; i < 20000; ++i) {
    mixed.push_back(keys[i * 7]);
    mixed.push_back(absent[i]);
  }
  // 100 queries in ~1600 buckets, and all 40000 (25 a bucket): answered in order (Rice).
  for (size_t batch : {size_t{100}, mixed.size()}) {
    std::unique_ptr<bool[]> out(new bool[batch]);
    for (size_t at = 0; at < mixed.size(); at += batch) {
      const std::vector<std::string> part(mixed.begin() + static_cast<long>(at), mixed.begin() + static_cast<long>(at + batch));
      const size_t found = s.contains_many(part, std::span<bool>(out.get(), batch));
      size_t expect_found = 0;
      for (size_t i = 0; i < batch; ++i) {
        ASSERT_EQ(out[i], s.contains(part[i])) << i;
        if ((at + i) % 2 == 0) {
          ASSERT_TRUE(out[i]) << "false negative";
        }
        expect_found += out[i];
      }
      EXPECT_EQ(found, expect_found);
    }
  }
}

TEST(GolombCodedSet, RiceIsSlightlyLargerThanGolomb) {
  const auto keys = test::random_keys(200000, 5);
  const auto g = GolombCodedSet::build(keys, {.fpp = 1.0 / 256, .coding = GolombCodedSet::Coding::golomb});
  const auto r = GolombCodedSet::build(keys, {.fpp = 1.0 / 256, .coding = GolombCodedSet::Coding::rice});
  EXPECT_EQ(r.divisor(), 128u);
  EXPECT_LT(g.stream_bits(), r.stream_bits());
  EXPECT_EQ(g.decode_all(), r.decode_all());
  for (size_t i = 0; i < keys.size(); i += 7) ASSERT_TRUE(r.contains(keys[i]));
}

TEST(GolombCodedSet, SerializeLoadRoundTrip) {
  for (double fpp : {0.5, 0.3, 0.01, 1.0 / 256, std::ldexp(1.0, -36)}) {
    for (auto coding : {GolombCodedSet::Coding::golomb, GolombCodedSet::Coding::rice}) {
      const auto keys = test::random_keys(20000, 21);
      const auto s = GolombCodedSet::build(keys, {.fpp = fpp, .coding = coding, .seed = 99});
      const auto file = s.serialize();
      const auto t = GolombCodedSet::load(file);
      EXPECT_TRUE(s == t);
      EXPECT_EQ(t.serialize(), file);
      EXPECT_EQ(t.seed(), 99u);
      EXPECT_EQ(t.coding(), coding);
      for (const auto& k : keys) ASSERT_TRUE(t.contains(k));
      EXPECT_EQ(t.decode_all(), model_values(keys, 99, s.range_per_key()));
      // 32 buckets of 80 or 128 ~38-bit codes overflow 16-bit offsets.
      EXPECT_EQ(t.offset_width(), fpp < 1e-9 ? 32u : 16u);
    }
  }
  const std::vector<std::string> none;
  const auto empty = GolombCodedSet::build(none);
  const auto e2 = GolombCodedSet::load(empty.serialize());
  EXPECT_EQ(e2.size(), 0u);
  EXPECT_FALSE(e2.contains("x"));
  EXPECT_EQ(e2.begin(), e2.end());
  EXPECT_EQ(e2.expected_fpp(), 0.0);
}

// A container's params (offset 6: the layout).
std::vector<std::byte> file_params(std::span<const std::byte> file) {
  const Container c = parse_container(file);
  return {c.params.begin(), c.params.end()};
}

// Files written by earlier versions still load and answer the same: tests/data holds
// the keys key-0 .. key-2999 at 1/256 written by `amq build -t gcs` of commit 67d4180
// (layout 0: split buckets) and of 7e6c034 (layout 1: a byte per code holding its gap's
// remainder). Layout 1 is converted to layout 2 (the value's low bits) when loaded, so
// it serializes exactly as the same set built now; layout 0 stays split.
TEST(GolombCodedSet, LoadsFilesOfEarlierLayouts) {
  std::vector<std::string> keys;
  for (int i = 0; i < 3000; ++i) keys.push_back("key-" + std::to_string(i));
  const auto now = GolombCodedSet::build(keys, {.fpp = 1.0 / 256});
  ASSERT_TRUE(now.byte_layout());
  const auto absent = absent_keys(20000, 5, keys);
  for (const char* name : {"gcs_layout0_3000.amq", "gcs_layout1_3000.amq"}) {
    SCOPED_TRACE(name);
    const auto file = read_file(std::string(AMQ_SOURCE_DIR) + "/tests/data/" + name);
    const uint8_t layout = static_cast<uint8_t>(file_params(file)[6]);
    EXPECT_EQ(layout, name[10] - '0');
    const auto old = GolombCodedSet::load(file);
    EXPECT_EQ(old.byte_layout(), layout == 1);
    EXPECT_EQ(old.decode_all(), now.decode_all());
    for (const auto& k : keys) ASSERT_TRUE(old.contains(k)) << k;
    for (const auto& k : absent) ASSERT_EQ(old.contains(k), now.contains(k)) << k;
    if (layout == 1) {
      EXPECT_TRUE(old == now);
      EXPECT_EQ(old.serialize(), now.serialize());
    } else {
      EXPECT_EQ(old.serialize(), file);
    }
  }
}

struct Custom {
  static constexpr uint32_t id = 1000;
  uint64_t seed = 0;
  uint64_t operator()(Bytes b) const noexcept { return XXH3_64bits_withSeed(b.data(), b.size(), seed + 1000); }
};

TEST(GolombCodedSet, Hashers) {
  const auto keys = test::random_keys(3000, 31);
  const auto s64 = GolombCodedSet::build(keys, {}, Xxh64Hasher{});
  EXPECT_EQ(s64.hasher_id(), Xxh64Hasher::id);
  const auto back = GolombCodedSet::load(s64.serialize());
  for (const auto& k : keys) ASSERT_TRUE(back.contains(k));
  const auto c = GolombCodedSet::build(keys, {}, Custom{});
  expect_errc(Errc::unsupported, [&] { (void)c.contains(keys[0]); });
  for (const auto& k : keys) ASSERT_TRUE(c.contains_hash(Custom{}(as_bytes(k))));
}

// contains() hashes XXH3 keys inline and the others out of line: both must agree with
// contains_hash of the hasher's own hash, for integer and byte keys and a nonzero seed.
TEST(GolombCodedSet, InlineHashMatchesTheHasher) {
  std::vector<uint64_t> ints(5000);
  std::mt19937_64 rng(5);
  for (auto& k : ints) k = rng();
  const auto strs = test::random_keys(2000, 33);
  for (uint32_t id : {Xxh3Hasher::id, Xxh64Hasher::id}) {
    const GcsOptions o{.seed = 0x9e3779b97f4a7c15};
    const auto si = id == Xxh3Hasher::id ? GolombCodedSet::build(ints, o) : GolombCodedSet::build(ints, o, Xxh64Hasher{});
    const auto ss = id == Xxh3Hasher::id ? GolombCodedSet::build(strs, o) : GolombCodedSet::build(strs, o, Xxh64Hasher{});
    auto hash = [&](Bytes b) { return id == Xxh3Hasher::id ? Xxh3Hasher{o.seed}(b) : Xxh64Hasher{o.seed}(b); };
    for (uint64_t k : ints) {
      ASSERT_TRUE(si.contains(k));
      const uint64_t other = k ^ 0x5555;
      EXPECT_EQ(si.contains(other), si.contains_hash(hash(KeyView(other).bytes())));
    }
    for (const auto& k : strs) {
      ASSERT_TRUE(ss.contains(k));
      EXPECT_EQ(ss.contains(k + "x"), ss.contains_hash(hash(as_bytes(k + "x"))));
    }
  }
}

TEST(GolombCodedSet, RejectsBadOptions) {
  const std::vector<std::string> keys = {"a"};
  expect_errc(Errc::invalid_argument, [&] { GolombCodedSet::build(keys, {.fpp = 0.0}); });
  expect_errc(Errc::invalid_argument, [&] { GolombCodedSet::build(keys, {.fpp = 0.7}); });
  expect_errc(Errc::invalid_argument, [&] { GolombCodedSet::build(keys, {.fpp = 1e-15}); });
}

// Rewrites a container with changed params or payload (and a valid checksum).
std::vector<std::byte> rewrite(std::span<const std::byte> file, const std::function<void(std::vector<std::byte>&)>& params,
                               const std::function<void(std::vector<std::byte>&)>& payload) {
  const Container c = parse_container(file);
  std::vector<std::byte> p(c.params.begin(), c.params.end()), q(c.payload.begin(), c.payload.end());
  if (params) params(p);
  if (payload) payload(q);
  return write_container(Kind::gcs, p, q);
}

void set_u64(std::vector<std::byte>& b, size_t at, uint64_t v) { detail::store_le64(b.data() + at, v); }

TEST(GolombCodedSet, LoadRejectsCorruption) {
  const auto keys = test::random_keys(3000, 41);
  const auto s = GolombCodedSet::build(keys);
  const auto file = s.serialize();
  // Truncation at every length and any flipped byte: an error, never a crash.
  for (size_t n = 0; n < file.size(); n += 7) {
    try {
      (void)GolombCodedSet::load(std::span(file).first(n));
      ADD_FAILURE() << n;
    } catch (const Error&) {
    }
  }
  auto flipped = file;
  flipped[file.size() / 2] ^= std::byte{0x10};
  expect_errc(Errc::checksum_mismatch, [&] { GolombCodedSet::load(flipped); });
  // Params offsets: 0 hasher, 4 coding, 5 width, 6 layout, 8 seed, 16 keys, 24 values,
  // 32 M, 40 range, 48 divisor, 56 bucket width, 64 stream bits.
  // Hasher id 0 names no hasher; 4..999 are kept for amq's own; user hashers are >= 1000.
  auto with_hasher = [&](uint32_t id) {
    return rewrite(file, [id](auto& p) { std::memcpy(p.data(), &id, 4); }, {});
  };
  expect_errc(Errc::corrupt, [&] { GolombCodedSet::load(with_hasher(0)); });
  expect_errc(Errc::unsupported, [&] { GolombCodedSet::load(with_hasher(4)); });
  expect_errc(Errc::unsupported, [&] { GolombCodedSet::load(with_hasher(999)); });
  EXPECT_EQ(GolombCodedSet::load(with_hasher(1000)).hasher_id(), 1000u);
  EXPECT_EQ(GolombCodedSet::load(with_hasher(2)).hasher_id(), 2u);
  expect_errc(Errc::invalid_argument, [] { GolombCodedSet::from_hashes({1, 2}, {}, 0); });
  expect_errc(Errc::invalid_argument, [] { GolombCodedSet::from_hashes({1, 2}, {}, 17); });
  // open_set (the CLI's loader) refuses a set whose hasher amq does not have.
  try {
    (void)load_set(with_hasher(1000));
    ADD_FAILURE() << "open_set accepted a user hasher's set";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::unsupported);
    EXPECT_NE(std::string(e.what()).find("user-defined hasher (id 1000)"), std::string::npos) << e.what();
  }
  expect_errc(Errc::corrupt, [&] { (void)load_set(with_hasher(0)); });
  expect_errc(Errc::corrupt, [&] { GolombCodedSet::load(rewrite(file, [](auto& p) { p[4] = std::byte{7}; }, {})); });
  expect_errc(Errc::corrupt, [&] { GolombCodedSet::load(rewrite(file, [](auto& p) { p[5] = std::byte{8}; }, {})); });
  ASSERT_TRUE(s.byte_layout());
  ASSERT_EQ(static_cast<uint8_t>(file_params(file)[6]), 2);
  expect_errc(Errc::corrupt, [&] { GolombCodedSet::load(rewrite(file, [](auto& p) { p[6] = std::byte{3}; }, {})); });
  // The byte layout read as the split one, or its value bytes read as layout 1's gap
  // remainders: the buckets do not decode exactly.
  expect_errc(Errc::corrupt, [&] { GolombCodedSet::load(rewrite(file, [](auto& p) { p[6] = std::byte{0}; }, {})); });
  expect_errc(Errc::corrupt, [&] { GolombCodedSet::load(rewrite(file, [](auto& p) { p[6] = std::byte{1}; }, {})); });
  // The byte layout is only for Rice with divisor 128 and M <= 256.
  const auto golomb = GolombCodedSet::build(keys, {.coding = GolombCodedSet::Coding::golomb}).serialize();
  expect_errc(Errc::corrupt, [&] { GolombCodedSet::load(rewrite(golomb, [](auto& p) { p[6] = std::byte{1}; }, {})); });
  expect_errc(Errc::corrupt, [&] { GolombCodedSet::load(rewrite(file, [](auto& p) { set_u64(p, 32, 1); }, {})); });
  expect_errc(Errc::corrupt, [&] { GolombCodedSet::load(rewrite(file, [](auto& p) { set_u64(p, 40, 12345); }, {})); });
  expect_errc(Errc::corrupt, [&] { GolombCodedSet::load(rewrite(file, [](auto& p) { set_u64(p, 48, 178); }, {})); });
  expect_errc(Errc::corrupt, [&] { GolombCodedSet::load(rewrite(file, [](auto& p) { set_u64(p, 24, 5000); }, {})); });
  expect_errc(Errc::corrupt,
              [&] { GolombCodedSet::load(rewrite(file, [&](auto& p) { set_u64(p, 24, s.size() - 1); }, {})); });
  // Hostile sizes: a huge key count is refused by the payload size check, not allocated.
  expect_errc(Errc::truncated, [&] {
    GolombCodedSet::load(rewrite(file, [](auto& p) {
      set_u64(p, 16, uint64_t{1} << 50);
      set_u64(p, 40, uint64_t{256} << 50);
    }, {}));
  });
  expect_errc(Errc::corrupt, [&] { GolombCodedSet::load(rewrite(file, {}, [](auto& q) { q.resize(q.size() + 8); })); });
  // A bucket offset moved: the buckets no longer decode exactly.
  const uint64_t stream_bytes = (s.stream_bits() + 7) / 8;
  const size_t rel_at = static_cast<size_t>((stream_bytes + 7) / 8 * 8 + (s.bucket_count() + 1 + 31) / 32 * 8);
  expect_errc(Errc::corrupt, [&] {
    GolombCodedSet::load(rewrite(file, {}, [&](auto& q) { q[rel_at + 2 * 3] ^= std::byte{1}; }));
  });
  // Flipped stream bits: either still a well-formed set or an error.
  for (size_t bit = 0; bit < 2000; bit += 13) {
    const auto bad = rewrite(file, {}, [&](auto& q) { q[bit / 8] ^= std::byte(1u << (bit % 8)); });
    try {
      const auto t = GolombCodedSet::load(bad);
      EXPECT_EQ(t.decode_all().size(), t.size());
    } catch (const Error& e) {
      EXPECT_TRUE(e.code() == Errc::corrupt || e.code() == Errc::truncated) << e.what();
    }
  }
}

TEST(GolombCodedSet, AnySetAdapter) {
  const auto keys = test::random_keys(10000, 51);
  std::vector<Bytes> views;
  for (const auto& k : keys) views.push_back(as_bytes(k));
  BuildOptions o;
  o.fpp = 0.001;
  auto set = build_set(Kind::gcs, o, views);
  EXPECT_EQ(set->kind(), Kind::gcs);
  EXPECT_FALSE(set->is_dynamic());
  expect_errc(Errc::unsupported, [&] { set->insert(views[0]); });
  auto back = load_set(set->serialize());
  for (Bytes k : views) ASSERT_TRUE(back->contains(k));
  const SetInfo i = back->info();
  EXPECT_EQ(i.items, keys.size());
  EXPECT_EQ(i.format, "amq");
  EXPECT_NEAR(i.fpp_expected, 0.001, 0.0001);
  o.extra["golomb-p"] = "19";
  expect_errc(Errc::invalid_argument, [&] { build_set(Kind::gcs, o, views); });
  o.format = "bip158";
  expect_errc(Errc::invalid_argument, [&] { build_set(Kind::gcs, o, views); });  // no key
  o.extra["siphash-key"] = "000102030405060708090a0b0c0d0e0f";
  auto bip = build_set(Kind::gcs, o, views);
  EXPECT_EQ(bip->info().format, "bip158");
  LoadOptions lo{.format = "bip158", .extra = {{"siphash-key", "000102030405060708090a0b0c0d0e0f"}}};
  auto bip_back = load_set(bip->serialize(), lo);
  for (Bytes k : views) ASSERT_TRUE(bip_back->contains(k));
  EXPECT_EQ(bip_back->serialize(), bip->serialize());
  auto keyless = load_set(bip->serialize(), LoadOptions{.format = "bip158", .extra = {}});
  EXPECT_EQ(keyless->info().items, keys.size());
  expect_errc(Errc::invalid_argument, [&] { (void)keyless->contains(views[0]); });
  o.format = "cache-digest";
  o.extra.clear();
  auto cd = build_set(Kind::gcs, o, views);
  auto cd_back = load_set(cd->serialize(), LoadOptions{.format = "cache-digest", .extra = {}});
  for (Bytes k : views) ASSERT_TRUE(cd_back->contains(k));
  EXPECT_EQ(cd_back->info().format, "cache-digest");
  expect_errc(Errc::invalid_argument,
              [&] { load_set(cd->serialize(), LoadOptions{.format = "amq", .extra = {{"golomb-p", "3"}}}); });
}

}  // namespace
}  // namespace amq
