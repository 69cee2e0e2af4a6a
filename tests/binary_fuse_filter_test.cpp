// BinaryFuseFilter: no false negatives at every width, arity and size (empty, one key,
// repeats, 10^6 keys under several seeds), the false-positive rate, the layout's
// size, the container (round trip, memory-mapped, every truncation and bit flip, and
// hand-made hostile params), and the AnySet adapter and CLI.
#include "amq/binary_fuse_filter.hpp"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cmath>
#include <cstring>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "amq/any_set.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "amq/format.hpp"
#include "test_util.hpp"

namespace amq {
namespace {

using test::kSanitized;

// 10^6 in Release, a tenth under the sanitizers (or when AMQ_SANITIZE is set).
size_t big() {
  const char* env = std::getenv("AMQ_SANITIZE");
  const bool sanitize = kSanitized || (env && std::string(env) == "ON");
  return sanitize ? 100'000 : 1'000'000;
}

std::vector<uint64_t> random_u64(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> v(n);
  for (auto& x : v) x = rng();
  return v;
}

BinaryFuseOptions opts(unsigned arity, unsigned bits, uint64_t seed = 0) {
  BinaryFuseOptions o;
  o.arity = arity;
  o.fingerprint_bits = bits;
  o.seed = seed;
  return o;
}

TEST(BinaryFuseFilter, EmptyAndOneKey) {
  const BinaryFuseFilter e;
  EXPECT_TRUE(e.empty());
  EXPECT_FALSE(e.contains("x"));
  EXPECT_EQ(e.expected_fpp(), 0.0);
  EXPECT_FALSE(BinaryFuseFilter::load(e.serialize()).contains("x"));
  for (unsigned arity : {3u, 4u}) {
    const std::vector<std::string> none;
    const auto z = BinaryFuseFilter::build(none, opts(arity, 8));
    EXPECT_EQ(z.size(), 0u);
    EXPECT_EQ(z.size_in_bytes(), 0u);
    EXPECT_FALSE(z.contains("a"));
    const std::vector<std::string> one = {"only"};
    const auto f = BinaryFuseFilter::build(one, opts(arity, 16));
    EXPECT_EQ(f.size(), 1u);
    EXPECT_TRUE(f.contains("only"));
    EXPECT_LE(f.slot_count(), 4u * arity);  // one segment a position: a few dozen bytes
  }
}

TEST(BinaryFuseFilter, EveryWidthArityAndSmallSize) {
  // Sizes 2..1000 (all of 2..40, then a spread), every width, both arities.
  std::vector<size_t> sizes;
  for (size_t n = 2; n <= 40; ++n) sizes.push_back(n);
  for (size_t n : {50, 64, 99, 128, 200, 255, 256, 257, 400, 511, 777, 1000}) sizes.push_back(n);
  for (unsigned arity : {3u, 4u})
    for (unsigned w = 1; w <= 32; ++w)
      for (size_t n : sizes) {
        const auto keys = random_u64(n, n * 131 + w);
        const auto f = BinaryFuseFilter::build(keys, opts(arity, w, n));
        ASSERT_EQ(f.size(), n);
        ASSERT_EQ(f.fingerprint_bits(), w);
        for (uint64_t k : keys) ASSERT_TRUE(f.contains(k)) << "n=" << n << " w=" << w << " arity=" << arity;
        // Packed or not, the stored form answers the same.
        if (n % 7 == 0) {
          const auto g = BinaryFuseFilter::load(f.serialize());
          for (uint64_t k : keys) ASSERT_TRUE(g.contains(k));
        }
      }
}

TEST(BinaryFuseFilter, NoFalseNegativesManyKeysSeveralSeeds) {
  const size_t n = big();
  for (uint64_t seed : {1u, 2u, 3u}) {
    const auto keys = random_u64(n, seed);
    for (unsigned arity : {3u, 4u}) {
      const auto f = BinaryFuseFilter::build(keys, opts(arity, seed == 2 ? 16 : 8, seed));
      size_t missing = 0;
      for (uint64_t k : keys) missing += !f.contains(k);
      EXPECT_EQ(missing, 0u);
      std::unique_ptr<bool[]> out(new bool[keys.size()]);
      EXPECT_EQ(f.contains_many(keys, std::span<bool>(out.get(), keys.size())), keys.size());
    }
  }
}

// Beyond kPrefetchBytes contains_many takes its prefetching path: the same answers
// as contains, present and absent keys alike, for every lane kind.
TEST(BinaryFuseFilter, ContainsManyPrefetchedMatchesContains) {
  for (unsigned w : {32u, 21u}) {
    const size_t n = BinaryFuseFilter::kPrefetchBytes * 8 / w + 1000;  // just past the threshold
    const auto keys = random_u64(n, w);
    const auto f = BinaryFuseFilter::build(keys, opts(4, w));
    ASSERT_GE(f.size_in_bytes(), BinaryFuseFilter::kPrefetchBytes);
    std::vector<uint64_t> probe(keys.begin(), keys.begin() + 5000);
    for (int i = 0; i < 5000; ++i) probe.push_back(keys[i] ^ 1);
    std::unique_ptr<bool[]> out(new bool[probe.size()]);
    const size_t found = f.contains_many(probe, std::span<bool>(out.get(), probe.size()));
    size_t expect = 0;
    for (size_t i = 0; i < probe.size(); ++i) {
      ASSERT_EQ(out[i], f.contains(probe[i])) << i;
      expect += out[i];
      if (i < 5000) {
        ASSERT_TRUE(out[i]);
      }
    }
    EXPECT_EQ(found, expect);
  }
}

// A lookup written from docs/format.md alone, on the file's bytes (no code shared with
// the filter's kernels): the reference every lookup kernel is held to.
uint64_t le(std::span<const std::byte> b, size_t at, size_t len) {
  uint64_t v = 0;
  for (size_t i = 0; i < len; ++i) v |= uint64_t{std::to_integer<uint8_t>(b[at + i])} << (8 * i);
  return v;
}
struct Reference {
  explicit Reference(std::span<const std::byte> file) : c(parse_container(file, Kind::binary_fuse)) {}
  bool contains_hash(uint64_t h) const {
    const unsigned a = std::to_integer<unsigned>(c.params[4]), w = std::to_integer<unsigned>(c.params[5]);
    const uint64_t seed = le(c.params, 16, 8), n = le(c.params, 24, 8), L = le(c.params, 32, 4), S = le(c.params, 36, 4);
    if (n == 0) return false;
    uint64_t x = h + seed;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    const uint64_t M = L - 1;
    uint64_t p[4];
    p[0] = static_cast<uint64_t>((static_cast<unsigned __int128>(x) * (S * L)) >> 64);
    p[1] = (p[0] + L) ^ ((x >> 18) & M);
    p[2] = (p[0] + 2 * L) ^ (x & M);
    p[3] = (p[0] + 3 * L) ^ (((x * 0x9E3779B97F4A7C15ULL) >> 40) & M);
    uint64_t v = 0;
    for (unsigned j = 0; j < a; ++j)
      for (unsigned b = 0; b < w; ++b) {  // slot p[j]: bits p[j]*w .. of the payload
        const uint64_t bit = p[j] * w + b;
        v ^= uint64_t{(std::to_integer<unsigned>(c.payload[bit / 8]) >> (bit % 8)) & 1u} << b;
      }
    return v == ((x ^ (x >> 32)) & ((uint64_t{1} << w) - 1));
  }
  bool contains(Bytes key) const {
    const uint64_t hasher = le(c.params, 0, 4), hash_seed = le(c.params, 8, 8);
    if (hasher == 5 && key.size() == 8) return contains_hash(le(key, 0, 8));
    return contains_hash(XXH3_64bits_withSeed(key.data(), key.size(), hash_seed));
  }
  Container c;
};
std::string eight_bytes(uint64_t v) {
  std::string s(8, '\0');
  for (int b = 0; b < 8; ++b) s[b] = static_cast<char>(v >> (8 * b));
  return s;
}

// A hasher-1 file (keys hashed with XXH3, as files written before hasher 5): the layout
// built from the keys' XXH3 hashes, its hasher id rewritten.
std::vector<std::byte> xxh3_file(std::span<const uint64_t> xxh3, const BinaryFuseOptions& o) {
  const auto g = BinaryFuseFilter::build_hashes(xxh3, o).serialize();
  const Container c = parse_container(g, Kind::binary_fuse);
  std::vector<std::byte> params(c.params.begin(), c.params.end());
  params[0] = std::byte{1};
  return write_container(Kind::binary_fuse, params, c.payload);
}

// Each filter answers through the lookup kernel of its shape (width 8, 16, 32 or
// bit-packed; 3- or 4-wise) and hasher (5, or 1 for older files), picked when it is built
// or loaded; single lookups (integer keys, 8-byte and other byte keys, hashes) and
// batches below and beyond kPrefetchBytes must all agree with the reference: true for
// every key, and the same false positives.
TEST(BinaryFuseFilter, EveryKernelAgreesWithAStraightforwardLookup) {
  std::vector<std::string> keys;
  const auto ints = random_u64(2000, 77);
  for (uint64_t v : ints) keys.push_back(eight_bytes(v));  // 8-byte keys, the integers' bytes
  for (int i = 0; i < 1000; ++i) keys.push_back("key-" + std::to_string(i));      // other lengths
  std::vector<std::string> absent_strings;
  for (int i = 0; i < 3000; ++i) absent_strings.push_back(i % 2 ? "absent-" + std::to_string(i) : "abs" + std::to_string(10000 + i));
  const auto absent_ints = random_u64(3000, 78);
  const uint64_t hash_seed = 11;
  std::vector<uint64_t> xxh3;  // every key's XXH3-64: a hasher-1 filter's hashes
  for (const auto& k : keys) xxh3.push_back(XXH3_64bits_withSeed(k.data(), k.size(), hash_seed));
  const std::vector<std::string> all_strings = [&] {
    auto v = keys;
    v.insert(v.end(), absent_strings.begin(), absent_strings.end());
    return v;
  }();
  const std::vector<uint64_t> all_ints = [&] {
    auto v = ints;
    v.insert(v.end(), absent_ints.begin(), absent_ints.end());
    return v;
  }();
  for (unsigned arity : {3u, 4u})
    for (unsigned w : {8u, 16u, 32u, 7u, 21u})
      for (uint32_t hasher : {5u, 1u}) {
        SCOPED_TRACE("arity " + std::to_string(arity) + " w " + std::to_string(w) + " hasher " + std::to_string(hasher));
        std::vector<std::byte> file;
        if (hasher == 5) {
          file = BinaryFuseFilter::build(keys, opts(arity, w, hash_seed)).serialize();
        } else {
          file = xxh3_file(xxh3, opts(arity, w, hash_seed));
        }
        const auto f = BinaryFuseFilter::load(file);
        const Reference ref(file);
        ASSERT_EQ(f.integer_keys(), hasher == 5);
        ASSERT_EQ(f.arity(), arity);
        ASSERT_EQ(f.fingerprint_bits(), w);
        size_t false_positives = 0, reference_false_positives = 0;
        for (size_t i = 0; i < all_strings.size(); ++i) {
          const auto& k = all_strings[i];
          const bool expect = ref.contains(as_bytes(k));
          if (i < keys.size()) {
            ASSERT_TRUE(f.contains(k)) << i;
          } else {
            false_positives += f.contains(k);
            reference_false_positives += expect;
          }
          ASSERT_EQ(f.contains(k), expect) << i;
        }
        for (size_t i = 0; i < all_ints.size(); ++i) {
          const uint64_t k = all_ints[i];
          const bool expect = ref.contains(as_bytes(eight_bytes(k)));
          if (i < ints.size()) {
            ASSERT_TRUE(f.contains(k)) << i;
          }
          ASSERT_EQ(f.contains(k), expect) << i;
          ASSERT_EQ(f.contains_hash(k), ref.contains_hash(k)) << i;
          if (i >= ints.size()) {
            false_positives += f.contains(k);
            reference_false_positives += expect;
          }
        }
        EXPECT_EQ(false_positives, reference_false_positives);
        if (w <= 8) {
          EXPECT_GT(false_positives, 0u);  // so that the rows compare some false positives
        }
        std::unique_ptr<bool[]> out(new bool[all_strings.size() + all_ints.size()]);
        f.contains_many(all_strings, std::span<bool>(out.get(), all_strings.size()));
        for (size_t i = 0; i < all_strings.size(); ++i) ASSERT_EQ(out[i], f.contains(all_strings[i])) << i;
        f.contains_many(all_ints, std::span<bool>(out.get(), all_ints.size()));
        for (size_t i = 0; i < all_ints.size(); ++i) ASSERT_EQ(out[i], f.contains(all_ints[i])) << i;
      }
}

// The same agreement for batches beyond kPrefetchBytes (the prefetching loop), for the
// default shape (8-bit, 3-wise) under both hashers.
TEST(BinaryFuseFilter, PrefetchedBatchesAgreeWithTheReferenceForBothHashers) {
  const size_t n = BinaryFuseFilter::kPrefetchBytes * 8 / 9 + 1000;  // ~9 bits a key: past the threshold
  const auto keys = random_u64(n, 79);
  std::vector<uint64_t> probe(keys.begin(), keys.begin() + 4000);
  const auto absent = random_u64(4000, 80);
  probe.insert(probe.end(), absent.begin(), absent.end());
  for (uint32_t hasher : {5u, 1u}) {
    std::vector<std::byte> file;
    if (hasher == 5) {
      file = BinaryFuseFilter::build(keys, opts(3, 8, 3)).serialize();
    } else {
      std::vector<uint64_t> xxh3;
      for (uint64_t k : keys) xxh3.push_back(XXH3_64bits_withSeed(eight_bytes(k).data(), 8, 3));
      file = xxh3_file(xxh3, opts(3, 8, 3));
    }
    const auto f = BinaryFuseFilter::load(file);
    const Reference ref(file);
    ASSERT_GE(f.size_in_bytes(), BinaryFuseFilter::kPrefetchBytes);
    std::unique_ptr<bool[]> out(new bool[probe.size()]);
    const size_t found = f.contains_many(probe, std::span<bool>(out.get(), probe.size()));
    size_t expect_found = 0;
    for (size_t i = 0; i < probe.size(); ++i) {
      const bool expect = ref.contains(as_bytes(eight_bytes(probe[i])));
      ASSERT_EQ(out[i], expect) << hasher << " " << i;
      ASSERT_EQ(f.contains(probe[i]), expect) << hasher << " " << i;
      expect_found += expect;
    }
    EXPECT_EQ(found, expect_found);
    EXPECT_GT(expect_found, 4000u);  // some false positives among the absent keys
  }
}

TEST(BinaryFuseFilter, DuplicatesAreDropped) {
  auto keys = random_u64(5000, 9);
  std::vector<uint64_t> with = keys;
  with.insert(with.end(), keys.begin(), keys.begin() + 2000);  // repeats
  for (int i = 0; i < 50; ++i) with.push_back(keys[7]);        // many copies of one key
  std::shuffle(with.begin(), with.end(), std::mt19937_64(4));
  for (unsigned arity : {3u, 4u}) {
    const auto f = BinaryFuseFilter::build(with, opts(arity, 8));
    EXPECT_EQ(f.size(), keys.size());
    for (uint64_t k : keys) ASSERT_TRUE(f.contains(k));
    // From hashes too (the caller's span is copied, not sorted).
    std::vector<uint64_t> hashes = {5, 5, 5, 6, 6, 1};
    const auto g = BinaryFuseFilter::build_hashes(hashes, opts(arity, 12));
    EXPECT_EQ(g.size(), 3u);
    EXPECT_EQ(hashes, (std::vector<uint64_t>{5, 5, 5, 6, 6, 1}));
    for (uint64_t h : hashes) EXPECT_TRUE(g.contains_hash(h));
    // All copies of one key.
    const std::vector<std::string> same(100, "same");
    const auto s = BinaryFuseFilter::build(same, opts(arity, 8));
    EXPECT_EQ(s.size(), 1u);
    EXPECT_TRUE(s.contains("same"));
  }
}

// Key sets whose first construction seed does not peel (found by search): the next seed
// is used, and no key is taken for a repeat and dropped.
TEST(BinaryFuseFilter, ASeedThatDoesNotPeelIsReplacedAndNoKeyDropped) {
  struct Case {
    unsigned arity;
    uint64_t seed;
  };
  for (const Case c : {Case{3, 22}, Case{4, 12}, Case{4, 20}}) {
    std::mt19937_64 rng(c.seed * 31 + 1000);
    std::vector<uint64_t> keys(1000);
    for (auto& k : keys) k = rng();
    const auto f = BinaryFuseFilter::build(keys, opts(c.arity, 8, c.seed));
    uint64_t state = c.seed;
    EXPECT_NE(f.construction_seed(), detail::splitmix64(state + 0x9E3779B97F4A7C15ULL)) << "not a retry";
    EXPECT_EQ(f.size(), keys.size());
    for (uint64_t k : keys) ASSERT_TRUE(f.contains(k));
  }
}

TEST(BinaryFuseFilter, FalsePositiveRateAndSpace) {
  const size_t n = big();
  const auto keys = random_u64(n, 11);
  const auto absent = random_u64(n, 12);  // 64-bit random: disjoint from keys in practice
  for (unsigned w : {8u, 16u})
    for (unsigned arity : {3u, 4u}) {
      const auto f = BinaryFuseFilter::build(keys, opts(arity, w));
      size_t fp = 0;
      for (uint64_t k : absent) fp += f.contains(k);
      const double eps = std::ldexp(1.0, -static_cast<int>(w));
      EXPECT_EQ(f.expected_fpp(), eps);
      // Mean n·ε; allow five standard deviations (and a few hits at 16 bits).
      const double mean = static_cast<double>(n) * eps;
      EXPECT_LE(static_cast<double>(fp), mean + 5 * std::sqrt(mean) + 3) << "w=" << w << " arity=" << arity;
      EXPECT_GE(static_cast<double>(fp), mean - 5 * std::sqrt(mean) - 1);
      const double bits = 8.0 * static_cast<double>(f.size_in_bytes()) / static_cast<double>(n);
      // The paper's size factor for n (1.125 / 1.075 from n ~ 10^6 on), and up to two
      // segments of rounding.
      const double ln = std::log(static_cast<double>(n));
      const double factor = arity == 3 ? std::max(1.125, 0.875 + 0.25 * std::log(1e6) / ln)
                                       : std::max(1.075, 0.77 + 0.305 * std::log(600000.0) / ln);
      const double slack = 2.0 * static_cast<double>(f.segment_length()) / static_cast<double>(n);
      EXPECT_LE(bits, (factor + slack) * w) << "w=" << w << " arity=" << arity;
      if (n >= 1'000'000) {
        EXPECT_LE(bits, (arity == 3 ? 1.135 : 1.085) * w) << "w=" << w << " arity=" << arity;
      }
    }
}

TEST(BinaryFuseFilter, LayoutAndWidthChoice) {
  EXPECT_EQ(BinaryFuseFilter::bits_for_fpp(0.01), 7u);
  EXPECT_EQ(BinaryFuseFilter::bits_for_fpp(1.0 / 256), 8u);
  EXPECT_EQ(BinaryFuseFilter::bits_for_fpp(0.004), 8u);
  EXPECT_EQ(BinaryFuseFilter::bits_for_fpp(0.5), 1u);
  EXPECT_EQ(BinaryFuseFilter::bits_for_fpp(1e-30), 32u);
  EXPECT_THROW(BinaryFuseFilter::bits_for_fpp(0), Error);
  EXPECT_THROW(BinaryFuseFilter::bits_for_fpp(1), Error);
  // Large sets: 4-wise is smaller; tiny ones are not wasteful.
  EXPECT_EQ(BinaryFuseFilter::best_arity(10'000'000), 4u);
  EXPECT_LE(BinaryFuseFilter::slots_for(10, 3), 64u);
  EXPECT_LE(BinaryFuseFilter::slots_for(1000, 3), 1500u);
  EXPECT_LE(BinaryFuseFilter::slots_for(10'000'000, 3), 11'300'000u);
  EXPECT_LE(BinaryFuseFilter::slots_for(10'000'000, 4), 10'800'000u);
  EXPECT_EQ(test::code_of([] { (void)BinaryFuseFilter::build(std::vector<uint64_t>{1}, opts(5, 8)); }),
            Errc::invalid_argument);
  EXPECT_EQ(test::code_of([] { (void)BinaryFuseFilter::build(std::vector<uint64_t>{1}, opts(3, 0)); }),
            Errc::invalid_argument);
  EXPECT_EQ(test::code_of([] { (void)BinaryFuseFilter::build(std::vector<uint64_t>{1}, opts(3, 33)); }),
            Errc::invalid_argument);
}

TEST(BinaryFuseFilter, RoundTripAndMappedFile) {
  const auto keys = test::random_keys(3000, 5);
  test::TempDir dir;
  for (unsigned w : {5u, 8u, 16u, 32u}) {
    const auto f = BinaryFuseFilter::build(keys, opts(w == 5 ? 4 : 3, w, 77));
    const auto file = f.serialize();
    EXPECT_EQ(container_kind(file), Kind::binary_fuse);
    const auto g = BinaryFuseFilter::load(file);
    EXPECT_EQ(g.serialize(), file);
    EXPECT_EQ(g.hash_seed(), 77u);
    EXPECT_FALSE(g.is_mapped());
    const std::string path = dir.file("f" + std::to_string(w) + ".amq");
    write_file_atomic(path, file);
    const auto m = BinaryFuseFilter::open(path);
    EXPECT_TRUE(m.is_mapped());
    EXPECT_EQ(m.size(), f.size());
    for (const auto& k : keys) {
      ASSERT_TRUE(g.contains(k));
      ASSERT_TRUE(m.contains(k));
    }
    for (int i = 0; i < 2000; ++i) {
      const std::string probe = "absent-" + std::to_string(i);
      ASSERT_EQ(m.contains(probe), f.contains(probe));
    }
  }
  EXPECT_EQ(test::code_of([&] { (void)BinaryFuseFilter::open(dir.file("missing.amq")); }), Errc::not_found);
}

// Filters are written with hasher 5: an 8-byte key (a uint64_t key among them) is its
// own little-endian value, which the lookup mixes with the construction seed, so
// contains_hash(k) answers for the integer key k. Byte strings of other lengths are
// still hashed with XXH3-64.
TEST(BinaryFuseFilter, EightByteKeysAreTheirIntegerValue) {
  const auto ints = random_u64(5000, 21);
  for (unsigned arity : {3u, 4u}) {
    const auto f = BinaryFuseFilter::build(ints, opts(arity, 16, 5));
    EXPECT_TRUE(f.integer_keys());
    const auto file = f.serialize();
    uint32_t hasher = 0;
    std::memcpy(&hasher, parse_container(file, Kind::binary_fuse).params.data(), 4);
    EXPECT_EQ(hasher, 5u);
    for (uint64_t k : ints) {
      ASSERT_TRUE(f.contains_hash(k));
      std::string bytes(8, '\0');
      for (int b = 0; b < 8; ++b) bytes[b] = static_cast<char>(k >> (8 * b));
      ASSERT_TRUE(f.contains(bytes));
    }
    const std::vector<std::string> words = {"a", "seven77", "eight888", "nine99999", ""};
    const auto g = BinaryFuseFilter::build(words, opts(arity, 16, 5));
    for (const auto& w : words) EXPECT_TRUE(g.contains(w));
    uint64_t eight = 0;
    std::memcpy(&eight, "eight888", 8);
    EXPECT_TRUE(g.contains_hash(eight));
    EXPECT_TRUE(g.contains_hash(Xxh3Hasher{5}(as_bytes("seven77"))));
  }
}

// A file written before hasher 5 (hasher 1: XXH3-64 of every key, 8-byte ones too)
// still loads and answers for its keys: 24 keys "key0".."key23", 8 keys "8bytes-a".."h"
// and the integers 1, 2, 3, 2^64 - 1 and 42 as 8 bytes; 3-wise, 16-bit, seed 7.
TEST(BinaryFuseFilter, HasherOneFileStillLoads) {
  const std::string hex =
      "414d51460d0a1a0a01000800000000002800000000000000c00000000000000001000000031000000700000000000000"
      "022ab1ba804098e62500000000000000200000000100000070b600000000333c78b10417e93a00000b31000000000000"
      "000000000000000000000000000000000000000000005aa408fa00003b051b79000098888f15892f0b9f609300000000"
      "5aeb0000000000000000cc2482c5000000000000e59d00000000a2000000000000000124000027730000000071a90000"
      "042e1cfc0000287d0000000000000000cbcb000000000000000000004c0707280000c07b41ab6ad700006347000070e7"
      "1e2f0000000000000000723100000000000000000000df6c8d8de76873f12d32";;
  std::vector<std::byte> file(hex.size() / 2);
  for (size_t i = 0; i < file.size(); ++i)
    file[i] = static_cast<std::byte>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  const auto f = BinaryFuseFilter::load(file);
  EXPECT_FALSE(f.integer_keys());
  EXPECT_EQ(f.size(), 37u);
  EXPECT_EQ(f.hash_seed(), 7u);
  EXPECT_EQ(f.serialize(), file);
  for (int i = 0; i < 24; ++i) EXPECT_TRUE(f.contains("key" + std::to_string(i)));
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(f.contains(std::string("8bytes-") + static_cast<char>('a' + i)));
  for (uint64_t v : {uint64_t{1}, uint64_t{2}, uint64_t{3}, ~uint64_t{0}, uint64_t{42}}) EXPECT_TRUE(f.contains(v));
  int false_positives = 0;
  for (uint64_t v = 100; v < 1100; ++v) false_positives += f.contains(v);
  EXPECT_LE(false_positives, 1);  // 2^-16 a key
}

TEST(BinaryFuseFilter, EveryTruncationAndBitFlip) {
  for (unsigned w : {8u, 7u}) {
    const auto keys = test::random_keys(40, w);
    const auto file = BinaryFuseFilter::build(keys, opts(3, w)).serialize();
    for (size_t len = 0; len < file.size(); ++len)
      EXPECT_THROW((void)BinaryFuseFilter::load(std::span(file).first(len)), Error) << len;
    for (size_t bit = 0; bit < file.size() * 8; ++bit) {
      auto bad = file;
      bad[bit / 8] ^= std::byte{static_cast<uint8_t>(1u << (bit % 8))};
      try {
        const auto f = BinaryFuseFilter::load(bad);
        for (const auto& k : keys) ASSERT_TRUE(f.contains(k)) << "bit " << bit;
      } catch (const Error&) {
      }
    }
  }
}

// Params written by hand and wrapped in a valid container: the loader's own checks.
TEST(BinaryFuseFilter, HostileParams) {
  auto params = [](uint32_t hasher, uint8_t arity, uint8_t w, uint16_t reserved, uint64_t n, uint32_t seg_len,
                   uint32_t seg_count) {
    std::vector<std::byte> p(40);
    std::memcpy(p.data(), &hasher, 4);
    p[4] = std::byte{arity};
    p[5] = std::byte{w};
    std::memcpy(p.data() + 6, &reserved, 2);
    std::memcpy(p.data() + 24, &n, 8);
    std::memcpy(p.data() + 32, &seg_len, 4);
    std::memcpy(p.data() + 36, &seg_count, 4);
    return p;
  };
  auto load = [](const std::vector<std::byte>& p, size_t payload) {
    const std::vector<std::byte> zeros(payload);
    return test::code_of([&] { (void)BinaryFuseFilter::load(write_container(Kind::binary_fuse, p, zeros)); });
  };
  // A valid one: 1 key, 3-wise, 8 bits, segments of 4, one segment: 12 slots.
  const auto good = params(1, 3, 8, 0, 1, 4, 1);
  EXPECT_NO_THROW(BinaryFuseFilter::load(write_container(Kind::binary_fuse, good, std::vector<std::byte>(12))));
  EXPECT_EQ(load(good, 11), Errc::corrupt);
  EXPECT_EQ(load(good, 13), Errc::corrupt);
  EXPECT_EQ(load(params(2, 3, 8, 0, 1, 4, 1), 12), Errc::unsupported);
  EXPECT_EQ(load(params(1, 2, 8, 0, 1, 4, 1), 12), Errc::corrupt);
  EXPECT_EQ(load(params(1, 5, 8, 0, 1, 4, 1), 12), Errc::corrupt);
  EXPECT_EQ(load(params(1, 3, 0, 0, 1, 4, 1), 12), Errc::corrupt);
  EXPECT_EQ(load(params(1, 3, 33, 0, 1, 4, 1), 12), Errc::corrupt);
  EXPECT_EQ(load(params(1, 3, 8, 1, 1, 4, 1), 12), Errc::corrupt);
  EXPECT_EQ(load(params(1, 3, 8, 0, 1, 6, 1), 18), Errc::corrupt);          // not a power of two
  EXPECT_EQ(load(params(1, 3, 8, 0, 1, 1u << 19, 1), 3u << 19), Errc::corrupt);  // beyond 2^18
  EXPECT_EQ(load(params(1, 3, 8, 0, 1, 0, 1), 0), Errc::corrupt);
  EXPECT_EQ(load(params(1, 3, 8, 0, 13, 4, 1), 12), Errc::corrupt);         // more keys than slots
  EXPECT_EQ(load(params(1, 3, 8, 0, 0, 4, 1), 12), Errc::corrupt);          // no keys, a segment
  EXPECT_EQ(load(params(1, 3, 8, 0, 1, 4, 0), 0), Errc::corrupt);           // keys, no segment
  // Huge counts do not allocate: the payload size is checked first.
  EXPECT_EQ(load(params(1, 4, 32, 0, ~uint64_t{0}, 1u << 18, ~uint32_t{0}), 16), Errc::corrupt);
  // Packed widths: 12 slots of 7 bits are 84 bits: two words and the zero word.
  const auto packed = params(1, 3, 7, 0, 1, 4, 1);
  EXPECT_NO_THROW(BinaryFuseFilter::load(write_container(Kind::binary_fuse, packed, std::vector<std::byte>(24))));
  auto stray = std::vector<std::byte>(24);
  stray[11] = std::byte{0x80};  // bit 95, past the 84th
  EXPECT_EQ(test::code_of([&] { (void)BinaryFuseFilter::load(write_container(Kind::binary_fuse, packed, stray)); }),
            Errc::corrupt);
  stray = std::vector<std::byte>(24);
  stray[20] = std::byte{1};  // the read-ahead word
  EXPECT_EQ(test::code_of([&] { (void)BinaryFuseFilter::load(write_container(Kind::binary_fuse, packed, stray)); }),
            Errc::corrupt);
  EXPECT_EQ(load(std::vector<std::byte>(good.begin(), good.end() - 1), 12), Errc::truncated);
  auto longer = good;
  longer.push_back(std::byte{0});
  EXPECT_EQ(load(longer, 12), Errc::corrupt);
  EXPECT_EQ(test::code_of([] { (void)BinaryFuseFilter::load(write_container(Kind::bloom, {}, {})); }),
            Errc::wrong_kind);
}

TEST(BinaryFuseFilter, AnySetKindWalk) {
  const auto keys = test::random_keys(2000, 21);
  std::vector<Bytes> views;
  for (const auto& k : keys) views.push_back(as_bytes(k));
  views.push_back(as_bytes(keys[0]));  // a repeat
  BuildOptions o;
  o.fpp = 0.001;
  auto set = build_set(Kind::binary_fuse, o, views);
  EXPECT_EQ(set->kind(), Kind::binary_fuse);
  EXPECT_FALSE(set->is_dynamic());
  EXPECT_THROW(set->insert(as_bytes("x")), Error);
  SetInfo i = set->info();
  EXPECT_EQ(i.items, keys.size());
  EXPECT_EQ(i.fpp_expected, 1.0 / 1024);
  const auto param = [](const SetInfo& info, const std::string& name) {
    for (const auto& [k, v] : info.params)
      if (k == name) return v;
    return std::string("(missing)");
  };
  EXPECT_EQ(param(i, "arity"), std::to_string(BinaryFuseFilter::best_arity(keys.size())));
  EXPECT_EQ(param(i, "fingerprint_bits"), "10");
  EXPECT_EQ(i.bytes, set->serialize().size());
  test::TempDir dir;
  set->write_to([&](std::span<const std::byte> b) { write_file_atomic(dir.file("f.amq"), b); });
  auto loaded = load_set(read_file(dir.file("f.amq")));
  auto opened = open_set(dir.file("f.amq"));
  EXPECT_EQ(opened->info().params.back(), (std::pair<std::string, std::string>{"mapped", "yes"}));
  std::unique_ptr<bool[]> out(new bool[views.size()]);
  EXPECT_EQ(opened->contains_many(views, std::span<bool>(out.get(), views.size())), views.size());
  for (Bytes k : views) {
    ASSERT_TRUE(loaded->contains(k));
    ASSERT_TRUE(opened->contains(k));
  }
  o.extra = {{"fingerprint-bits", "16"}, {"arity", "4"}};
  i = build_set(Kind::binary_fuse, o, views)->info();
  EXPECT_EQ(param(i, "arity"), "4");
  EXPECT_EQ(param(i, "fingerprint_bits"), "16");
  o.extra = {{"arity", "5"}};
  EXPECT_EQ(test::code_of([&] { (void)build_set(Kind::binary_fuse, o, views); }), Errc::invalid_argument);
  o.extra = {{"fingerprint-bits", "x"}};
  EXPECT_EQ(test::code_of([&] { (void)build_set(Kind::binary_fuse, o, views); }), Errc::invalid_argument);
  o.extra = {{"bucket-size", "4"}};
  EXPECT_EQ(test::code_of([&] { (void)build_set(Kind::binary_fuse, o, views); }), Errc::invalid_argument);
  EXPECT_EQ(kind_from_name("binary-fuse"), Kind::binary_fuse);
}

#ifdef AMQ_CLI
TEST(BinaryFuseCli, BuildQueryInfo) {
  test::TempDir dir;
  const std::string f = dir.file("f.amq");
  const std::string amq = "'" + test::cli() + "'";
  auto r = test::run(amq + " build -t binary-fuse -p 0.0001 -o '" + f + "'", "pear\napple\nfig\napple\nkiwi\n");
  ASSERT_EQ(r.status, 0) << r.err;
  r = test::run(amq + " query '" + f + "' fig apple");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  r = test::run(amq + " info '" + f + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("binary-fuse"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fingerprint_bits"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("14"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("segment_length"), std::string::npos) << r.out;
  r = test::run(amq + " build -t binary-fuse --arity 4 --fingerprint-bits 12 -o '" + f + "'", "a\nb\nc\n");
  ASSERT_EQ(r.status, 0) << r.err;
  r = test::run(amq + " info '" + f + "'");
  EXPECT_NE(r.out.find("arity"), std::string::npos) << r.out;
  r = test::run(amq + " build -t binary-fuse --arity 7 -o '" + f + "'", "a\n");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("amq: ", 0), 0u) << r.err;
}
#endif

}  // namespace
}  // namespace amq
