// The amq CLI on cuckoo and scalable-cuckoo files: build, add, remove, query, info,
// and `add` on a full filter leaving the file as it was.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "amq/any_set.hpp"
#include "amq/file_io.hpp"
#include "test_util.hpp"

namespace amq {
namespace {

#ifdef AMQ_CLI

std::string lines(int from, int to, const std::string& prefix = "k") {
  std::string s;
  for (int i = from; i < to; ++i) s += prefix + std::to_string(i) + "\n";
  return s;
}

std::string q(const std::string& s) { return "'" + s + "'"; }

TEST(CuckooCli, BuildQueryAddRemoveInfo) {
  test::TempDir dir;
  const std::string file = dir.file("c.amq");
  for (const std::string kind : {"cuckoo", "scalable-cuckoo"}) {
    auto r = test::run(test::cli() + " build -t " + kind + " --fingerprint-bits 16 --bucket-size 2 -n 1000 -o " +
                           q(file),
                       lines(0, 500));
    ASSERT_EQ(r.status, 0) << kind << ": " << r.err;
    r = test::run(test::cli() + " info --json " + q(file));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("\"kind\":\"" + kind + "\""), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"bucket_size\":2,"), std::string::npos) << r.out;
    // A scalable-cuckoo's fingerprint bits are a list, one a level.
    EXPECT_NE(r.out.find(kind == "cuckoo" ? "\"fingerprint_bits\":16," : "\"fingerprint_bits\":[16]"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("\"items\":500,"), std::string::npos) << r.out;
    // query: every key built in is found (no false negatives).
    r = test::run(test::cli() + " query -c " + q(file), lines(0, 500));
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, "500\n");
    // add, then the new keys are found.
    r = test::run(test::cli() + " add " + q(file), lines(500, 700));
    ASSERT_EQ(r.status, 0) << r.err;
    r = test::run(test::cli() + " query -c " + q(file), lines(0, 700));
    EXPECT_EQ(r.out, "700\n");
    // remove: prints the keys not removed, exit 1 if any. Only keys listed as inserted
    // are removed with --only-if-present-in.
    std::ofstream(dir.file("inserted")) << lines(0, 700);
    r = test::run(test::cli() + " remove --only-if-present-in " + q(dir.file("inserted")) + " " + q(file) +
                  " k1 k2 never-added-key");
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.out, "never-added-key\n");
    r = test::run(test::cli() + " remove --only-inserted " + q(file) + " k3");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "");
    r = test::run(test::cli() + " query -v " + q(file) + " k1 k2 k3 k4");
    EXPECT_EQ(r.out, "k1\nk2\nk3\n");  // 16-bit fingerprints: a false positive here is ~1e-4
    r = test::run(test::cli() + " info " + q(file));
    // (names in a column as wide as the longest, "fingerprint_bits")
    EXPECT_NE(r.out.find("\nitems            697\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\nfingerprint_bits 16\n"), std::string::npos) << r.out;
    // The file is a valid container the library reads back.
    const auto set = load_set(read_file(file));
    EXPECT_EQ(std::string(kind_name(set->kind())), kind);
    EXPECT_TRUE(set->contains(as_bytes("k600")));
  }
}

TEST(CuckooCli, DefaultsChooseParametersFromFpp) {
  test::TempDir dir;
  const std::string file = dir.file("c.amq");
  auto r = test::run(test::cli() + " build -t cuckoo -p 0.002 -o " + q(file), lines(0, 1000));
  ASSERT_EQ(r.status, 0) << r.err;
  r = test::run(test::cli() + " info --json " + q(file));
  EXPECT_NE(r.out.find("\"fingerprint_bits\":12,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"bucket_size\":4,"), std::string::npos) << r.out;
  // Options that do not fit are refused.
  r = test::run(test::cli() + " build -t cuckoo --bucket-size 3 -o " + q(dir.file("x")), "a\n");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("bucket-size"), std::string::npos) << r.err;
  r = test::run(test::cli() + " build -t cuckoo --fingerprint-bits 40 -o " + q(dir.file("x")), "a\n");
  EXPECT_EQ(r.status, 2);
  r = test::run(test::cli() + " build -t bloom --fingerprint-bits 12 -o " + q(dir.file("x")), "a\n");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("does not apply"), std::string::npos) << r.err;
  r = test::run(test::cli() + " build -t scalable-cuckoo --growth 1.5 -o " + q(dir.file("x")), "a\n");
  EXPECT_EQ(r.status, 2);
}

TEST(CuckooCli, AddOnFullFilterFailsAndLeavesFileUnchanged) {
  test::TempDir dir;
  const std::string file = dir.file("full.amq");
  auto r = test::run(test::cli() + " build -t cuckoo --fingerprint-bits 12 --bucket-size 4 -n 100 -o " + q(file),
                     lines(0, 100));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto before = read_file(file);
  r = test::run(test::cli() + " add " + q(file), lines(100, 400));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("full"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("file left unchanged"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(file), before);
  r = test::run(test::cli() + " query -c " + q(file), lines(0, 100));
  EXPECT_EQ(r.out, "100\n");
  // The same keys go into a scalable-cuckoo, which grows.
  const std::string grow = dir.file("grow.amq");
  r = test::run(test::cli() + " build -t scalable-cuckoo -n 100 -o " + q(grow), lines(0, 100));
  ASSERT_EQ(r.status, 0) << r.err;
  r = test::run(test::cli() + " add " + q(grow), lines(100, 5000));
  ASSERT_EQ(r.status, 0) << r.err;
  r = test::run(test::cli() + " query -c " + q(grow), lines(0, 5000));
  EXPECT_EQ(r.out, "5000\n");
  // Building more keys than the capacity of a plain cuckoo filter is an error too.
  r = test::run(test::cli() + " build -t cuckoo -n 10 -o " + q(dir.file("small.amq")), lines(0, 1000));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("full"), std::string::npos) << r.err;
}

// Removing a key that was never inserted can delete another key's fingerprint, so
// remove asks for --only-inserted or --only-if-present-in LIST and refuses without.
TEST(CuckooCli, RemoveOnlyKeysThatWereInserted) {
  test::TempDir dir;
  const std::string file = dir.file("c.amq");
  const std::string words = lines(0, 2000, "w");
  std::string absent;  // 20000 keys never inserted
  for (int i = 0; i < 20000; ++i) absent += "absent-" + std::to_string(i) + "\n";
  std::ofstream(dir.file("words")) << words;
  for (const std::string kind : {"cuckoo", "scalable-cuckoo"}) {
    auto r = test::run(test::cli() + " build -t " + kind + " --fingerprint-bits 4 -o " + q(file), words);
    ASSERT_EQ(r.status, 0) << kind << ": " << r.err;
    const auto before = read_file(file);
    // Without a flag: refused, one line naming the file, the file unchanged.
    r = test::run(test::cli() + " remove " + q(file), absent);
    EXPECT_EQ(r.status, 2) << kind;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(r.err.rfind("amq: " + file + ": refusing to remove keys without --only-inserted", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(read_file(file), before);
    r = test::run(test::cli() + " remove --only-inserted --only-if-present-in " + q(dir.file("words")) + " " +
                  q(file) + " w1");
    EXPECT_NE(r.status, 0);
    // With the list of inserted keys: the absent keys are not removed (4-bit
    // fingerprints make most of them false positives), and every word stays.
    r = test::run(test::cli() + " remove --only-if-present-in " + q(dir.file("words")) + " " + q(file), absent);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.out, absent);
    EXPECT_EQ(read_file(file), before);
    r = test::run(test::cli() + " query -c " + q(file), words);
    EXPECT_EQ(r.out, "2000\n") << kind;
    // A listed key given twice is removed once.
    r = test::run(test::cli() + " remove --only-if-present-in " + q(dir.file("words")) + " " + q(file) + " w5 w5");
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.out, "w5\n");
    r = test::run(test::cli() + " info --json " + q(file));
    EXPECT_NE(r.out.find("\"items\":1999,"), std::string::npos) << kind << ": " << r.out;
  }
}

// amq build makes a set: a key given many times is inserted once, so a build of
// duplicated lines holds each key once and never fills up on copies.
TEST(CuckooCli, BuildInsertsDuplicateKeysOnce) {
  test::TempDir dir;
  const std::string file = dir.file("d.amq");
  std::string nine_k, nine_blank;
  for (int i = 0; i < 9; ++i) nine_k += "k\n", nine_blank += "\n";
  std::string repeated;  // 3000 lines, 300 distinct keys, each 10 times
  for (int copy = 0; copy < 10; ++copy) repeated += lines(0, 300);
  for (const std::string kind : {"cuckoo", "scalable-cuckoo"}) {
    for (const std::string& input : {nine_k, nine_blank}) {
      auto r = test::run(test::cli() + " build -t " + kind + " -o " + q(file), input);
      ASSERT_EQ(r.status, 0) << kind << ": " << r.err;
      r = test::run(test::cli() + " info --json " + q(file));
      EXPECT_NE(r.out.find("\"items\":1,"), std::string::npos) << kind << ": " << r.out;
    }
    auto r = test::run(test::cli() + " query -c " + q(file), "\n");
    EXPECT_EQ(r.out, "1\n") << kind;  // the blank key
    r = test::run(test::cli() + " build -t " + kind + " -o " + q(file), repeated);
    ASSERT_EQ(r.status, 0) << kind << ": " << r.err;
    r = test::run(test::cli() + " info --json " + q(file));
    EXPECT_NE(r.out.find("\"items\":300,"), std::string::npos) << kind << ": " << r.out;
    r = test::run(test::cli() + " query -c " + q(file), lines(0, 300));
    EXPECT_EQ(r.out, "300\n") << kind;
    // One remove takes a key out: it was stored once.
    r = test::run(test::cli() + " remove --only-inserted " + q(file) + " k7");
    EXPECT_EQ(r.status, 0) << r.err;
    r = test::run(test::cli() + " info --json " + q(file));
    EXPECT_NE(r.out.find("\"items\":299,"), std::string::npos) << kind << ": " << r.out;
  }
}

// amq add counts copies: adding a key that is there stores one more copy, up to 2b
// per key (its two buckets), and a remove takes one copy away. Past 2b the error says
// so, rather than calling the filter full.
TEST(CuckooCli, AddCountsCopiesAndNamesTheLimit) {
  test::TempDir dir;
  const std::string file = dir.file("c.amq");
  for (const std::string kind : {"cuckoo", "scalable-cuckoo"}) {
    auto r = test::run(test::cli() + " build -t " + kind + " --bucket-size 2 -n 1000 -o " + q(file), lines(0, 100));
    ASSERT_EQ(r.status, 0) << r.err;
    r = test::run(test::cli() + " add " + q(file) + " k5 k5");  // 3 copies
    ASSERT_EQ(r.status, 0) << r.err;
    for (int i = 0; i < 3; ++i) {
      r = test::run(test::cli() + " query " + q(file) + " k5");
      EXPECT_EQ(r.out, "k5\n") << kind << " after " << i << " removes";
      r = test::run(test::cli() + " remove --only-inserted " + q(file) + " k5");
      EXPECT_EQ(r.status, 0) << r.err;
    }
    r = test::run(test::cli() + " query " + q(file) + " k5");
    EXPECT_EQ(r.status, 1) << kind << ": 3 copies added, 3 removed";
    r = test::run(test::cli() + " add " + q(file) + " k6 k6 k6");  // 4 = 2b copies
    ASSERT_EQ(r.status, 0) << r.err;
    const auto before = read_file(file);
    r = test::run(test::cli() + " add " + q(file) + " k6");
    EXPECT_EQ(r.status, 2) << kind;
    EXPECT_NE(r.err.find("too many copies of this key"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("at most 2b = 4 copies"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("full"), std::string::npos) << r.err;
    EXPECT_EQ(read_file(file), before);
  }
}

TEST(CuckooCli, CorruptFileIsAClearError) {
  test::TempDir dir;
  const std::string file = dir.file("c.amq");
  ASSERT_EQ(test::run(test::cli() + " build -t cuckoo -o " + q(file), lines(0, 50)).status, 0);
  auto bytes = read_file(file);
  bytes[bytes.size() / 2] ^= std::byte{0x40};
  write_file_atomic(file, bytes);
  const auto r = test::run(test::cli() + " query " + q(file) + " k1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("checksum"), std::string::npos) << r.err;
}

#else
TEST(CuckooCli, Skipped) { GTEST_SKIP() << "the amq CLI is not built (AMQ_BUILD_TOOLS=OFF)"; }
#endif

}  // namespace
}  // namespace amq
