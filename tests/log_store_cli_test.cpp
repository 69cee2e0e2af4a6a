// amq store import | export | put | get | del | stats | compact, through the CLI.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "amq/log_store.hpp"
#include "test_util.hpp"

#ifdef AMQ_CLI  // a build without the tool (AMQ_BUILD_TOOLS=OFF) has no CLI to test
namespace amq {
namespace {

using test::cli;
using test::run;
using test::TempDir;

std::string q(const std::string& s) { return "'" + s + "'"; }

void write_bytes(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary) << data;
}

std::string random_bytes(size_t n, uint64_t seed) {
  std::string s(n, '\0');
  uint64_t x = seed;
  for (size_t i = 0; i + 8 <= n; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(s.data() + i, &x, 8);
  }
  for (size_t i = n / 8 * 8; i < n; ++i) s[i] = static_cast<char>(i * 31);
  return s;
}

// Imports `data` with chunk size `chunk`, exports it, and compares byte for byte.
void round_trip(const TempDir& t, const std::string& name, const std::string& data, size_t chunk,
                const std::string& want_chunks) {
  const std::string in = t.file(name), db = t.file(name + ".db"), out = t.file(name + ".out");
  write_bytes(in, data);
  auto r = run(cli() + " store import " + q(in) + " " + q(db) + " --chunk " + std::to_string(chunk));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find(want_chunks), std::string::npos) << r.err;
  r = run(cli() + " store export " + q(db) + " " + q(out));
  ASSERT_EQ(r.status, 0) << r.err;
  // Byte-identical, and no temporary file left beside it.
  r = run("cmp " + q(in) + " " + q(out));
  EXPECT_EQ(r.status, 0) << name << ": " << r.out;
  for (const auto& e : std::filesystem::directory_iterator(t.path()))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
}

TEST(LogStoreCli, ImportExportShapes) {
  TempDir t;
  round_trip(t, "empty", "", 4096, "0 chunks, 0 new");
  round_trip(t, "multiple", random_bytes(4096 * 8, 1), 4096, "8 chunks, 8 new");
  round_trip(t, "ragged", random_bytes(4096 * 8 + 123, 2), 4096, "9 chunks, 9 new");
  round_trip(t, "small", "x", 4096, "1 chunks, 1 new");
  // Ten copies of one block, then two of another and a ragged tail: 3 distinct chunks.
  const std::string a = random_bytes(1000, 3), b = random_bytes(1000, 4);
  std::string rep;
  for (int i = 0; i < 10; ++i) rep += a;
  rep += b + b + "tail";
  round_trip(t, "repeated", rep, 1000, "13 chunks, 3 new");
  // Re-importing the same file into the same store adds no chunk.
  const std::string db = t.file("repeated.db");
  auto r = run(cli() + " store import " + q(t.file("repeated")) + " " + q(db) + " --chunk 1000");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.err.find("13 chunks, 0 new"), std::string::npos) << r.err;
}

TEST(LogStoreCli, ExportToStandardOutput) {
  TempDir t;
  const std::string data = random_bytes(4096 * 5 + 77, 9), in = t.file("in"), db = t.file("db");
  write_bytes(in, data);
  ASSERT_EQ(run(cli() + " store import " + q(in) + " " + q(db) + " --chunk 4096").status, 0);
  auto r = run(cli() + " store export " + q(db) + " -");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.out == data) << "stdout differs from the imported file (" << r.out.size() << " bytes)";
  // A store missing a chunk: one error line, exit 2, and nothing at all on stdout.
  const std::string small = t.file("small"), db2 = t.file("db2");
  write_bytes(small, "x");
  ASSERT_EQ(run(cli() + " store import " + q(small) + " " + q(db2)).status, 0);
  // SHA-1("x"): the one chunk's key.
  ASSERT_EQ(run(cli() + " store del --key-type hex " + q(db2) + " 11f6ad8ec52a2984abaafd7c3b516503785c2072").status, 0);
  r = run(cli() + " store export " + q(db2) + " -");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("missing"), std::string::npos) << r.err;
}

TEST(LogStoreCli, HundredMegabyteFile) {
  TempDir t;
  std::string data = random_bytes(100u << 20, 99);
  // Some repeated regions too.
  std::memcpy(data.data() + (50u << 20), data.data(), 1u << 20);
  round_trip(t, "big", data, 64 * 1024, "1600 chunks, 1584 new");
}

TEST(LogStoreCli, PutGetDelStatsCompact) {
  TempDir t;
  const std::string db = q(t.file("db"));
  EXPECT_EQ(run(cli() + " store put " + db + " apple red").status, 0);
  EXPECT_EQ(run(cli() + " store put " + db + " pear green").status, 0);
  EXPECT_EQ(run(cli() + " store put " + db + " apple 'dark red'").status, 0);
  auto r = run(cli() + " store get " + db + " apple");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "dark red");
  r = run(cli() + " store get " + db + " plum");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(run(cli() + " store del " + db + " pear").status, 0);
  EXPECT_EQ(run(cli() + " store del " + db + " pear").status, 1);
  EXPECT_EQ(run(cli() + " store get " + db + " pear").status, 1);
  EXPECT_EQ(run(cli() + " store put --key-type u64 " + db + " 42 answer").status, 0);
  {
    auto s = LogStore::open(t.file("db"));
    EXPECT_EQ(s.get(uint64_t{42}), "answer");
  }
  r = run(cli() + " store stats " + db);
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("records          5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("live keys        2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("index bytes/key"), std::string::npos) << r.out;
  r = run(cli() + " store compact " + db);
  EXPECT_EQ(r.status, 0) << r.err;
  r = run(cli() + " store stats " + db);
  EXPECT_NE(r.out.find("records          2"), std::string::npos) << r.out;
  EXPECT_EQ(run(cli() + " store get " + db + " apple").out, "dark red");
  // Missing store: an error, not an empty store.
  r = run(cli() + " store get " + q(t.file("nope")) + " apple");
  EXPECT_EQ(r.status, 2);
  EXPECT_FALSE(std::filesystem::exists(t.file("nope")));
}

TEST(LogStoreCli, SecondWriterGetsLockedError) {
  TempDir t;
  auto s = LogStore::open(t.file("db"));
  const auto r = run(cli() + " store put " + q(t.file("db")) + " k v");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("another writer"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace amq
#endif  // AMQ_CLI
