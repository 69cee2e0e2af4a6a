// SuccinctSet and its rank/select bit vectors: the seed's layout example, property
// tests against std::set on random and adversarial key sets (built, loaded and
// memory-mapped sets alike), corruption handling, the AnySet adapter and the CLI.
#include "amq/succinct_set.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "amq/any_set.hpp"
#include "amq/detail/byte_io.hpp"
#include "amq/detail/dispatch.hpp"
#include "amq/detail/rank_select.hpp"
#include "amq/detail/succinct_set_test_peer.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "amq/format.hpp"
#include "test_util.hpp"

namespace amq {
namespace {

using test::kSanitized;

// ---- rank / select -------------------------------------------------------------

template <int Shift>
void check_bits(const std::vector<bool>& bits) {
  detail::BitVector bv;
  for (bool b : bits) bv.push_back(b);
  const auto dir = detail::RankSelect<Shift>::build_directory(bv.words(), bv.size(), true);
  ASSERT_TRUE(detail::RankSelect<Shift>::verify_directory(bv.words(), bv.size(), dir, true));
  detail::RankSelect<Shift> rs(bv.words(), bv.size(), dir, true);
  std::vector<uint64_t> ones;
  uint64_t r = 0;
  for (uint64_t i = 0; i < bits.size(); ++i) {
    ASSERT_EQ(rs.rank1(i), r) << "i=" << i;
    ASSERT_EQ(rs.get(i), bits[i]);
    if (bits[i]) {
      ones.push_back(i);
      ++r;
    }
  }
  ASSERT_EQ(rs.rank1(bits.size()), r);
  ASSERT_EQ(rs.ones(), r);
  // rank1_between over short spans (popcounts of the words) and long ones (ranks).
  for (uint64_t x = 0; x <= bits.size(); x += 1 + x % 7)
    for (uint64_t n : {0, 1, 5, 63, 64, 65, 130}) {
      const uint64_t y = std::min<uint64_t>(bits.size(), x + n);
      ASSERT_EQ(rs.rank1_between(x, y), rs.rank1(y) - rs.rank1(x)) << x << ".." << y;
    }
  for (uint64_t j = 0; j < ones.size(); ++j) ASSERT_EQ(rs.select1(j), ones[j]) << "j=" << j;
  // next_one from every position
  uint64_t next = bits.size();
  for (uint64_t i = bits.size(); i-- > 0;) {
    if (bits[i]) next = i;
    ASSERT_EQ(rs.next_one(i), next);
  }
  // Any changed directory word is noticed.
  if (!dir.empty()) {
    auto bad = dir;
    bad[bad.size() / 2] ^= 1;
    EXPECT_FALSE(detail::RankSelect<Shift>::verify_directory(bv.words(), bv.size(), bad, true));
  }
}

std::vector<bool> random_bits(size_t n, double density, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution d(density);
  std::vector<bool> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = d(rng);
  return v;
}

TEST(RankSelect, MatchesNaiveOnRandomBits) {
  for (size_t n : {0, 1, 63, 64, 65, 511, 512, 2047, 2048, 2049, 10000, 100000})
    for (double density : {0.0, 0.01, 0.5, 0.97, 1.0}) check_bits<32>(random_bits(n, density, n * 7 + 1));
}

TEST(RankSelect, SmallChunksExerciseTheL0Level) {
  // With 4096-bit l0 chunks the 64-bit chunk counts carry real values.
  for (double density : {0.001, 0.3, 0.9, 1.0}) check_bits<12>(random_bits(300000, density, 99));
  check_bits<11>(random_bits(50000, 0.5, 5));
}

TEST(RankSelect, DirectoryOverheadIsAFewPercent) {
  const uint64_t bits = uint64_t{1} << 24;
  const auto rank_only = detail::RankSelect<32>::shape(bits, bits / 2, false);
  EXPECT_LT(static_cast<double>(rank_only.directory_words()) / static_cast<double>(rank_only.words), 0.035);
  const auto with_select = detail::RankSelect<32>::shape(bits, bits / 2, true);  // a LOUDS-like density
  EXPECT_LT(static_cast<double>(with_select.directory_words()) / static_cast<double>(with_select.words), 0.10);
}

// SelectBits against the naive positions, through the portable path and (where the
// CPU has popcnt and BMI2) the hardware one; and verify_directory notices changes.
template <int Shift, bool Compact>
void check_select_bits(const std::vector<bool>& bits) {
  using S = detail::SelectBits<Shift, Compact>;
  detail::BitVector bv;
  for (bool b : bits) bv.push_back(b);
  const auto dir = S::build_directory(bv.words(), bv.size());
  ASSERT_TRUE(S::verify_directory(bv.words(), bv.size(), dir));
  std::vector<uint64_t> ones;
  for (uint64_t i = 0; i < bits.size(); ++i)
    if (bits[i]) ones.push_back(i);
  ASSERT_EQ(dir.size(), S::directory_words(ones.size()));
  const S s(bv.words(), bv.size(), dir);
  ASSERT_EQ(s.ones(), ones.size());
  const bool hw = detail::cpu_has_fast_pdep();
  for (uint64_t j = 0; j < ones.size(); ++j) {
    ASSERT_EQ(s.template select1<false>(j), ones[j]) << "j=" << j;
    ASSERT_EQ(s.template select1_wide<false>(j), ones[j]) << "j=" << j;
    if (hw) {
      ASSERT_EQ(s.template select1<true>(j), ones[j]) << "j=" << j;
      ASSERT_EQ(s.template select1_wide<true>(j), ones[j]) << "j=" << j;
    }
    const uint64_t next = j + 1 < ones.size() ? ones[j + 1] : bits.size();
    for (int path = 0; path < (hw ? 2 : 1); ++path) {
      uint64_t after = 0;
      ASSERT_EQ(path ? s.template select1_from<true>(s.sample(j), j, after)
                     : s.template select1_from<false>(s.sample(j), j, after),
                ones[j]);
      if (after) {
        ASSERT_EQ(ones[j] + 1 + static_cast<uint64_t>(__builtin_ctzll(after)), next);
      } else {
        ASSERT_TRUE(next == bits.size() || (next >> 6) > (ones[j] >> 6));  // not in the same word
      }
    }
  }
  uint64_t next = bits.size();
  for (uint64_t i = bits.size(); i-- > 0;) {
    if (bits[i]) next = i;
    ASSERT_EQ(s.next_one(i), next);
  }
  for (size_t at = 0; at < dir.size(); at += std::max<size_t>(1, dir.size() / 7)) {
    auto bad = dir;
    bad[at] ^= uint64_t{1} << (at % 64);
    EXPECT_FALSE(S::verify_directory(bv.words(), bv.size(), bad)) << at;
  }
  if (!dir.empty()) {
    EXPECT_FALSE(S::verify_directory(bv.words(), bv.size(), std::span(dir).first(dir.size() - 1)));
  }
}

TEST(SelectBits, MatchesNaiveOnRandomBits) {
  for (size_t n : {1, 63, 64, 65, 511, 4096, 100000})
    for (double density : {0.01, 0.5, 0.97, 1.0}) {
      const auto bits = random_bits(n, density, n * 13 + 5);
      check_select_bits<7, true>(bits);
      check_select_bits<9, false>(bits);
      check_select_bits<0, true>(bits);  // a sample per one: 1024-sample groups fill up
    }
  check_select_bits<7, true>({});
}

TEST(SelectBits, LongRunsOfZeros) {
  // Ones far apart: the scan from a sample crosses many empty words.
  std::vector<bool> bits(300000);
  for (size_t i = 0; i < bits.size(); i += 997 + (i % 5) * 1000) bits[i] = true;
  check_select_bits<2, true>(bits);
  check_select_bits<9, false>(bits);
}

TEST(RankSelect, SelectInWord) {
  std::mt19937_64 rng(3);
  for (int t = 0; t < 10000; ++t) {
    const uint64_t x = rng() & rng();
    int r = 0;
    for (int i = 0; i < 64; ++i)
      if ((x >> i) & 1) {
        ASSERT_EQ(detail::select_in_word(x, r), i);
        if (detail::cpu_has_fast_pdep()) {
          ASSERT_EQ(detail::select_in_word<true>(x, r), i);
        }
        ++r;
      }
  }
}

// The end of a select window (window_pick) against the plain choice, for every rem
// around counts with equal neighbours, zeros and large values.
TEST(RankSelect, WindowPick) {
  const uint64_t words[7] = {1, 2, 3, 4, 5, 6, 7};
  const uint64_t counts[][5] = {{0, 0, 0, 0, 0}, {1, 2, 3, 4, 5}, {3, 3, 7, 7, 7}, {64, 128, 192, 256, 320},
                                {0, 1, 1, 1, 384}, {~uint64_t{0} - 4, ~uint64_t{0} - 3, ~uint64_t{0} - 2,
                                                    ~uint64_t{0} - 1, ~uint64_t{0}}};
  for (const auto& c : counts)
    for (uint64_t rem : {uint64_t{0}, uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{4}, uint64_t{6}, uint64_t{7},
                         uint64_t{64}, uint64_t{200}, uint64_t{383}, ~uint64_t{0} - 3, ~uint64_t{0}}) {
      uint64_t y = 99, z = words[1], before = 0, at = 0;
      for (int k = 0; k < 5; ++k)
        if (c[k] <= rem) y = words[k + 1], z = words[k + 2], before = c[k], at = static_cast<uint64_t>(k + 1);
      const detail::WindowPick r = detail::window_pick(words, 99, c, rem);
      ASSERT_EQ(r.y, y) << rem;
      ASSERT_EQ(r.z, z) << rem;
      ASSERT_EQ(r.before, before) << rem;
      ASSERT_EQ(r.at, at) << rem;
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// The six-word window with its counts taken inside the asm block (window_count_popcnt)
// against counting and choosing in C++, for every rem below the window's ones, on
// random words of several densities (empty words included).
TEST(RankSelect, WindowCountPopcnt) {
  if (!detail::cpu_has_fast_pdep()) GTEST_SKIP() << "no popcnt/BMI2";
  std::mt19937_64 rng(5);
  for (int round = 0; round < 2000; ++round) {
    uint64_t words[7];
    for (uint64_t& w : words) {
      const int kind = static_cast<int>(rng() % 4);
      w = kind == 0 ? 0 : kind == 1 ? rng() & rng() & rng() : kind == 2 ? rng() : ~uint64_t{0};
    }
    const uint64_t x = words[0] & (~uint64_t{0} << (rng() % 64));
    uint64_t c[6];
    c[0] = static_cast<uint64_t>(__builtin_popcountll(x));
    for (int k = 1; k < 6; ++k) c[k] = c[k - 1] + static_cast<uint64_t>(__builtin_popcountll(words[k]));
    for (uint64_t rem = 0; rem < c[5] + 2; ++rem) {
      uint64_t y = x, z = words[1], before = 0, at = 0;
      for (int k = 0; k < 5; ++k)
        if (c[k] <= rem) y = words[k + 1], z = words[k + 2], before = c[k], at = static_cast<uint64_t>(k + 1);
      const detail::WindowCount r = detail::window_count_popcnt(words, x, rem);
      ASSERT_EQ(r.total, c[5]);
      ASSERT_EQ(r.y, y) << rem;
      ASSERT_EQ(r.z, z) << rem;
      ASSERT_EQ(r.before, before) << rem;
      ASSERT_EQ(r.at, at) << rem;
    }
  }
}
#endif

using Peer = detail::SuccinctSetTestPeer;

// The set loaded again with only the portable kernels allowed (what contains() and
// contains_many() run on a CPU without popcnt and BMI2): the answers must not change.
SuccinctSet portable_twin(const SuccinctSet& s) {
  detail::ScopedIsaMask only_portable(detail::isa_bit(detail::Isa::portable));
  return SuccinctSet::load(s.bytes());
}

// ---- the seed's example --------------------------------------------------------

TEST(SuccinctSet, SeedPlainLayout) {
  const std::vector<std::string> keys = {"ab", "abc", "abcd", "axy", "buv"};
  const auto l = Peer::plain_layout(keys);
  EXPECT_EQ(l.labels, "abbxucyvd");
  EXPECT_EQ(l.label_bitmap, "0010010101010101111");
  EXPECT_EQ(l.leaf_bitmap, "0001001111");  // nodes 3, 6, 7, 8, 9
  EXPECT_TRUE(l.tails.empty());
  // Unsorted input with duplicates gives the same layout.
  const std::vector<std::string> shuffled = {"buv", "abcd", "ab", "axy", "abc", "ab"};
  const auto l2 = Peer::plain_layout(shuffled);
  EXPECT_EQ(l2.labels, l.labels);
  EXPECT_EQ(l2.label_bitmap, l.label_bitmap);
  EXPECT_EQ(l2.leaf_bitmap, l.leaf_bitmap);
}

TEST(SuccinctSet, SeedExampleWithTails) {
  const auto s = SuccinctSet::build({"ab", "abc", "abcd", "axy", "buv"});
  const auto l = Peer::layout(s);
  // root {a,b}; a -> {b,x}; b holds one key: tail "uv"; ab (a key) -> {c}; ax holds
  // one key: tail "y"; abc (a key) -> {d}; abcd holds one key with nothing left.
  EXPECT_EQ(l.labels, "abbxcd");
  EXPECT_EQ(l.label_bitmap, "0010011011011");
  EXPECT_EQ(l.leaf_bitmap, "0011111");
  EXPECT_EQ(l.tails, "uvy");
  EXPECT_EQ(l.tail_bitmap, "1110011011");
  EXPECT_EQ(s.size(), 5u);
  for (auto k : {"ab", "abc", "abcd", "axy", "buv"}) EXPECT_TRUE(s.contains(k)) << k;
  for (auto k : {"", "a", "b", "abcde", "bu", "buvw", "ax", "axyz", "c"}) EXPECT_FALSE(s.contains(k)) << k;
}

// ---- property tests against std::set -------------------------------------------

std::string random_probe(std::mt19937_64& rng, const std::vector<std::string>& keys) {
  std::string k = keys.empty() ? std::string() : keys[rng() % keys.size()];
  switch (rng() % 5) {
    case 0: if (!k.empty()) k.resize(rng() % k.size()); break;
    case 1: k.push_back(static_cast<char>(rng())); break;
    case 2: if (!k.empty()) k[rng() % k.size()] = static_cast<char>(rng()); break;
    case 3: k = std::string(rng() % 4, static_cast<char>(rng())); break;
    default: break;
  }
  return k;
}

void check_set(const SuccinctSet& s, const std::set<std::string>& ref, size_t probes, uint64_t seed) {
  const std::vector<std::string> sorted(ref.begin(), ref.end());
  const SuccinctSet portable = portable_twin(s);
  ASSERT_EQ(s.size(), sorted.size());
  // Iteration
  {
    std::vector<std::string> got;
    for (std::string_view k : s) got.emplace_back(k);
    ASSERT_EQ(got, sorted);
  }
  // Every key: contains, index_of, key_at (a sample for big sets).
  const size_t step = std::max<size_t>(1, sorted.size() / probes);
  for (size_t i = 0; i < sorted.size(); i += step) {
    ASSERT_TRUE(s.contains(sorted[i])) << i;
    ASSERT_TRUE(portable.contains(sorted[i])) << i;
    ASSERT_EQ(s.index_of(sorted[i]), i);
    ASSERT_EQ(s.key_at(i), sorted[i]);
  }
  if (!sorted.empty()) {
    ASSERT_EQ(s.key_at(sorted.size() - 1), sorted.back());
  }
  EXPECT_THROW((void)s.key_at(sorted.size()), Error);
  // Batches (contains_many, interleaved on sets of 4 MiB or more; the portable path
  // always): every sampled key and as many random probes, in one batch.
  {
    std::mt19937_64 brng(seed + 1);
    std::vector<std::string> batch;
    for (size_t i = 0; i < sorted.size(); i += step) batch.push_back(sorted[i]);
    for (size_t t = 0; t < probes; ++t) batch.push_back(random_probe(brng, sorted));
    std::shuffle(batch.begin(), batch.end(), brng);
    std::unique_ptr<bool[]> hw(new bool[batch.size()]), sw(new bool[batch.size()]);
    size_t want = 0;
    for (const auto& q : batch) want += ref.count(q);
    ASSERT_EQ(s.contains_many(batch, std::span<bool>(hw.get(), batch.size())), want);
    ASSERT_EQ(Peer::contains_many_interleaved(portable, batch, std::span<bool>(sw.get(), batch.size())), want);
    for (size_t i = 0; i < batch.size(); ++i) {
      ASSERT_EQ(hw[i], ref.count(batch[i]) > 0) << "batch, probe of " << batch[i].size() << " bytes";
      ASSERT_EQ(sw[i], ref.count(batch[i]) > 0) << "portable batch, probe of " << batch[i].size() << " bytes";
    }
  }
  // Random probes, present or not.
  std::mt19937_64 rng(seed);
  for (size_t t = 0; t < probes; ++t) {
    const std::string q = random_probe(rng, sorted);
    const bool present = ref.count(q) > 0;
    ASSERT_EQ(s.contains(q), present) << "probe of " << q.size() << " bytes";
    ASSERT_EQ(portable.contains(q), present) << "portable path, probe of " << q.size() << " bytes";
    const auto lb = ref.lower_bound(q);
    const uint64_t rank = static_cast<uint64_t>(std::lower_bound(sorted.begin(), sorted.end(), q) - sorted.begin());
    ASSERT_EQ(s.rank(q), rank);
    ASSERT_EQ(s.index_of(q), present ? rank : SuccinctSet::npos);
    auto it = s.lower_bound(q);
    if (lb == ref.end()) {
      ASSERT_TRUE(it == s.end());
    } else {
      ASSERT_FALSE(it == s.end());
      ASSERT_EQ(*it, *lb);
      // a few steps of iteration from there
      auto r = lb;
      for (int k = 0; k < 3 && r != ref.end(); ++k, ++r, ++it) {
        ASSERT_FALSE(it == s.end());
        ASSERT_EQ(*it, *r);
      }
    }
    if (t % 8 == 0) {
      // prefix search
      const std::string p = q.substr(0, rng() % (q.size() + 1));
      std::vector<std::string> want, got;
      constexpr size_t kCap = 300;  // compare the first keys of each scan
      for (auto i = ref.lower_bound(p); i != ref.end() && i->compare(0, p.size(), p) == 0 && want.size() < kCap; ++i)
        want.push_back(*i);
      for (std::string_view k : s.prefix(p)) {
        if (got.size() == kCap) break;
        got.emplace_back(k);
      }
      ASSERT_EQ(got, want) << "prefix of " << p.size() << " bytes";
      // range [a, b)
      std::string a = q, b = random_probe(rng, sorted);
      if (b < a) std::swap(a, b);
      want.clear();
      got.clear();
      for (auto i = ref.lower_bound(a); i != ref.end() && *i < b && want.size() < kCap; ++i) want.push_back(*i);
      for (std::string_view k : s.range(a, b)) {
        if (got.size() == kCap) break;
        got.emplace_back(k);
      }
      ASSERT_EQ(got, want);
      // the general scan: prefix and bounds together
      want.clear();
      got.clear();
      for (auto i = ref.lower_bound(std::max(a, p)); i != ref.end() && *i < b && want.size() < kCap; ++i) {
        if (i->compare(0, p.size(), p) != 0) break;
        want.push_back(*i);
      }
      for (std::string_view k : s.scan(p, a, b)) {
        if (got.size() == kCap) break;
        got.emplace_back(k);
      }
      ASSERT_EQ(got, want);
    }
  }
}

// The chain table SuccinctSet should build (its chain_count()), computed from the
// sorted keys by the definition: a member is a trie node where no key ends with one
// label (a prefix of two or more keys, all going on with the same byte; with tails, a
// prefix of one key is a tail node); a chain is a run of members from one whose
// parent is none, kept with at least 8 members and 16 keys below; the table is kept
// when the kept chains save keys x (members - 1) selects >= the key count.
uint64_t expected_chains(std::vector<std::string> keys) {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  uint64_t chains = 0, saved = 0;
  // The one next byte of the keys [lo, hi) sharing a prefix of length d, or -1.
  auto single_next = [&](size_t lo, size_t hi, size_t d) -> int {
    if (hi - lo < 2 || keys[lo].size() == d) return -1;  // a tail node, or a key ends here
    return keys[lo][d] == keys[hi - 1][d] ? static_cast<unsigned char>(keys[lo][d]) : -1;
  };
  std::function<void(size_t, size_t, size_t, bool)> walk = [&](size_t lo, size_t hi, size_t d, bool parent_member) {
    if (hi - lo < 2) return;
    const bool member = single_next(lo, hi, d) >= 0;
    if (member && !parent_member) {
      size_t len = 0, e = d;
      while (single_next(lo, hi, e) >= 0) ++len, ++e;
      if (len >= 8 && hi - lo >= 16) ++chains, saved += (hi - lo) * (len - 1);
    }
    size_t i = lo + (keys[lo].size() == d);
    while (i < hi) {
      size_t j = i;
      while (j < hi && keys[j][d] == keys[i][d]) ++j;
      walk(i, j, d + 1, member);
      i = j;
    }
  };
  walk(0, keys.size(), 0, false);
  return saved >= keys.size() ? chains : 0;
}

// Checks the set as built, as loaded from bytes, and memory-mapped from a file, in
// every tail mode: raw tails, coded tails (a symbol table even for a few), none.
void check_all_ways(const std::vector<std::string>& keys, size_t probes = 2000, uint64_t seed = 1) {
  const std::set<std::string> ref(keys.begin(), keys.end());
  test::TempDir dir;
  using Coding = SuccinctSet::Options::TailCoding;
  for (int mode = 0; mode < 3; ++mode) {
    const bool tails = mode < 2;
    SCOPED_TRACE(mode == 0 ? "raw tails" : mode == 1 ? "coded tails" : "plain");
    const auto built =
        SuccinctSet::build(keys, {.tail_compression = tails, .tail_coding = mode == 1 ? Coding::always : Coding::never});
    EXPECT_EQ(built.tails_coded(), mode == 1 && built.tail_bytes() > 0);
    {
      SCOPED_TRACE("built");
      check_set(built, ref, probes, seed);
    }
    const auto bytes = built.serialize();
    {
      SCOPED_TRACE("loaded");
      const auto loaded = SuccinctSet::load(bytes);
      EXPECT_FALSE(loaded.is_mapped());
      EXPECT_EQ(loaded.chain_count(), built.chain_count());
      check_set(loaded, ref, probes, seed + 1);
    }
    {
      SCOPED_TRACE("mapped");
      const std::string path = dir.file(mode == 0 ? "raw.amq" : mode == 1 ? "coded.amq" : "plain.amq");
      write_file_atomic(path, bytes);
      const auto mapped = SuccinctSet::open(path);
      EXPECT_TRUE(mapped.is_mapped());
      EXPECT_EQ(mapped.chain_count(), built.chain_count());
      EXPECT_EQ(mapped.serialize(), bytes);
      check_set(mapped, ref, probes, seed + 2);
    }
  }
}

TEST(SuccinctSet, EmptySet) {
  check_all_ways({});
  const SuccinctSet s;
  EXPECT_TRUE(s.empty());
  EXPECT_FALSE(s.contains(""));
  EXPECT_TRUE(s.begin() == s.end());
  EXPECT_EQ(s.rank("x"), 0u);
}

TEST(SuccinctSet, EmptyKey) {
  check_all_ways({""});
  check_all_ways({"", "a", "ab", "b"});
}

TEST(SuccinctSet, OneKey) {
  check_all_ways({"hello"});
  check_all_ways({std::string(1, '\0')});
}

TEST(SuccinctSet, KeysThatArePrefixesOfOthers) {
  std::vector<std::string> keys;
  for (int i = 0; i <= 300; ++i) keys.push_back(std::string(static_cast<size_t>(i), 'a'));
  for (int i = 0; i <= 50; ++i) keys.push_back(std::string(static_cast<size_t>(i), 'a') + "b");
  check_all_ways(keys);
}

TEST(SuccinctSet, EveryByteValue) {
  std::vector<std::string> keys;
  for (int a = 0; a < 256; ++a) {
    keys.push_back(std::string(1, static_cast<char>(a)));
    for (int b = 0; b < 256; b += 17) keys.push_back(std::string{static_cast<char>(a), static_cast<char>(b)});
    keys.push_back(std::string(3, static_cast<char>(a)) + '\xff' + '\0');
  }
  check_all_ways(keys);
}

// The build sorts keys by their first eight bytes as a zero-padded number, then by the
// rest: keys that differ only in trailing zero bytes, or around the eighth byte, must
// still come out in byte order, duplicates dropped, whatever order they came in.
TEST(SuccinctSet, SortsByBytesWhateverTheOrderGiven) {
  const std::string z(1, '\0');
  std::vector<std::string> keys = {"",          z,           z + z,       "a",         "a" + z,    "a" + z + z,
                                   "a" + z + "b", "abcdefg",  "abcdefg" + z, "abcdefgh", "abcdefgh" + z,
                                   "abcdefgh" + z + z, "abcdefghi", "abcdefgg\xff", "abcdefgi", "\xff\xff\xff\xff\xff\xff\xff\xff",
                                   "\xff\xff\xff\xff\xff\xff\xff\xff" + z, "\x80"};
  for (int i = 0; i < 300; ++i) keys.push_back("abcdefgh" + std::to_string(i * 7919 % 1000));
  const std::vector<std::byte> bytes = SuccinctSet::build(keys).serialize();
  std::mt19937_64 rng(8);
  for (int round = 0; round < 4; ++round) {
    std::vector<std::string> again = keys;
    again.insert(again.end(), keys.begin(), keys.begin() + 40);  // duplicates
    std::shuffle(again.begin(), again.end(), rng);
    EXPECT_EQ(SuccinctSet::build(again).serialize(), bytes) << round;
  }
  check_all_ways(keys, 500, 21);
}

// rank() searches a node's labels for the first one >= the key's byte, sixteen at a
// time (unsigned bytes), and the first two levels through their label maps: nodes of
// 2-256 labels at levels 0-4 with bytes on both sides of 0x80, probed with every
// byte value at every depth, against std::lower_bound.
TEST(SuccinctSet, RankThroughWideNodes) {
  std::mt19937_64 rng(41);
  std::set<std::string> ref;
  const int step = kSanitized ? 7 : 3;
  for (int a = 0; a < 256; a += 51)
    for (int b = 0; b < 256; b += step)
      if (rng() % 3 != 0) {
        std::string k{static_cast<char>(a), static_cast<char>(b)};
        ref.insert(k);
        for (int c = 0; c < 256; c += 1 + static_cast<int>(rng() % 40)) {
          ref.insert(k + static_cast<char>(c));
          if (rng() % 4 == 0) ref.insert(k + static_cast<char>(c) + static_cast<char>(rng()) + static_cast<char>(rng()));
        }
      }
  const std::vector<std::string> sorted(ref.begin(), ref.end());
  for (bool tails : {true, false}) {
    const auto s = SuccinctSet::build(sorted, {.tail_compression = tails});
    for (int t = 0; t < (kSanitized ? 5000 : 50000); ++t) {
      std::string q = sorted[rng() % sorted.size()];
      q.resize(rng() % (q.size() + 1));
      q.push_back(static_cast<char>(rng()));
      if (rng() % 2) q.push_back(static_cast<char>(rng()));
      const auto r = static_cast<uint64_t>(std::lower_bound(sorted.begin(), sorted.end(), q) - sorted.begin());
      ASSERT_EQ(s.rank(q), r) << (tails ? "tails " : "plain ") << q.size();
      ASSERT_EQ(s.index_of(q), ref.count(q) ? r : SuccinctSet::npos);
    }
  }
}

TEST(SuccinctSet, VeryLongKeys) {
  std::mt19937_64 rng(11);
  std::vector<std::string> keys;
  // Without tails every byte is a trie level, and rank/key_at walk the levels: keep
  // the plain trie a few thousand levels deep.
  std::string base(kSanitized ? 1500 : 3000, 'x');
  for (auto& c : base) c = static_cast<char>('a' + rng() % 3);
  for (int i = 0; i < 20; ++i) {
    std::string k = base.substr(0, base.size() - rng() % 2000);
    k[rng() % k.size()] = static_cast<char>(rng());
    keys.push_back(k);
    keys.push_back(base.substr(0, rng() % base.size()));
  }
  keys.push_back(base);
  check_all_ways(keys, 200);
  // With tails, keys of a megabyte.
  std::vector<std::string> big;
  for (int i = 0; i < 6; ++i) {
    // One digit, then a megabyte of one letter (built in place: gcc 12 warns falsely
    // on moving such strings into the vector).
    big.emplace_back((size_t{1} << 20) + 1, static_cast<char>('a' + i % 2));
    big.back()[0] = static_cast<char>('0' + i);
  }
  big.push_back(std::string(1 << 20, 'a'));
  big.push_back(std::string(1000, 'a') + "b");
  const std::set<std::string> ref(big.begin(), big.end());
  check_set(SuccinctSet::build(big), ref, 50, 2);
}

TEST(SuccinctSet, RandomBinaryKeys) {
  check_all_ways(test::random_keys(kSanitized ? 2000 : 20000, 42, 24), 3000, 5);
}

TEST(SuccinctSet, SmallAlphabetDeepTrie) {
  std::mt19937_64 rng(8);
  std::vector<std::string> keys;
  for (int i = 0; i < (kSanitized ? 3000 : 30000); ++i) {
    std::string k(rng() % 40, 'a');
    for (auto& c : k) c = static_cast<char>('a' + rng() % 2);
    keys.push_back(k);
  }
  check_all_ways(keys, 3000, 9);
  EXPECT_EQ(SuccinctSet::build(keys).chain_count(), expected_chains(keys));
}

// rank(), index_of() and key_at() stop at the deep levels whose cuts have key counts
// in a table (max(64, nodes / 256) entries). Here: a word-like set over a small
// alphabet, plus keys of 30-200 bytes sharing long prefixes, so that many narrow levels
// lie below wide ones; every key's rank both ways, and probes between keys.
TEST(SuccinctSet, CountsOfTheDeepLevels) {
  std::mt19937_64 rng(12);
  std::set<std::string> ref;
  for (int i = 0; i < (kSanitized ? 4000 : 40000); ++i) {
    std::string k(3 + rng() % 8, 'a');
    for (auto& c : k) c = static_cast<char>('a' + rng() % 6);
    ref.insert(k);
  }
  const std::vector<std::string> base(ref.begin(), ref.end());
  for (int i = 0; i < 300; ++i) {
    std::string k = base[rng() % base.size()] + std::string(30 + rng() % 170, 'x');
    k[k.size() - 1 - rng() % 20] = 'y';  // deep branches
    ref.insert(k);
  }
  const std::vector<std::string> keys(ref.begin(), ref.end());
  const auto s = SuccinctSet::build(keys);
  ASSERT_GT(s.counted_levels_from(), 2u);
  ASSERT_LT(s.counted_levels_from() + 20, s.level_count());
  // and the top levels' (nodes / 64 entries): levels 1 to 3
  if (!kSanitized) {
    ASSERT_EQ(s.counted_top_levels(), 3u);
  }
  for (uint64_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(s.index_of(keys[i]), i) << keys[i];
    ASSERT_EQ(s.key_at(i), keys[i]);
  }
  for (int t = 0; t < 20000; ++t) {
    std::string q = keys[rng() % keys.size()];
    q.resize(rng() % (q.size() + 1));
    if (rng() % 2) q.push_back(static_cast<char>('a' + rng() % 26));
    const auto r = static_cast<uint64_t>(std::lower_bound(keys.begin(), keys.end(), q) - keys.begin());
    ASSERT_EQ(s.rank(q), r) << q;
  }
  // size_in_bytes() by part: the file's parts as its layout gives them, and the rest
  // built on load (here the top and deep levels' counts, at least).
  const SuccinctSet::SizeParts parts = s.size_parts();
  EXPECT_EQ(parts.labels + parts.bitmaps + parts.directories + parts.tails + parts.load_tables, s.size_in_bytes());
  const Peer::Layout lay = Peer::layout(s);
  EXPECT_EQ(parts.labels, (lay.labels.size() + 7) / 8 * 8);
  EXPECT_EQ(parts.tails, (lay.tails.size() + 7) / 8 * 8 + (s.tails_coded() ? detail::TailSymbols::kBytes : 0));
  EXPECT_EQ(parts.bitmaps, 8 * ((lay.label_bitmap.size() + 63) / 64 + (lay.leaf_bitmap.size() + 63) / 64 +
                                (lay.tail_bitmap.size() + 63) / 64));
  EXPECT_GT(parts.directories, 0u);
  EXPECT_GT(parts.load_tables, 4 * (s.level_count() - s.counted_levels_from()));
  // A small set has counts for every level, from the root's on.
  const std::vector<std::string> few = {"ab", "abc", "abcd", "axy", "buv"};
  const auto t = SuccinctSet::build(few);
  EXPECT_EQ(t.counted_levels_from(), 0u);
  for (uint64_t i = 0; i < few.size(); ++i) {
    ASSERT_EQ(t.key_at(i), few[i]);
    ASSERT_EQ(t.index_of(few[i]), i);
  }
}

// File-path-like keys: a tree of directories some 10 names deep, so that keys end far
// below the top levels and the cuts right of them run on through dozens of wide
// levels. rank()'s walks there pair the cut with the nearest one whose count is kept
// (every 2^shift-th cut of the middle levels) or stop where a cut reaches its level's
// first or last node: every key's rank both ways, and probes between keys.
TEST(SuccinctSet, CountsOfTheMiddleLevels) {
  std::mt19937_64 rng(57);
  const auto name = [&] {
    std::string n(2 + rng() % 9, 'a');
    for (auto& c : n) c = static_cast<char>('a' + rng() % 5);
    return n;
  };
  std::vector<std::string> dirs = {"/usr"};
  std::set<std::string> ref;
  while (ref.size() < 30000u) {
    const std::string& d = dirs[rng() % dirs.size()];
    if (rng() % 3 == 0 && std::count(d.begin(), d.end(), '/') < 14) dirs.push_back(d + "/" + name());
    else ref.insert(dirs[rng() % dirs.size()] + "/" + name() + (rng() % 2 ? ".so" : ".gz"));
  }
  const std::vector<std::string> keys(ref.begin(), ref.end());
  const auto s = SuccinctSet::build(keys);
  const Peer::MidCounts mid = Peer::mid_counts(s);
  ASSERT_GT(mid.shift, 0u);
  ASSERT_LT(mid.level + 20, s.counted_levels_from());
  for (const SuccinctSet& set : {s, SuccinctSet::load(s.serialize())}) {
    for (uint64_t i = 0; i < keys.size(); ++i) {
      ASSERT_EQ(set.index_of(keys[i]), i) << keys[i];
      ASSERT_EQ(set.key_at(i), keys[i]);
    }
    for (int t = 0; t < 20000; ++t) {
      std::string q = keys[rng() % keys.size()];
      q.resize(rng() % (q.size() + 1));
      if (rng() % 2) q.push_back(static_cast<char>('a' + rng() % 7));
      const auto r = static_cast<uint64_t>(std::lower_bound(keys.begin(), keys.end(), q) - keys.begin());
      ASSERT_EQ(set.rank(q), r) << q;
    }
  }
  // A word list's middle levels are too wide for the budget (a quarter of a percent of
  // the key bytes): no table.
  std::vector<std::string> words;
  for (int i = 0; i < 20000; ++i) {
    std::string w(3 + rng() % 8, 'a');
    for (auto& c : w) c = static_cast<char>('a' + rng() % 26);
    words.push_back(w);
  }
  EXPECT_EQ(Peer::mid_counts(SuccinctSet::build(words)).shift, 0u);
}

// contains() takes the first two bytes through label maps and the top levels' label
// starts through a table: root children that are childless, leaves with children,
// and second-level nodes beyond the table (which stops at 4096 nodes; here the
// second level alone has 40000).
TEST(SuccinctSet, TopLevelShortcuts) {
  std::vector<std::string> keys = {"a", "ab", "abc", "bcdef", "c", "d\xff", "\xff", "\xff\xfe"};
  for (int a = 0; a < 200; ++a)
    for (int b = 0; b < 200; ++b) keys.push_back(std::string{static_cast<char>(a), static_cast<char>(b), 'x'});
  std::mt19937_64 rng(4);
  for (int i = 0; i < 2000; ++i) keys.push_back(std::string(1 + rng() % 3, static_cast<char>(rng())));
  const std::set<std::string> ref(keys.begin(), keys.end());
  const auto s = SuccinctSet::build(keys);
  const SuccinctSet portable = portable_twin(s);
  for (int a = 0; a < 256; ++a)
    for (int b = 0; b < 256; b += 3)
      for (const std::string& q : {std::string{static_cast<char>(a), static_cast<char>(b)},
                                   std::string{static_cast<char>(a), static_cast<char>(b), 'x'},
                                   std::string{static_cast<char>(a), static_cast<char>(b), 'y'},
                                   std::string(1, static_cast<char>(a))}) {
        ASSERT_EQ(s.contains(q), ref.count(q) > 0) << a << " " << b << " " << q.size();
        ASSERT_EQ(portable.contains(q), ref.count(q) > 0) << a << " " << b << " " << q.size();
      }
  check_all_ways(keys, 2000, 12);
  // A set whose root children are all childless, and a deep two-letter one.
  check_all_ways(std::vector<std::string>{"apple", "banana", "cherry"}, 100, 13);
  check_all_ways(std::vector<std::string>{"ab", "abab", "abba", "b", "ba", "bab"}, 100, 14);
}

// Levels below the top three join the top table while they are narrow (at most 64
// nodes, 4096 in all, 1/64 of the payload): the long shared prefixes of URLs, here
// three hosts and four directories, ~45 levels of a few nodes each before the names
// widen the trie. Probes leave the keys at every depth: inside the table, at its
// last level and below it.
TEST(SuccinctSet, NarrowLevelsJoinTheTopTable) {
  std::mt19937_64 rng(31);
  const std::vector<std::string> hosts = {"https://www.example.com/", "https://static.example.org/",
                                          "https://api.example.net/v1/"};
  const std::vector<std::string> dirs = {"assets/images/", "assets/scripts/", "docs/reference/", "blog/"};
  std::vector<std::string> keys;
  for (int i = 0; i < (kSanitized ? 2000 : 20000); ++i) {
    std::string k = hosts[rng() % hosts.size()] + dirs[rng() % dirs.size()];
    for (size_t n = 3 + rng() % 8; n > 0; --n) k += static_cast<char>('a' + rng() % 26);
    keys.push_back(k + ".html");
  }
  keys.push_back(hosts[0]);
  keys.push_back(hosts[1] + dirs[2]);
  const std::set<std::string> ref(keys.begin(), keys.end());
  const auto s = SuccinctSet::build(keys);
  const SuccinctSet portable = portable_twin(s);
  const auto plain = SuccinctSet::build(keys, {.tail_compression = false});
  EXPECT_GT(s.chain_count(), 0u);
  EXPECT_EQ(s.chain_count(), expected_chains(keys));
  for (size_t i = 0; i < keys.size(); i += 37) {
    const std::string& k = keys[i];
    for (size_t d = 0; d <= k.size(); ++d) {
      std::string changed = k;
      if (d < k.size()) changed[d] = static_cast<char>(changed[d] ^ 1);
      for (const std::string& q : {k.substr(0, d), changed, k.substr(0, d) + "~"}) {
        ASSERT_EQ(s.contains(q), ref.count(q) > 0) << q;
        ASSERT_EQ(portable.contains(q), ref.count(q) > 0) << q;
        ASSERT_EQ(plain.contains(q), ref.count(q) > 0) << q;
      }
    }
  }
  check_all_ways(keys, 2000, 32);
}

// Below the top table, chains of at least 8 one-label nodes where no key ends, with at
// least 16 keys below, are taken in one compare when they save a present key's lookup
// a select on average (a table built on load). Here every key passes through one: two
// wide levels, then one of 40 long directory names, then file names. Probes leave the
// keys at every depth, inside the chains too, and end inside them; rank() takes the
// chains at once too (their levels' leaves left of the path kept with each chain) where
// the key goes on with all of a chain's labels.
TEST(SuccinctSet, LongChainsTakenAtOnce) {
  std::mt19937_64 rng(41);
  std::vector<std::string> dirs;
  for (int i = 0; i < 40; ++i) {
    std::string d = "/";
    for (size_t n = 8 + rng() % 30; n > 0; --n) d += static_cast<char>('a' + rng() % 26);
    dirs.push_back(d + "/");
  }
  std::vector<std::string> keys;
  for (int a = 0; a < 26; ++a)
    for (int b = 0; b < 26; ++b) {
      const std::string top{static_cast<char>('a' + a), static_cast<char>('a' + b)};
      for (int d = 0; d < 3; ++d) {
        const std::string dir = top + dirs[rng() % dirs.size()];
        for (int f = 0; f < (kSanitized ? 17 : 40); ++f) {
          std::string k = dir;
          for (size_t n = 1 + rng() % 6; n > 0; --n) k += static_cast<char>('a' + rng() % 26);
          keys.push_back(k);
        }
      }
    }
  const std::set<std::string> ref(keys.begin(), keys.end());
  const std::vector<std::string> sorted(ref.begin(), ref.end());
  const auto with = SuccinctSet::build(keys);
  const SuccinctSet with_portable = portable_twin(with);
  EXPECT_GE(with.chain_count(), 40u);
  EXPECT_EQ(with.chain_count(), expected_chains(keys));
  // Word lists keep no table: their few long chains would not pay for the probes.
  EXPECT_EQ(SuccinctSet::build(std::vector<std::string>{"internationalization", "internationalizations",
                                                        "internationalize", "internationalized"})
                .chain_count(),
            0u);
  for (size_t i = 0; i < keys.size(); i += 29) {
    const std::string& k = keys[i];
    for (size_t d = 0; d <= k.size(); ++d) {
      std::string changed = k;
      if (d < k.size()) changed[d] = static_cast<char>(changed[d] + 1);
      for (const std::string& q : {k.substr(0, d), changed, k.substr(0, d) + "~", k + "x"}) {
        ASSERT_EQ(with.contains(q), ref.count(q) > 0) << q;
        ASSERT_EQ(with_portable.contains(q), ref.count(q) > 0) << q;
        ASSERT_EQ(with.rank(q), static_cast<uint64_t>(std::lower_bound(sorted.begin(), sorted.end(), q) - sorted.begin()))
            << q;
      }
    }
  }
  check_all_ways(keys, 3000, 42);
}

// The chain table weighs each chain by the keys below it, walking its subtree to the
// bottom: nested chains in a deep trie would make a load quadratic, so the walk has a
// budget (the nodes plus 2^20 levels) and the set is then loaded without the table.
// A spine of n branch points 10 bytes apart, a chain of 9 between each two.
TEST(SuccinctSet, ChainTableBudgetOnDeepTries) {
  auto spine = [](int n) {
    std::vector<std::string> keys;
    std::string s;
    for (int i = 0; i < n; ++i) {
      s += std::string(9, 'x');
      keys.push_back(s + "z");
      s += "y";
    }
    keys.push_back(s);
    return keys;
  };
  const auto shallow = SuccinctSet::build(spine(100));
  EXPECT_GT(shallow.chain_count(), 50u);
  EXPECT_EQ(shallow.chain_count(), expected_chains(spine(100)));
  const std::vector<std::string> keys = spine(700);
  const auto deep = SuccinctSet::build(keys);
  EXPECT_EQ(deep.chain_count(), 0u);
  for (const std::string& k : keys) {
    ASSERT_TRUE(deep.contains(k));
    ASSERT_FALSE(deep.contains(k + "x"));
    ASSERT_FALSE(deep.contains(k.substr(0, k.size() - 1)));
  }
}

// The chain table costs at most 64 bytes a chain beside the chains' labels: its slots
// are dense and indexed by 32-bit entries (at most half full), and its filter has 16-31
// bits a chain (at least 64 words). Here 3000 chains of 12 labels, each under a
// distinct four-digit prefix with 20 keys below.
TEST(SuccinctSet, ChainTableBytesPerChain) {
  std::vector<std::string> keys;
  for (int i = 0; i < 3000; ++i) {
    const std::string chain = std::to_string(1000 + i) + "/abcdefghij/";
    for (int f = 0; f < 20; ++f) keys.push_back(chain + static_cast<char>('a' + f) + "x");
  }
  const auto set = SuccinctSet::build(keys);
  ASSERT_EQ(set.chain_count(), 3000u);
  ASSERT_EQ(set.chain_count(), expected_chains(keys));
  const uint64_t table = detail::SuccinctSetTestPeer::chain_table_bytes(set);
  EXPECT_GE(table, 3000u * 12);
  EXPECT_LE(table, 3000u * (64 + 12) + 8 * 64);
  EXPECT_EQ(detail::SuccinctSetTestPeer::chain_table_bytes(SuccinctSet::load(set.serialize())), table);
  for (size_t i = 0; i < keys.size(); i += 7) {
    ASSERT_TRUE(set.contains(keys[i]));
    ASSERT_FALSE(set.contains(keys[i].substr(0, keys[i].size() - 1)));
    ASSERT_FALSE(set.contains(keys[i].substr(0, 8)));
  }
}

// Below the top table, contains() starts the selects of levels 3 and 4 from finer
// samples (one per 32 nodes, for at most 65536 nodes). Wide nodes there put many
// zeros between samples; here levels 3 and 4 hold 88421 nodes, so the finer samples
// stop inside level 4 and the rest is reached from the 128-node samples.
TEST(SuccinctSet, WideNodesBelowTheTopLevels) {
  std::mt19937_64 rng(21);
  std::vector<std::string> keys;
  const int n = kSanitized ? 6 : 20;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      for (int c = 0; c < n; ++c)
        for (int d = 0; d < 30; ++d) {
          if (rng() % 3 != 0) continue;
          std::string k{static_cast<char>('a' + a), static_cast<char>('a' + b), static_cast<char>('a' + c),
                        static_cast<char>('A' + d)};
          keys.push_back(k);
          if (rng() % 2) keys.push_back(k + std::string(1 + rng() % 3, static_cast<char>('a' + rng() % 26)));
        }
  const std::set<std::string> ref(keys.begin(), keys.end());
  const auto s = SuccinctSet::build(keys);
  const SuccinctSet portable = portable_twin(s);
  for (const std::string& k : ref) {
    ASSERT_TRUE(s.contains(k)) << k;
    ASSERT_TRUE(portable.contains(k)) << k;
    for (const std::string& q : {k.substr(0, 3) + "~", k + "~", k.substr(0, k.size() - 1) + "`"})
      ASSERT_EQ(s.contains(q), ref.count(q) > 0) << q;
  }
  check_set(s, ref, 5000, 22);
}

// Tail selects start half-way between the tail bitmap's samples through a table built
// on load, skipped when 256 nodes' tails pass 64 KiB: long tails (table skipped) and
// medium ones (table used), with nodes on both sides of the half-way points.
TEST(SuccinctSet, TailSelectsFromHalfWay) {
  for (size_t tail : {size_t{5}, size_t{100}, size_t{300}}) {
    std::mt19937_64 rng(31 + tail);
    std::vector<std::string> keys;
    for (int i = 0; i < 1500; ++i) {
      std::string k = std::to_string(i * 7919 % 100000);
      k += std::string(tail + rng() % 3, static_cast<char>('a' + rng() % 26));
      keys.push_back(k);
    }
    const std::set<std::string> ref(keys.begin(), keys.end());
    const auto s = SuccinctSet::build(keys);
    const SuccinctSet portable = portable_twin(s);
    ASSERT_GT(s.node_count(), 1024u);
    for (const std::string& k : ref) {
      ASSERT_TRUE(s.contains(k)) << k;
      ASSERT_TRUE(portable.contains(k)) << k;
      ASSERT_FALSE(s.contains(k + "a")) << k;
      ASSERT_FALSE(s.contains(k.substr(0, k.size() - 1))) << k;
    }
    check_set(s, ref, 500, 32);
  }
}

TEST(SuccinctSet, WordList) {
  const char* path = "/usr/share/dict/american-english";
  if (!std::ifstream(path)) GTEST_SKIP() << path << " not installed";
  std::vector<std::string> keys;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) keys.push_back(line);
  if (kSanitized) keys.resize(20000);
  check_all_ways(keys, 3000, 13);
  uint64_t raw = 0;
  for (const auto& k : std::set<std::string>(keys.begin(), keys.end())) raw += k.size();
  const auto s = SuccinctSet::build(keys);
  if (!kSanitized) {
    EXPECT_LT(static_cast<double>(s.size_in_bytes()), 0.40 * static_cast<double>(raw));
  }
  // A word list has long chains, but too few keys pass through them for a table.
  EXPECT_EQ(s.chain_count(), 0u);
  EXPECT_EQ(expected_chains(keys), 0u);
}

TEST(SuccinctSet, MillionKeys) {
  const size_t n = kSanitized ? 50000 : 1000000;
  auto keys = test::random_keys(n, 77, 16);
  // Shared prefixes too: decimal numbers.
  for (size_t i = 0; i < n / 4; ++i) keys.push_back("id" + std::to_string(i * 7919));
  // The reference set is filled in key order, so its nodes lie in memory in that order
  // and check_set's walks over it read them one after another rather than missing the
  // caches at every step. The SuccinctSet is built from the keys in their random order.
  std::vector<std::string> in_order(keys);
  std::sort(in_order.begin(), in_order.end());
  const std::set<std::string> ref(in_order.begin(), in_order.end());
  in_order = {};
  const auto s = SuccinctSet::build(keys);
  // Large enough that contains_many interleaves its descents (check_set compares it).
  if (!kSanitized) {
    EXPECT_GE(s.size_in_bytes(), size_t{4} << 20);
  }
  check_set(s, ref, 20000, 3);
  test::TempDir dir;
  const auto bytes = s.serialize();
  write_file_atomic(dir.file("m.amq"), bytes);
  check_set(SuccinctSet::open(dir.file("m.amq")), ref, 5000, 4);
  check_set(SuccinctSet::load(bytes), ref, 2000, 5);
}

// Positions past 32 bits: a set with more than 4 GiB of key bytes, nearly all of them in
// tails, so the tail area, the tail bitmap's positions and the file pass 2^32. Built,
// checked key by key against the sorted keys, written, memory-mapped and checked again.
// Needs ~11 GiB of memory, ~6 GiB of disk in the temporary directory and a few minutes,
// so it runs only when asked: AMQ_LARGE_TESTS=1.
TEST(SuccinctSet, BeyondFourGiBOfKeyBytes) {
  if (kSanitized) GTEST_SKIP() << "not under sanitizers";
  if (!std::getenv("AMQ_LARGE_TESTS"))
    GTEST_SKIP() << "set AMQ_LARGE_TESTS=1 to run (needs ~11 GiB of memory and ~6 GiB of disk)";
  constexpr size_t kLen = 224, kKeys = (size_t{1} << 24) + (size_t{1} << 22);  // 4.7e9 key bytes
  std::vector<char> arena(kLen * kKeys);
  std::mt19937_64 rng(2026);
  for (size_t i = 0; i < arena.size(); i += 8) {
    const uint64_t r = rng();
    for (size_t b = 0; b < 8; ++b) arena[i + b] = static_cast<char>('a' + ((r >> (8 * b)) & 0xff) % 26);
  }
  std::vector<std::string_view> sorted(kKeys);
  for (size_t i = 0; i < kKeys; ++i) sorted[i] = std::string_view(arena.data() + i * kLen, kLen);
  // In generation order. Raw tails: coded, these random letters' tails would shrink
  // below the 4 GiB that this test is about (positions past 2^32 in the tail area).
  std::optional<SuccinctSet> built = SuccinctSet::build(sorted, {.tail_coding = SuccinctSet::Options::TailCoding::never});
  const SuccinctSet& s = *built;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("peak resident memory after the build: %.1f GiB\n", static_cast<double>(usage.ru_maxrss) / (1 << 20));
  std::sort(sorted.begin(), sorted.end());
  ASSERT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  ASSERT_EQ(s.size(), kKeys);
  ASSERT_GT(s.tail_bytes(), uint64_t{1} << 32);
  ASSERT_GT(s.size_in_bytes(), size_t{1} << 32);

  auto check = [&](const SuccinctSet& set, size_t stride) {
    for (size_t i = 0; i < kKeys; i += stride) {
      ASSERT_TRUE(set.contains(sorted[i])) << i;
      std::string other(sorted[i]);
      other.back() = other.back() == 'a' ? 'b' : 'a';
      const uint64_t at = static_cast<uint64_t>(std::lower_bound(sorted.begin(), sorted.end(), other) - sorted.begin());
      const bool present = at < kKeys && sorted[at] == other;
      ASSERT_EQ(set.contains(other), present) << i;
      ASSERT_EQ(set.rank(other), at) << i;
    }
    // Sorted positions and keys at both ends and spread between (the last keys' tails
    // lie past 4 GiB).
    for (size_t i = 0; i < kKeys; i = i + 1 < 3000 || i + 3000 >= kKeys ? i + 1 : i + 7919) {
      ASSERT_EQ(set.index_of(sorted[i]), i);
      ASSERT_EQ(set.key_at(i), sorted[i]);
    }
    // Every key in order, then a prefix and a range near the end.
    size_t i = 0;
    for (std::string_view k : set) {
      ASSERT_LT(i, kKeys);
      ASSERT_EQ(k, sorted[i]) << i;
      ++i;
    }
    ASSERT_EQ(i, kKeys);
    const std::string_view last = sorted.back();
    const std::string_view pre = last.substr(0, 4);
    i = static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), pre) - sorted.begin());
    for (std::string_view k : set.prefix(pre)) ASSERT_EQ(k, sorted[i++]);
    ASSERT_EQ(i, kKeys);
    const size_t a = kKeys - 5000, b = kKeys - 10;
    i = a;
    for (std::string_view k : set.range(sorted[a], sorted[b])) ASSERT_EQ(k, sorted[i++]);
    ASSERT_EQ(i, b);
  };
  check(s, 1);

  test::TempDir dir;
  write_file_atomic(dir.file("big.amq"), s.bytes());
  std::printf("%zu keys, %zu key bytes, %llu tail bytes, %zu bytes of set\n", kKeys, arena.size(),
              static_cast<unsigned long long>(s.tail_bytes()), s.size_in_bytes());
  const size_t set_bytes = s.size_in_bytes();
  built.reset();  // the mapping's pages count as resident too
  const auto mapped = SuccinctSet::open(dir.file("big.amq"));
  ASSERT_TRUE(mapped.is_mapped());
  ASSERT_EQ(mapped.size(), kKeys);
  ASSERT_EQ(mapped.size_in_bytes(), set_bytes);
  check(mapped, 3);
}

TEST(SuccinctSet, Uint64Keys) {
  const std::vector<uint64_t> keys = {1, 2, 3, 1ULL << 40, 2};
  const auto s = SuccinctSet::build(keys);
  EXPECT_EQ(s.size(), 4u);
  EXPECT_TRUE(s.contains(uint64_t{1ULL << 40}));
  EXPECT_FALSE(s.contains(uint64_t{4}));
  const std::vector<uint64_t> probes = {4, 1ULL << 40, 3, 0, 2, 1ULL << 41};
  bool out[6], portable[6];
  EXPECT_EQ(s.contains_many(probes, std::span<bool>(out, 6)), 3u);
  EXPECT_EQ(Peer::contains_many_interleaved(portable_twin(s), probes, std::span<bool>(portable, 6)), 3u);
  for (size_t i = 0; i < probes.size(); ++i) {
    EXPECT_EQ(out[i], s.contains(probes[i])) << probes[i];
    EXPECT_EQ(portable[i], out[i]) << probes[i];
  }
}

// ---- corrupted input -------------------------------------------------------------

TEST(SuccinctSet, RejectsTruncatedAndWrongFiles) {
  const auto bytes = SuccinctSet::build({"ab", "abc", "buv", "x"}).serialize();
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_THROW(SuccinctSet::load(std::span(bytes).first(n)), Error);
  auto flipped = bytes;
  flipped[flipped.size() / 2] ^= std::byte{1};
  try {
    SuccinctSet::load(flipped);
    FAIL() << "accepted a changed file";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::checksum_mismatch);
  }
  const auto other = write_container(Kind::bloom, {}, {});
  try {
    SuccinctSet::load(other);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::wrong_kind);
  }
  EXPECT_THROW(SuccinctSet::open("/nonexistent/file.amq"), Error);
}

// Changes inside a container whose checksum is then made right again, so only the
// structural validation stands between the bytes and the queries.
class StructuralValidation : public testing::TestWithParam<SuccinctSet::Options::TailCoding> {};

TEST_P(StructuralValidation, CatchesEveryChange) {
  std::vector<std::string> keys = test::random_keys(300, 5, 6);
  keys.push_back("");
  keys.push_back("abc");
  keys.push_back("abcdef");
  const auto bytes = SuccinctSet::build(keys, {.tail_coding = GetParam()}).serialize();
  const Container c = parse_container(bytes);
  const std::vector<std::byte> params(c.params.begin(), c.params.end());
  const std::vector<std::byte> payload(c.payload.begin(), c.payload.end());
  std::mt19937_64 rng(1);
  const std::set<std::string> ref(keys.begin(), keys.end());
  size_t rejected = 0, accepted = 0;
  for (int t = 0; t < (kSanitized ? 300 : 3000); ++t) {
    auto p = params;
    auto q = payload;
    if (t % 10 == 0) p[rng() % p.size()] ^= std::byte{static_cast<uint8_t>(1 + rng() % 255)};
    else q[rng() % q.size()] ^= std::byte{static_cast<uint8_t>(1u << (rng() % 8))};
    try {
      const auto s = SuccinctSet::load(write_container(Kind::succinct, p, q));
      ++accepted;
      // Whatever it holds, every query is safe and consistent with itself.
      uint64_t i = 0;
      for (std::string_view k : s) {
        ASSERT_TRUE(s.contains(k));
        ASSERT_EQ(s.index_of(k), i);
        ASSERT_EQ(s.key_at(i), k);
        ++i;
      }
      ASSERT_EQ(i, s.size());
      for (const auto& k : keys) (void)s.contains(k), (void)s.rank(k), (void)s.lower_bound(k);
    } catch (const Error& e) {
      ++rejected;
      EXPECT_TRUE(e.code() == Errc::corrupt || e.code() == Errc::truncated) << e.what();
    }
  }
  // A change in a label or tail byte can be a different but valid set; a change in a
  // bitmap, directory or count almost never is.
  EXPECT_GT(rejected, 0u);
  EXPECT_GT(accepted, 0u);
}

INSTANTIATE_TEST_SUITE_P(SuccinctSet, StructuralValidation,
                         testing::Values(SuccinctSet::Options::TailCoding::never,
                                         SuccinctSet::Options::TailCoding::always),
                         [](const auto& info) {
                           return info.param == SuccinctSet::Options::TailCoding::never ? "RawTails" : "CodedTails";
                         });

std::vector<std::string> url_keys(size_t n, uint64_t seed) {
  static const char* const hosts[] = {"www.example.com", "cdn.example.org", "static.assets.example.net"};
  std::mt19937_64 rng(seed);
  std::set<std::string> s;
  while (s.size() < n) {
    std::string k = std::string("https://") + hosts[rng() % 3] + "/";
    for (size_t i = 0, m = 1 + rng() % 3; i < m; ++i) {
      std::string w(3 + rng() % 8, 'a');
      for (char& c : w) c = static_cast<char>('a' + rng() % 26);
      k += (i ? "/" : "") + w;
    }
    s.insert(k + ".html");
  }
  return {s.begin(), s.end()};
}

// `automatic` codes the tails where that makes the set smaller: URLs, whose tails
// share ".html" and common letter pairs, not a handful of keys (the table would
// cost more than it saves). The file says which, and every query agrees.
TEST(SuccinctSet, TailCodingWhereItPays) {
  using Coding = SuccinctSet::Options::TailCoding;
  const auto keys = url_keys(5000, 3);
  const auto raw = SuccinctSet::build(keys, {.tail_coding = Coding::never});
  const auto aut = SuccinctSet::build(keys);
  ASSERT_FALSE(raw.tails_coded());
  ASSERT_TRUE(aut.tails_coded());
  EXPECT_EQ(aut.tail_count(), raw.tail_count());
  EXPECT_LT(aut.tail_bytes() * 10, raw.tail_bytes() * 7);
  EXPECT_LT(aut.size_in_bytes(), raw.size_in_bytes());
  EXPECT_TRUE(SuccinctSet::load(aut.serialize()).tails_coded());
  // Same keys, same file (the sample of tails is drawn with a fixed seed).
  EXPECT_EQ(SuccinctSet::build(keys).serialize(), aut.serialize());
  check_set(aut, std::set<std::string>(keys.begin(), keys.end()), 2000, 9);

  // Random bytes: every byte value about as common, no pairs to learn, so coding
  // makes the tails longer (the escaped bytes) and automatic keeps them raw.
  std::vector<std::string> noise;
  std::mt19937_64 rng(13);
  for (int i = 0; i < 3000; ++i) {
    std::string k(24, '\0');
    for (char& c : k) c = static_cast<char>(rng());
    noise.push_back(k);
  }
  const auto forced = SuccinctSet::build(noise, {.tail_coding = Coding::always});
  const auto raw_noise = SuccinctSet::build(noise, {.tail_coding = Coding::never});
  ASSERT_TRUE(forced.tails_coded());
  ASSERT_GT(forced.tail_bytes(), raw_noise.tail_bytes());
  EXPECT_FALSE(SuccinctSet::build(noise).tails_coded());
  EXPECT_EQ(SuccinctSet::build(noise).size_in_bytes(), raw_noise.size_in_bytes());

  const std::vector<std::string> few = {"apple", "apricot", "banana", "cherry"};
  EXPECT_FALSE(SuccinctSet::build(few).tails_coded());
  EXPECT_TRUE(SuccinctSet::build(few, {.tail_coding = Coding::always}).tails_coded());
  // No tails, nothing to code.
  EXPECT_FALSE(SuccinctSet::build(few, {.tail_compression = false, .tail_coding = Coding::always}).tails_coded());
  EXPECT_FALSE(SuccinctSet::build(std::vector<std::string>{"a", "b"}, {.tail_coding = Coding::always}).tails_coded());
}

// A coded file whose table or codes are wrong is rejected, checksum fixed or not: the
// escape with a length, a symbol longer than 8 bytes, a tail using an unused code or
// ending in an escape, and a fourth params field other than 1.
TEST(SuccinctSet, CodedTailsRejectBadTablesAndCodes) {
  const auto keys = url_keys(300, 4);
  const auto s = SuccinctSet::build(keys, {.tail_coding = SuccinctSet::Options::TailCoding::always});
  ASSERT_TRUE(s.tails_coded());
  const auto bytes = s.serialize();
  const Container c = parse_container(bytes);
  const std::vector<std::byte> params(c.params.begin(), c.params.end());
  const std::vector<std::byte> payload(c.payload.begin(), c.payload.end());
  ASSERT_EQ(params.size(), 32u);
  ASSERT_NO_THROW(SuccinctSet::load(write_container(Kind::succinct, params, payload)));
  const size_t table = payload.size() - detail::TailSymbols::kBytes;
  const detail::TailSymbols syms(payload.data() + table);
  uint8_t unused = 0;
  while (unused < detail::TailSymbols::kCodes && syms.length(unused) != 0) ++unused;
  // The tails as coded: the last one's last code, at the end of the tail area.
  const std::string tails = Peer::layout(s).tails;
  ASSERT_FALSE(tails.empty());
  const std::string_view whole(reinterpret_cast<const char*>(payload.data()), payload.size());
  const size_t tails_at = whole.rfind(tails, table);
  ASSERT_NE(tails_at, std::string_view::npos);
  const size_t last = tails_at + tails.size() - 1;
  auto expect_corrupt = [&](const std::vector<std::byte>& p, const std::vector<std::byte>& q, const char* what) {
    try {
      SuccinctSet::load(write_container(Kind::succinct, p, q));
      ADD_FAILURE() << "accepted: " << what;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::corrupt) << what << ": " << e.what();
    }
  };
  {
    auto q = payload;
    q[table + detail::TailSymbols::kEscape] = std::byte{1};
    expect_corrupt(params, q, "the escape with a length");
  }
  {
    auto q = payload;
    q[table] = std::byte{9};
    expect_corrupt(params, q, "a symbol of 9 bytes");
  }
  if (unused < detail::TailSymbols::kCodes) {
    auto q = payload;
    q[last] = std::byte{unused};
    expect_corrupt(params, q, "an unused code");
  }
  {
    auto q = payload;
    q[last] = std::byte{detail::TailSymbols::kEscape};
    expect_corrupt(params, q, "a tail ending in an escape");
  }
  {
    auto p = params;
    p[24] = std::byte{2};
    expect_corrupt(p, payload, "an unknown tail coding");
  }
  {
    // Without the fourth field the same payload is a raw-tail file of the wrong size.
    const std::vector<std::byte> p(params.begin(), params.begin() + 24);
    expect_corrupt(p, payload, "coded payload, raw params");
  }
}

// key_at() at every index, against the sorted keys (and the rest of check_set): sets
// with wide nodes, deep narrow levels, keys that are prefixes of others and long
// tails, in both tail modes.
TEST(SuccinctSet, KeyAtEveryIndex) {
  std::mt19937_64 rng(31);
  std::vector<std::vector<std::string>> sets;
  sets.push_back(test::random_keys(kSanitized ? 800 : 4000, 7, 12));
  {
    std::vector<std::string> keys;
    for (int i = 0; i < (kSanitized ? 1500 : 8000); ++i) {
      std::string k(rng() % 24, 'a');
      for (auto& c : k) c = static_cast<char>('a' + rng() % 3);
      keys.push_back(k);
      if (rng() % 8 == 0) keys.push_back(k + std::string(20 + rng() % 60, 'z'));
    }
    sets.push_back(keys);
  }
  {
    std::vector<std::string> keys;
    for (int a = 0; a < 40; ++a)
      for (int b = 0; b < (kSanitized ? 10 : 40); ++b)
        if (rng() % 2) keys.push_back(std::string{static_cast<char>(' ' + a), static_cast<char>(' ' + b)} + "k");
    sets.push_back(keys);
  }
  for (const auto& keys : sets) {
    const std::set<std::string> ref(keys.begin(), keys.end());
    for (bool tails : {true, false}) {
      SCOPED_TRACE(tails ? "tails" : "plain");
      // As many probes as keys: check_set then takes key_at at every index.
      check_set(SuccinctSet::build(keys, {.tail_compression = tails}), ref, ref.size(), 32);
    }
  }
}

// key_at() and index_of() are inverses at every index, on random shapes: alphabets of
// 2 to 256 letters, keys that are prefixes of others, long shared prefixes, both tail
// modes, and plain tries deep enough that key_at() keeps its walks of the cuts on the
// heap (past 64 levels above the counted ones) or, past 4096, does without them.
TEST(SuccinctSet, KeyAtAndIndexOfRoundTripOnRandomShapes) {
  std::mt19937_64 rng(44);
  // Returns the first counted level (key_at() keeps its walks above it).
  const auto round_trip = [](const std::vector<std::string>& keys, SuccinctSet::Options options) -> uint64_t {
    const std::set<std::string> ref(keys.begin(), keys.end());
    const std::vector<std::string> sorted(ref.begin(), ref.end());
    const auto s = SuccinctSet::build(keys, options);
    const uint64_t counted_from = s.counted_levels_from();
    const auto loaded = SuccinctSet::load(s.serialize());
    for (const SuccinctSet* set : {&s, &loaded}) {
      EXPECT_EQ(set->size(), sorted.size());
      for (uint64_t i = 0; i < sorted.size(); ++i) {
        EXPECT_EQ(set->key_at(i), sorted[i]) << i;
        EXPECT_EQ(set->index_of(sorted[i]), i) << i;
        if (set->key_at(i) != sorted[i]) return counted_from;
      }
    }
    return counted_from;
  };
  for (int alphabet : {2, 3, 26, 256}) {
    SCOPED_TRACE(alphabet);
    std::vector<std::string> keys;
    for (int i = 0; i < (kSanitized ? 600 : 4000); ++i) {
      std::string k(rng() % 14, 'a');
      for (auto& c : k) c = static_cast<char>(alphabet == 256 ? rng() : 'a' + rng() % alphabet);
      keys.push_back(k);
      if (rng() % 4 == 0) keys.push_back(k.substr(0, rng() % (k.size() + 1)));              // a prefix of it
      if (rng() % 8 == 0) keys.push_back(k + std::string(10 + rng() % 50, 'q') + "end");  // a long chain below
    }
    for (bool tails : {true, false}) round_trip(keys, {.tail_compression = tails});
  }
  // Plain tries 1,000 and 6,000 levels deep: branches off one long key at random depths.
  for (size_t depth : {size_t{1000}, size_t{6000}}) {
    SCOPED_TRACE(depth);
    std::string base(depth, 'a');
    for (auto& c : base) c = static_cast<char>('a' + rng() % 2);
    std::vector<std::string> keys = {base};
    for (int i = 0; i < 24; ++i) {
      std::string k = base.substr(0, rng() % depth);
      keys.push_back(k);
      k.push_back('c');
      keys.push_back(k + base.substr(0, rng() % 50));
    }
    const uint64_t counted_from = round_trip(keys, {.tail_compression = false});
    EXPECT_GT(counted_from, depth == 1000 ? 64u : 4096u);
    EXPECT_LE(counted_from, depth == 1000 ? 4096u : depth);
    round_trip(keys, {});
  }
}

TEST(SuccinctSet, KeyAtOutOfRange) {
  const auto s = SuccinctSet::build({"a"});
  try {
    (void)s.key_at(1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
  }
}

// ---- AnySet and the CLI ----------------------------------------------------------

TEST(SuccinctSet, AnySetAdapter) {
  const std::vector<std::string> keys = {"pear", "apple", "fig", "apple", ""};
  std::vector<Bytes> views;
  for (const auto& k : keys) views.push_back(as_bytes(k));
  auto set = build_set(Kind::succinct, BuildOptions{}, views);
  EXPECT_EQ(set->kind(), Kind::succinct);
  EXPECT_FALSE(set->is_dynamic());
  EXPECT_THROW(set->insert(as_bytes("x")), Error);
  for (const auto& k : keys) EXPECT_TRUE(set->contains(as_bytes(k)));
  EXPECT_FALSE(set->contains(as_bytes("grape")));
  const SetInfo i = set->info();
  EXPECT_EQ(i.items, 4u);
  EXPECT_TRUE(i.items_exact);
  EXPECT_EQ(i.fpp_expected, 0.0);
  EXPECT_EQ(i.bytes, set->serialize().size());
  EXPECT_NEAR(i.bits_per_key, 8.0 * static_cast<double>(i.bytes) / 4, 1e-9);
  auto again = load_set(set->serialize());
  EXPECT_EQ(again->kind(), Kind::succinct);
  EXPECT_TRUE(again->contains(as_bytes("fig")));
  // write_to hands over the set's own file image: the same bytes, no copy.
  const SuccinctSet typed = SuccinctSet::build(keys);
  EXPECT_TRUE(std::ranges::equal(typed.bytes(), typed.serialize()));
  set->write_to([&](std::span<const std::byte> b) {
    EXPECT_TRUE(std::ranges::equal(b, set->serialize()));
    EXPECT_TRUE(std::ranges::equal(b, typed.bytes()));
  });
  // open_set maps a succinct file and reads any other.
  test::TempDir dir;
  set->write_to([&](std::span<const std::byte> b) { write_file_atomic(dir.file("s.amq"), b); });
  auto opened = open_set(dir.file("s.amq"));
  EXPECT_EQ(opened->kind(), Kind::succinct);
  EXPECT_TRUE(opened->contains(as_bytes("pear")));
  EXPECT_FALSE(opened->contains(as_bytes("grape")));
  EXPECT_EQ(opened->info().params.back(), (std::pair<std::string, std::string>{"mapped", "yes"}));
  auto bloom = build_set(Kind::bloom, BuildOptions{}, views);
  bloom->write_to([&](std::span<const std::byte> b) { write_file_atomic(dir.file("b.amq"), b); });
  EXPECT_TRUE(open_set(dir.file("b.amq"))->contains(as_bytes("fig")));
  EXPECT_THROW(open_set(dir.file("missing.amq")), Error);
  BuildOptions guava;
  guava.format = "guava";
  EXPECT_THROW(build_set(Kind::succinct, guava, views), Error);
}

// A succinct set of u64 keys, built through AnySet, keeps them big-endian: the trie
// orders them numerically, so index_of, key_at and iteration follow the numbers. The
// AnySet takes the keys little-endian, as every kind does, and the file records u64.
TEST(SuccinctSet, U64KeysSortNumerically) {
  std::vector<std::string> le;
  for (uint64_t v = 1; v <= 300; ++v) le.emplace_back(as_chars(KeyView(v).bytes()));
  le.emplace_back(as_chars(KeyView(~uint64_t{0}).bytes()));  // -1 as Guava's longFunnel writes it
  std::vector<Bytes> views;
  for (const auto& k : le) views.push_back(as_bytes(k));
  BuildOptions o;
  o.key_type = KeyType::u64;
  auto set = build_set(Kind::succinct, o, views);
  EXPECT_EQ(set->key_type(), KeyType::u64);
  EXPECT_EQ(set->info().params.front(), (std::pair<std::string, std::string>{"key_type", "u64"}));
  const auto be = [](uint64_t v) {
    std::string b(8, '\0');
    for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (56 - 8 * i));
    return b;
  };
  test::TempDir dir;
  set->write_to([&](std::span<const std::byte> b) { write_file_atomic(dir.file("u.amq"), b); });
  const SuccinctSet typed = SuccinctSet::open(dir.file("u.amq"));
  EXPECT_EQ(container_key_type(typed.bytes()), KeyType::u64);
  ASSERT_EQ(typed.size(), 301u);
  uint64_t expect = 1, i = 0;
  for (std::string_view k : typed) {
    EXPECT_EQ(k, be(i == 300 ? ~uint64_t{0} : expect)) << i;
    ++expect, ++i;
  }
  EXPECT_EQ(typed.index_of(be(10)), 9u);
  EXPECT_EQ(typed.key_at(255), be(256));
  // Loaded or mapped, the AnySet answers little-endian keys and keeps the key type.
  std::vector<std::unique_ptr<AnySet>> loaded;
  loaded.push_back(load_set(set->serialize()));
  loaded.push_back(open_set(dir.file("u.amq")));
  for (const auto& again : loaded) {
    EXPECT_EQ(again->key_type(), KeyType::u64);
    for (Bytes k : views) EXPECT_TRUE(again->contains(k));
    EXPECT_FALSE(again->contains(as_bytes(as_chars(KeyView(uint64_t{301}).bytes()))));
    EXPECT_FALSE(again->contains(as_bytes(be(2))));  // 2 big-endian is 2^57 little-endian
    EXPECT_FALSE(again->contains(as_bytes("abc")));
    std::unique_ptr<bool[]> out(new bool[views.size() + 1]);
    auto probes = views;
    probes.push_back(as_bytes("abc"));
    EXPECT_EQ(again->contains_many(probes, std::span<bool>(out.get(), probes.size())), views.size());
    EXPECT_FALSE(out[views.size()]);
  }
  // A u64 key is 8 bytes.
  std::vector<Bytes> short_key = {as_bytes("1234567")};
  EXPECT_THROW(build_set(Kind::succinct, o, short_key), Error);
}

// String keys are stored as they were: a set built through AnySet is the typed set's
// file with the key type recorded in its header, and nothing else changed.
TEST(SuccinctSet, StrKeysUnchangedByTheKeyType) {
  const std::vector<std::string> keys = {"pear", "apple", "fig", "10", "9"};
  std::vector<Bytes> views;
  for (const auto& k : keys) views.push_back(as_bytes(k));
  BuildOptions o;
  o.key_type = KeyType::str;
  auto file = build_set(Kind::succinct, o, views)->serialize();
  EXPECT_EQ(container_key_type(file), KeyType::str);
  set_container_key_type(file, KeyType::unknown);
  EXPECT_TRUE(std::ranges::equal(file, SuccinctSet::build(keys).bytes()));
}

// A u64 set written before the key type was recorded keeps its little-endian trie and
// answers as it did: tests/data/succinct_u64_le_1_300.amq holds 1 .. 300, written by
// `seq 1 300 | amq build -t succinct --key-type u64` at commit ccff479.
TEST(SuccinctSet, LoadsU64FilesWithoutKeyType) {
  const auto file = read_file(std::string(AMQ_SOURCE_DIR) + "/tests/data/succinct_u64_le_1_300.amq");
  EXPECT_EQ(file[12], std::byte{0});
  auto set = load_set(file);
  EXPECT_EQ(set->key_type(), KeyType::unknown);
  EXPECT_EQ(set->info().params.front(), (std::pair<std::string, std::string>{"key_type", "unrecorded"}));
  for (uint64_t v = 1; v <= 300; ++v) EXPECT_TRUE(set->contains(KeyView(v).bytes())) << v;
  EXPECT_FALSE(set->contains(KeyView(uint64_t{301}).bytes()));
  // Written back unchanged: no key type is made up for it.
  EXPECT_TRUE(std::ranges::equal(set->serialize(), file));
}

// Files of the payload as written so far (version 1 in docs/decisions/0048: a tail
// bitmap 1 per node) load and answer from their bytes, and are written back unchanged:
// tests/data/succinct_v1_words.amq (417 words of american-english, raw tails) and
// succinct_v1_urls.amq (300 URLs, coded tails, a chain), written by `amq build -t
// succinct [--tail-coding always]` from the .txt beside each at commit d68be0b. A
// later payload version must keep them loading.
TEST(SuccinctSet, LoadsVersion1Files) {
  for (const char* name : {"succinct_v1_words", "succinct_v1_urls"}) {
    SCOPED_TRACE(name);
    const std::string base = std::string(AMQ_SOURCE_DIR) + "/tests/data/" + name;
    std::vector<std::string> keys;
    {
      std::ifstream in(base + ".txt");
      for (std::string line; std::getline(in, line);) keys.push_back(line);
    }
    ASSERT_GT(keys.size(), 200u);
    std::sort(keys.begin(), keys.end());
    const auto file = read_file(base + ".amq");
    const auto v1 = SuccinctSet::load(file);
    const auto mapped = SuccinctSet::open(base + ".amq");
    ASSERT_EQ(v1.size(), keys.size());
    EXPECT_EQ(v1.tails_coded(), std::string(name) == "succinct_v1_urls");
    EXPECT_TRUE(std::ranges::equal(v1.serialize(), file));  // written back unchanged
    std::vector<std::string> listed;
    for (std::string_view k : mapped) listed.emplace_back(k);
    EXPECT_EQ(listed, keys);
    std::mt19937_64 rng(7);
    std::vector<std::string> probes;
    for (uint64_t i = 0; i < keys.size(); ++i) {
      ASSERT_TRUE(v1.contains(keys[i])) << keys[i];
      ASSERT_EQ(v1.index_of(keys[i]), i);
      ASSERT_EQ(mapped.key_at(i), keys[i]);
      for (int t = 0; t < 4; ++t) probes.push_back(random_probe(rng, keys));
    }
    std::unique_ptr<bool[]> a(new bool[probes.size()]);
    Peer::contains_many_interleaved(v1, probes, std::span<bool>(a.get(), probes.size()));
    for (size_t i = 0; i < probes.size(); ++i) {
      const std::string& q = probes[i];
      const bool in = std::binary_search(keys.begin(), keys.end(), q);
      ASSERT_EQ(v1.contains(q), in) << q;
      ASSERT_EQ(a[i], in) << q;
      const auto r = static_cast<uint64_t>(std::lower_bound(keys.begin(), keys.end(), q) - keys.begin());
      ASSERT_EQ(v1.rank(q), r) << q;
      auto it = v1.lower_bound(q);
      ASSERT_EQ(it == v1.end(), r == keys.size()) << q;
      if (r < keys.size()) {
        ASSERT_EQ(*it, keys[r]) << q;
      }
    }
  }
}

#ifdef AMQ_CLI
TEST(SuccinctSetCli, BuildQueryInfoList) {
  test::TempDir dir;
  const std::string f = dir.file("w.amq");
  const std::string amq = "'" + test::cli() + "'";
  auto r = test::run(amq + " build -t succinct -o '" + f + "'", "pear\napple\nfig\napple\napricot\nbanana\n");
  ASSERT_EQ(r.status, 0) << r.err;
  r = test::run(amq + " query '" + f + "' fig kiwi apple");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "fig\napple\n");
  r = test::run(amq + " query '" + f + "' kiwi");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  r = test::run(amq + " info --json '" + f + "'");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("\"kind\":\"succinct\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"items\":5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"fpp_expected\":0"), std::string::npos) << r.out;
  const auto s = SuccinctSet::open(f);
  EXPECT_NE(r.out.find("\"labels_bytes\":" + std::to_string(s.size_parts().labels) + ","), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"load_table_bytes\":" + std::to_string(s.size_parts().load_tables) + ","),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"tail_coding\":\"raw\""), std::string::npos) << r.out;  // too few tails to pay
  // A file is memory-mapped (open_set), a pipe read and copied; both answer alike.
  EXPECT_NE(r.out.find("\"mapped\":\"yes\""), std::string::npos) << r.out;
  r = test::run("cat '" + f + "' | " + amq + " info --json /dev/stdin");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"mapped\":\"no\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"items\":5"), std::string::npos) << r.out;
  r = test::run("cat '" + f + "' | " + amq + " query /dev/stdin fig kiwi");
  EXPECT_EQ(r.out, "fig\n");
  r = test::run(amq + " list '" + f + "'");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "apple\napricot\nbanana\nfig\npear\n");
  r = test::run(amq + " list '" + f + "' --prefix ap");
  EXPECT_EQ(r.out, "apple\napricot\n");
  r = test::run(amq + " list '" + f + "' --from b --to g");
  EXPECT_EQ(r.out, "banana\nfig\n");
  r = test::run(amq + " list '" + f + "' --from apples --to pear");
  EXPECT_EQ(r.out, "apricot\nbanana\nfig\n");
  r = test::run(amq + " list '" + f + "' --prefix a --from apq");
  EXPECT_EQ(r.out, "apricot\n");
  r = test::run(amq + " list -c '" + f + "' --prefix b");
  EXPECT_EQ(r.out, "1\n");
  r = test::run(amq + " list '" + f + "' --prefix zz");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  r = test::run(amq + " list --key-type hex '" + f + "' --prefix 6669");  // "fi"
  EXPECT_EQ(r.out, "666967\n");
}

// URLs from the shell: the build codes their tails, and list, query and info say so
// and give the keys back.
TEST(SuccinctSetCli, CodedTailsFromTheShell) {
  test::TempDir dir;
  const std::string f = dir.file("u.amq");
  const std::string amq = "'" + test::cli() + "'";
  const auto keys = url_keys(3000, 8);
  std::string in, sorted;
  for (const auto& k : keys) sorted += k + "\n";
  for (auto it = keys.rbegin(); it != keys.rend(); ++it) in += *it + "\n";
  auto r = test::run(amq + " build -t succinct -o '" + f + "'", in);
  ASSERT_EQ(r.status, 0) << r.err;
  r = test::run(amq + " info --json '" + f + "'");
  EXPECT_NE(r.out.find("\"tail_coding\":\"symbols\""), std::string::npos) << r.out;
  r = test::run(amq + " list '" + f + "'");
  EXPECT_EQ(r.out, sorted);
  r = test::run(amq + " query -c '" + f + "'", in + "https://www.example.com/abc.htm\n");
  EXPECT_EQ(r.out, std::to_string(keys.size()) + "\n");
  // --tail-coding overrides the choice; the same keys come back either way.
  r = test::run(amq + " build -t succinct --tail-coding never -o '" + f + "'", in);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(test::run(amq + " info --json '" + f + "'").out.find("\"tail_coding\":\"raw\""), std::string::npos);
  EXPECT_EQ(test::run(amq + " list '" + f + "'").out, sorted);
  r = test::run(amq + " build -t succinct --tail-coding always -o '" + f + "'", "apple\nbanana\ncherry\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(test::run(amq + " info --json '" + f + "'").out.find("\"tail_coding\":\"symbols\""), std::string::npos);
  EXPECT_EQ(test::run(amq + " list '" + f + "'").out, "apple\nbanana\ncherry\n");
  r = test::run(amq + " build -t succinct --tail-coding sometimes -o '" + dir.file("x.amq") + "'", "a\n");
  EXPECT_EQ(r.status, 2);
  r = test::run(amq + " build -t bloom --tail-coding never -o '" + dir.file("y.amq") + "'", "a\n");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("does not apply"), std::string::npos) << r.err;
}

TEST(SuccinctSetCli, ListRejectsOtherAndBrokenFiles) {
  test::TempDir dir;
  const std::string amq = "'" + test::cli() + "'";
  const std::string bloom = dir.file("b.amq"), broken = dir.file("x.amq");
  ASSERT_EQ(test::run(amq + " build -t bloom -o '" + bloom + "'", "a\nb\n").status, 0);
  auto r = test::run(amq + " list '" + bloom + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("bloom"), std::string::npos) << r.err;
  auto bytes = SuccinctSet::build({"a", "b"}).serialize();
  bytes[40] ^= std::byte{4};
  write_file_atomic(broken, bytes);
  r = test::run(amq + " list '" + broken + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(broken), std::string::npos) << r.err;
  // query and info map the file: the same one-line error, exit 2.
  for (const std::string& cmd : {" query '" + broken + "' a", " info '" + broken + "'"}) {
    r = test::run(amq + cmd);
    EXPECT_EQ(r.status, 2) << cmd;
    EXPECT_NE(r.err.find(broken), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  r = test::run(amq + " list '" + dir.file("missing.amq") + "'");
  EXPECT_EQ(r.status, 2);
}
#endif

}  // namespace
}  // namespace amq
