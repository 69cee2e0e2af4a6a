// RibbonFilter: no false negatives (large sets, several seeds, duplicates, empty and
// tiny sets), fractional result bits, the false-positive rate against its bound, the
// size against log2(1/fpp), the container (round trip, memory mapping, truncations,
// bit flips, hostile params), the AnySet adapter and the CLI.
#include "amq/ribbon_filter.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cmath>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "amq/any_set.hpp"
#include "amq/detail/byte_io.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "amq/format.hpp"
#include "test_util.hpp"

namespace amq {
namespace {

using test::kSanitized;

constexpr size_t kBig = kSanitized ? 100'000 : 1'000'000;

using test::code_of;
using test::TempDir;

std::vector<uint64_t> u64_keys(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> k(n);
  for (auto& x : k) x = rng() >> 1;  // the top bit clear: absent keys below set it
  return k;
}

// Absent keys: the top bit set, so never among u64_keys.
uint64_t absent_key(uint64_t i) { return detail::splitmix64(i) | (uint64_t{1} << 63); }

double measured_fpp(const RibbonFilter& f, uint64_t probes, uint64_t salt) {
  uint64_t fp = 0;
  for (uint64_t i = 0; i < probes; ++i) fp += f.contains(absent_key(i ^ (salt << 40)));
  return static_cast<double>(fp) / static_cast<double>(probes);
}

// The bound the task sets (eps x 1.05) plus four standard deviations of sampling noise.
double fpp_bound(double eps, uint64_t probes) { return eps * 1.05 + 4 * std::sqrt(eps / static_cast<double>(probes)); }

TEST(RibbonFilter, NoFalseNegativesLargeSetsSeveralSeeds) {
  for (uint64_t seed : {0u, 1u, 77u}) {
    const auto keys = u64_keys(kBig, 1000 + seed);
    const auto f = RibbonFilter::build(keys, 0.01, seed);
    EXPECT_EQ(f.seed(), seed);
    for (uint64_t k : keys) ASSERT_TRUE(f.contains(k)) << "key " << k << " seed " << seed;
    // contains_many agrees, in batches of any length.
    std::unique_ptr<bool[]> out(new bool[keys.size()]);
    EXPECT_EQ(f.contains_many(keys, std::span<bool>(out.get(), keys.size())), keys.size());
  }
}

TEST(RibbonFilter, KeysAreBytesAndU64KeysAreTheirEightBytes) {
  const auto f = RibbonFilter::build(std::vector<uint64_t>{7, 8, 9}, 0.001);
  const uint64_t seven = 7;
  EXPECT_TRUE(f.contains(Bytes(reinterpret_cast<const std::byte*>(&seven), 8)));
  const auto words = test::random_keys(5000, 3);
  const auto g = RibbonFilter::build(words, 0.001, 5);
  for (const auto& w : words) ASSERT_TRUE(g.contains(w));
  std::vector<Bytes> views;
  for (const auto& w : words) views.push_back(as_bytes(w));
  const auto h = RibbonFilter::build(views, 0.001, 5);
  EXPECT_TRUE(h == g);
  // from_hashes with the same hashes gives the same filter.
  std::vector<uint64_t> hashes;
  for (const auto& w : words) hashes.push_back(Xxh3Hasher{.seed = 5}(as_bytes(w)));
  EXPECT_TRUE(RibbonFilter::from_hashes(hashes, 0.001, 5) == g);
}

TEST(RibbonFilter, DuplicateKeysAreDropped) {
  auto keys = u64_keys(100'000, 9);
  const size_t distinct = keys.size();
  std::vector<uint64_t> with_dups = keys;
  for (size_t i = 0; i < keys.size(); i += 3) with_dups.push_back(keys[i]);
  for (size_t i = 0; i < keys.size(); i += 7) with_dups.push_back(keys[i]);
  std::shuffle(with_dups.begin(), with_dups.end(), std::mt19937_64(4));
  const auto f = RibbonFilter::build(with_dups, 0.01);
  for (uint64_t k : keys) ASSERT_TRUE(f.contains(k));
  EXPECT_EQ(f.size(), distinct);
  // Sized for the keys given, duplicates included, but holding the distinct ones: the
  // rate does not rise.
  EXPECT_LE(measured_fpp(f, 200'000, 1), fpp_bound(0.01, 200'000));
  // One key many times.
  const std::vector<std::string> same(10'000, "same");
  const auto g = RibbonFilter::build(same, 0.01);
  EXPECT_TRUE(g.contains("same"));
  EXPECT_EQ(g.size(), 1u);
}

TEST(RibbonFilter, EmptyOneAndSmallSets) {
  const auto e = RibbonFilter::build(std::vector<std::string>{}, 0.01);
  EXPECT_EQ(e.size(), 0u);
  EXPECT_LE(measured_fpp(e, 100'000, 2), fpp_bound(0.01, 100'000));
  EXPECT_TRUE(RibbonFilter::load(e.serialize()) == e);
  const auto one = RibbonFilter::build(std::vector<std::string>{"only"}, 0.001);
  EXPECT_TRUE(one.contains("only"));
  EXPECT_EQ(one.size(), 1u);
  for (size_t n = 1; n <= 300; n += (n < 70 ? 1 : 23)) {
    for (double p : {0.5, 0.3, 0.01, 0.003, 1.0 / 65536}) {
      const auto keys = u64_keys(n, n * 31);
      const auto f = RibbonFilter::build(keys, p, n);
      for (uint64_t k : keys) ASSERT_TRUE(f.contains(k)) << n << " keys at " << p;
      EXPECT_LE(f.expected_fpp(), p);
    }
  }
}

TEST(RibbonFilter, FractionalResultBits) {
  const auto keys = u64_keys(100'000, 12);
  const auto f = RibbonFilter::build(keys, 0.003);
  EXPECT_EQ(f.lower_columns(), 8u);
  EXPECT_GT(f.lower_blocks(), 0u);
  EXPECT_LT(f.lower_blocks(), f.num_blocks());
  EXPECT_GT(f.bits_per_slot(), 8.0);
  EXPECT_LT(f.bits_per_slot(), 9.0);
  EXPECT_LE(f.expected_fpp(), 0.003);
  EXPECT_GT(f.expected_fpp(), 0.0029);
  const double bits_per_key = 8.0 * static_cast<double>(f.size_in_bytes()) / 100'000;
  EXPECT_LT(bits_per_key, 9.0);  // not rounded up to 9-bit fingerprints (plus overhead)
  EXPECT_LE(measured_fpp(f, 1'000'000, 3), fpp_bound(0.003, 1'000'000));
  for (uint64_t k : keys) ASSERT_TRUE(f.contains(k));
  // A power of two needs no mixing.
  const auto g = RibbonFilter::build(keys, 1.0 / 256);
  EXPECT_EQ(g.lower_columns(), 8u);
  EXPECT_EQ(g.lower_blocks(), g.num_blocks());
  EXPECT_DOUBLE_EQ(g.expected_fpp(), 1.0 / 256);
}

TEST(RibbonFilter, FalsePositiveRateAndSizeWithinBounds) {
  struct Case {
    double eps;
    uint64_t probes;
  };
  // At 2^-16 a million probes expect 15 false positives: four million give a bound
  // (eps x 1.05 + 4 sigma) of 1.45 eps instead of 2.1 eps.
  for (const Case c : {Case{0.01, 1'000'000}, Case{0.001, 1'000'000}, Case{1.0 / 65536, 4'000'000}}) {
    const auto keys = u64_keys(kBig, 21);
    const auto f = RibbonFilter::build(keys, c.eps);
    EXPECT_LE(f.expected_fpp(), c.eps);
    const uint64_t probes = kSanitized ? c.probes / 10 : c.probes;
    const double measured = measured_fpp(f, probes, 5);
    EXPECT_LE(measured, fpp_bound(c.eps, probes)) << "eps " << c.eps;
    EXPECT_GT(measured, c.eps / 2) << "eps " << c.eps;  // the rate is real, not a trivial filter
    const double bits_per_key = 8.0 * static_cast<double>(f.size_in_bytes()) / static_cast<double>(keys.size());
    EXPECT_LE(bits_per_key, 1.08 * std::log2(1 / c.eps)) << "eps " << c.eps;
  }
}

TEST(RibbonFilter, VectorAndPortableLookupsAgree) {
  for (double p : {0.3, 0.01, 0.003, 0.001, 1.0 / 65536, 1e-9}) {
    const auto keys = u64_keys(3000, 61);
    const auto f = RibbonFilter::build(keys, p);
    std::vector<uint64_t> hashes;
    for (uint64_t i = 0; i < 200'000; ++i) hashes.push_back(detail::splitmix64(i + 99));
    for (uint64_t k : keys) hashes.push_back(Xxh3Hasher{}(KeyView(k).bytes()));
    std::unique_ptr<bool[]> many(new bool[hashes.size()]);
    f.contains_many_hashes(hashes, std::span<bool>(many.get(), hashes.size()));
    for (size_t i = 0; i < hashes.size(); ++i) {
      ASSERT_EQ(f.contains_hash(hashes[i]), f.contains_hash_portable(hashes[i])) << p << " " << i;
      ASSERT_EQ(many[i], f.contains_hash(hashes[i]));
    }
  }
}

// The vector lookup reads whole groups of 8 columns with plain loads; start blocks near
// the end take the scalar path so that no read passes the solution (ASan checks this on
// filters whose last blocks are small: few keys, few columns).
TEST(RibbonFilter, VectorLookupsOnSmallFiltersStayInBounds) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{7}, size_t{64}, size_t{300}}) {
    for (double p : {0.6, 0.3, 0.2, 0.01, 1.0 / 512, 1.0 / 65536, 1e-12}) {
      const auto keys = u64_keys(n, 63);
      const auto f = RibbonFilter::build(keys, p);
      for (uint64_t i = 0; i < 20'000; ++i) {
        const uint64_t h = detail::splitmix64(i + 7);
        ASSERT_EQ(f.contains_hash(h), f.contains_hash_portable(h)) << n << " " << p << " " << i;
      }
      for (uint64_t k : keys) ASSERT_TRUE(f.contains(k)) << n << " " << p;
    }
  }
}

TEST(RibbonFilter, BatchesWithAndWithoutPrefetchAgree) {
  const auto keys = u64_keys(20'000, 62);
  auto f = RibbonFilter::build(keys, 0.003);
  for (bool pf : {false, true}) {
    f.prefetch_batches(pf);
    for (size_t n : {size_t{0}, size_t{1}, RibbonFilter::kChunk - 1, RibbonFilter::kChunk, RibbonFilter::kChunk + 1,
                     3 * RibbonFilter::kChunk + 5, size_t{40'000}}) {
      std::vector<uint64_t> probe, hashes;
      for (size_t i = 0; i < n; ++i) probe.push_back(i % 2 ? keys[i % keys.size()] : absent_key(i));
      for (uint64_t k : probe) hashes.push_back(Xxh3Hasher{}(KeyView(k).bytes()));
      std::unique_ptr<bool[]> a(new bool[n + 1]), b(new bool[n + 1]);
      const size_t found_a = f.contains_many(probe, std::span<bool>(a.get(), n));
      const size_t found_b = f.contains_many_hashes(hashes, std::span<bool>(b.get(), n));
      size_t expect = 0;
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(a[i], f.contains(probe[i])) << pf << " " << n << " " << i;
        ASSERT_EQ(b[i], a[i]);
        expect += a[i];
        if (i % 2) {
          ASSERT_TRUE(a[i]);
        }
      }
      EXPECT_EQ(found_a, expect);
      EXPECT_EQ(found_b, expect);
    }
  }
}

TEST(RibbonFilter, OutOfMemoryIsAnError) {
  if (kSanitized) GTEST_SKIP() << "an address-space limit and the sanitizer's shadow memory do not mix";
  std::vector<uint64_t> hashes(4'000'000);
  for (uint64_t i = 0; i < hashes.size(); ++i) hashes[i] = detail::splitmix64(i);
  // The address space in use now, plus 64 MiB: construction needs ~170 MB more.
  unsigned long pages = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%lu", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  if (pages == 0) GTEST_SKIP() << "no /proc/self/statm";
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &old), 0);
  rlimit tight = old;
  tight.rlim_cur = pages * 4096 + (rlim_t{64} << 20);
  if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < tight.rlim_cur) GTEST_SKIP() << "already limited";
  ASSERT_EQ(setrlimit(RLIMIT_AS, &tight), 0);
  Errc code = Errc::io;
  try {
    RibbonFilter::from_hashes(hashes, 0.01);
  } catch (const Error& e) {
    code = e.code();
  } catch (...) {
  }
  ASSERT_EQ(setrlimit(RLIMIT_AS, &old), 0);
  EXPECT_EQ(code, Errc::too_large);
}

TEST(RibbonFilter, RejectsBadRates) {
  const std::vector<uint64_t> keys{1, 2};
  for (double p : {0.0, 1.0, -0.5, 2.0, std::nan(""), 1e-30})
    EXPECT_EQ(code_of([&] { RibbonFilter::build(keys, p); }), Errc::invalid_argument) << p;
}

TEST(RibbonFilter, ContainerRoundTripAndMappedFile) {
  const auto keys = u64_keys(20'000, 33);
  const auto f = RibbonFilter::build(keys, 0.002, 9);
  const auto bytes = f.serialize();
  EXPECT_EQ(container_kind(bytes), Kind::ribbon);
  const auto g = RibbonFilter::load(bytes);
  EXPECT_TRUE(g == f);
  EXPECT_FALSE(g.is_mapped());
  TempDir dir;
  write_file_atomic(dir.file("f.amq"), bytes);
  const auto m = RibbonFilter::open(dir.file("f.amq"));
  EXPECT_TRUE(m.is_mapped());
  EXPECT_TRUE(m == f);
  for (uint64_t k : keys) ASSERT_TRUE(m.contains(k));
  for (uint64_t i = 0; i < 100'000; ++i) ASSERT_EQ(m.contains(absent_key(i)), f.contains(absent_key(i)));
  // A copy of a mapped filter outlives the original.
  std::unique_ptr<RibbonFilter> copy;
  {
    auto tmp = RibbonFilter::open(dir.file("f.amq"));
    copy = std::make_unique<RibbonFilter>(tmp);
  }
  EXPECT_TRUE(*copy == f);
  // Errors name the path.
  write_file_atomic(dir.file("bad.amq"), std::span(bytes).first(bytes.size() - 1));
  try {
    RibbonFilter::open(dir.file("bad.amq"));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.amq"), std::string::npos) << e.what();
  }
}

TEST(RibbonFilter, EveryTruncationAndBitFlipRejectedOrHarmless) {
  const auto keys = u64_keys(40, 44);
  const auto f = RibbonFilter::build(keys, 0.01);
  const auto bytes = f.serialize();
  for (size_t len = 0; len < bytes.size(); ++len)
    EXPECT_NE(code_of([&] { RibbonFilter::load(std::span(bytes).first(len)); }), Errc::io) << len;
  for (size_t bit = 0; bit < bytes.size() * 8; ++bit) {
    auto bad = bytes;
    bad[bit / 8] ^= std::byte{static_cast<uint8_t>(1u << (bit % 8))};
    try {
      const auto g = RibbonFilter::load(bad);
      for (uint64_t k : keys) ASSERT_TRUE(g.contains(k)) << "bit " << bit;
    } catch (const Error&) {
    }
  }
}

// Params as the format documents them, wrapped with a valid checksum.
std::vector<std::byte> make_file(uint32_t hasher, uint32_t width, uint64_t keys, uint64_t blocks, uint64_t lower,
                                 uint32_t cols, uint32_t reserved, size_t payload_words) {
  detail::ByteWriter p;
  p.u32(hasher);
  p.u32(width);
  p.u64(0);
  p.u64(0);
  p.u64(keys);
  p.u64(blocks);
  p.u64(lower);
  p.u32(cols);
  p.u32(reserved);
  std::vector<std::byte> payload(payload_words * 8);
  return write_container(Kind::ribbon, p.buffer(), payload);
}

TEST(RibbonFilter, HostileParamsRejectedBeforeAllocation) {
  // A valid shape: 3 blocks, 2 lower of 4 columns, the last of 5: 13 words.
  EXPECT_NO_THROW(RibbonFilter::load(make_file(1, 128, 10, 3, 2, 4, 0, 13)));
  EXPECT_EQ(code_of([] { RibbonFilter::load(make_file(2, 128, 10, 3, 2, 4, 0, 13)); }), Errc::unsupported);
  EXPECT_EQ(code_of([] { RibbonFilter::load(make_file(1, 64, 10, 3, 2, 4, 0, 13)); }), Errc::unsupported);
  EXPECT_EQ(code_of([] { RibbonFilter::load(make_file(1, 128, 10, 3, 2, 4, 1, 13)); }), Errc::corrupt);
  EXPECT_EQ(code_of([] { RibbonFilter::load(make_file(1, 128, 10, 2, 2, 4, 0, 8)); }), Errc::corrupt);
  EXPECT_EQ(code_of([] { RibbonFilter::load(make_file(1, 128, 10, 3, 4, 4, 0, 12)); }), Errc::corrupt);
  EXPECT_EQ(code_of([] { RibbonFilter::load(make_file(1, 128, 10, 3, 3, 64, 0, 192)); }), Errc::corrupt);
  EXPECT_EQ(code_of([] { RibbonFilter::load(make_file(1, 128, 193, 3, 2, 4, 0, 13)); }), Errc::corrupt);
  EXPECT_EQ(code_of([] { RibbonFilter::load(make_file(1, 128, 10, 3, 2, 4, 0, 12)); }), Errc::truncated);
  EXPECT_EQ(code_of([] { RibbonFilter::load(make_file(1, 128, 10, 3, 2, 4, 0, 14)); }), Errc::corrupt);
  // Sizes far beyond the file: refused from the params alone.
  EXPECT_EQ(code_of([] { RibbonFilter::load(make_file(1, 128, 10, uint64_t{1} << 41, 0, 4, 0, 13)); }),
            Errc::too_large);
  EXPECT_EQ(code_of([] { RibbonFilter::load(make_file(1, 128, 10, uint64_t{1} << 40, 0, 63, 0, 13)); }),
            Errc::truncated);
  // Another kind's file.
  EXPECT_EQ(code_of([] { RibbonFilter::load(write_container(Kind::gcs, {}, {})); }), Errc::wrong_kind);
  // Every bit of the params flipped, with a valid checksum: an error or a filter that
  // answers (a false negative is allowed: the params say another filter).
  const auto good = make_file(1, 128, 10, 3, 2, 4, 0, 13);
  const Container c = parse_container(good);
  for (size_t bit = 0; bit < c.params.size() * 8; ++bit) {
    std::vector<std::byte> params(c.params.begin(), c.params.end());
    params[bit / 8] ^= std::byte{static_cast<uint8_t>(1u << (bit % 8))};
    try {
      const auto g = RibbonFilter::load(write_container(Kind::ribbon, params, c.payload));
      for (uint64_t i = 0; i < 1000; ++i) (void)g.contains(i);
    } catch (const Error&) {
    }
  }
}

TEST(RibbonFilter, KindName) {
  EXPECT_EQ(kind_name(Kind::ribbon), "ribbon");
  EXPECT_EQ(kind_from_name("ribbon"), Kind::ribbon);
  EXPECT_EQ(static_cast<int>(Kind::ribbon), 9);
}

TEST(RibbonFilter, AnySetBuildSaveLoadQueryInfo) {
  const auto words = test::random_keys(3000, 8);
  std::vector<Bytes> views;
  for (const auto& w : words) views.push_back(as_bytes(w));
  BuildOptions opt;
  opt.fpp = 0.001;
  opt.seed = 3;
  const auto set = build_set(Kind::ribbon, opt, views);
  EXPECT_EQ(set->kind(), Kind::ribbon);
  EXPECT_FALSE(set->is_dynamic());
  EXPECT_EQ(code_of([&] { set->insert(as_bytes("x")); }), Errc::unsupported);
  TempDir dir;
  write_file_atomic(dir.file("s.amq"), set->serialize());
  const auto loaded = load_set(read_file(dir.file("s.amq")));
  const auto opened = open_set(dir.file("s.amq"));
  for (const auto* s : {set.get(), loaded.get(), opened.get()}) {
    std::unique_ptr<bool[]> hit(new bool[views.size()]);
    EXPECT_EQ(s->contains_many(views, std::span<bool>(hit.get(), views.size())), views.size());
    for (Bytes v : views) ASSERT_TRUE(s->contains(v));
    const SetInfo i = s->info();
    EXPECT_EQ(i.kind, Kind::ribbon);
    EXPECT_EQ(i.items, words.size());
    EXPECT_LE(i.fpp_expected, 0.001);
    auto param = [&](const std::string& name) {
      for (const auto& [k, v] : i.params)
        if (k == name) return v;
      return std::string("(missing)");
    };
    EXPECT_EQ(param("ribbon_width"), "128");
    EXPECT_EQ(param("result_bits").substr(0, 5), "9/10 ");
    EXPECT_NE(param("slots"), "(missing)");
    EXPECT_EQ(param("mapped"), s == opened.get() ? "yes" : "no");
  }
  BuildOptions guava = opt;
  guava.format = "guava";
  EXPECT_EQ(code_of([&] { build_set(Kind::ribbon, guava, views); }), Errc::invalid_argument);
}

#ifdef AMQ_CLI
std::string amq_cmd() { return "'" + test::cli() + "'"; }

TEST(RibbonFilter, Cli) {
  TempDir dir;
  std::string keys, others;
  for (int i = 0; i < 5000; ++i) keys += "key-" + std::to_string(i) + "\n";
  for (int i = 0; i < 20000; ++i) others += "other-" + std::to_string(i) + "\n";
  {
    std::ofstream(dir.file("keys"), std::ios::binary) << keys;
  }
  const std::string set = dir.file("s.amq");
  auto r = test::run(amq_cmd() + " build -t ribbon -p 0.001 -o '" + set + "' '" + dir.file("keys") + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  r = test::run(amq_cmd() + " query '" + set + "'", keys);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, keys);
  r = test::run(amq_cmd() + " query -c '" + set + "'", others);
  EXPECT_LT(std::stoi(r.out), 60);  // 20000 x 0.001 expected
  r = test::run(amq_cmd() + " info --json '" + set + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"kind\":\"ribbon\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"items\":5000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"ribbon_width\":128"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"result_bits\":\"9/10"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"mapped\":\"yes\""), std::string::npos) << r.out;
  std::ifstream in(set, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bytes[bytes.size() / 2] ^= 1;
  std::ofstream(dir.file("bad.amq"), std::ios::binary) << bytes;
  r = test::run(amq_cmd() + " query '" + dir.file("bad.amq") + "' key-1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("checksum"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bad.amq"), std::string::npos) << r.err;
}
#endif

}  // namespace
}  // namespace amq
