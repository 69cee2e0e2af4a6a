// The amq CLI's Redis forms — build/query/add/info --redis, push, pull — against a
// private redis-server; skipped when redis-server or the amq tool is absent.
#include <gtest/gtest.h>

#include <fmt/core.h>

#include <fstream>
#include <string>

#include "amq/detail/redis_client.hpp"
#include "amq/file_io.hpp"
#include "amq/format.hpp"
#include "amq/scalable_bloom_filter.hpp"
#include "redis_server.hpp"
#include "test_util.hpp"

namespace {

using amq::test::run;

#ifdef AMQ_CLI

std::string q(const std::string& s) { return "'" + s + "'"; }

class RedisCli : public ::testing::Test {
 protected:
  void SetUp() override {
    AMQ_REQUIRE_REDIS();
    server_ = std::make_unique<amq::test::RedisServer>();
    target_ = " --redis " + server_->url() + " --name ";
  }
  std::string amq() const { return q(amq::test::cli()); }
  std::unique_ptr<amq::test::RedisServer> server_;
  std::string target_;
  amq::test::TempDir tmp_;
};

TEST_F(RedisCli, BuildQueryInfo) {
  // Keys from a file and from stdin, into one shared filter created on first use.
  {
    std::ofstream f(tmp_.file("keys.txt"));
    for (int i = 0; i < 3000; ++i) f << "apple" << i << "\n";
  }
  auto r = run(amq() + " build -t scalable-bloom" + target_ + "fruit -p 0.01 -n 1000 " + q(tmp_.file("keys.txt")));
  ASSERT_EQ(r.status, 0) << r.err;
  r = run(amq() + " build -t scalable-bloom" + target_ + "fruit", "banana\ncherry\n");  // existing: as it is
  ASSERT_EQ(r.status, 0) << r.err;
  // Same parameters again are fine; other parameters are a clear error.
  r = run(amq() + " build -t scalable-bloom" + target_ + "fruit -p 0.01 -n 1000", "date\n");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run(amq() + " build -t scalable-bloom" + target_ + "fruit -p 0.001 -n 1000", "date\n");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("fpp=0.01"), std::string::npos) << r.err;

  r = run(amq() + " query" + target_ + "fruit apple7 banana surely-not-there");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "apple7\nbanana\n");
  r = run(amq() + " query -v" + target_ + "fruit apple7 surely-not-there");
  EXPECT_EQ(r.out, "surely-not-there\n");
  r = run(amq() + " query -c" + target_ + "fruit", "apple1\napple2\ncherry\nnope\n");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "3\n");
  r = run(amq() + " query" + target_ + "fruit nope nope2");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");

  // The same keys in memory give the counts to expect (keys that looked present when
  // added are not counted, in both).
  amq::ScalableBloomFilter ref({.initial_capacity = 1000, .fpp = 0.01});
  for (int i = 0; i < 3000; ++i) ref.insert(fmt::format("apple{}", i));
  for (const char* k : {"banana", "cherry", "date"}) ref.insert(k);
  r = run(amq() + " info" + target_ + "fruit");
  ASSERT_EQ(r.status, 0) << r.err;
  // (names in a column as wide as the longest, "initial_capacity")
  EXPECT_NE(r.out.find("kind             scalable-bloom"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("items            " + std::to_string(ref.size()) + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("layers           " + std::to_string(ref.layer_count()) + "\n"), std::string::npos) << r.out;
  r = run(amq() + " info --json" + target_ + "fruit");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"items\":" + std::to_string(ref.size()) + ","), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"format\":\"redis\""), std::string::npos) << r.out;

  // --key-type applies as for files.
  r = run(amq() + " build -t scalable-bloom --key-type u64" + target_ + "nums -n 100", "1\n2\n18446744073709551615\n");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run(amq() + " query --key-type u64" + target_ + "nums 18446744073709551615 3");
  EXPECT_EQ(r.out, "18446744073709551615\n");
}

// add --redis adds to an existing filter as add does to a file (keys as arguments or
// lines of stdin, --key-type), and the filter's info, query and add are the same
// commands as a file's.
TEST_F(RedisCli, AddToAFilterInRedis) {
  auto r = run(amq() + " build -t scalable-bloom -n 100" + target_ + "f", "a\n");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run(amq() + " add" + target_ + "f kiwi lime");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  r = run(amq() + " add" + target_ + "f", "mango\nnectarine\n");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run(amq() + " query" + target_ + "f a kiwi lime mango nectarine surely-not-there");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "a\nkiwi\nlime\nmango\nnectarine\n");
  r = run(amq() + " info --json" + target_ + "f");
  EXPECT_NE(r.out.find("\"items\":5,"), std::string::npos) << r.out;
  r = run(amq() + " add --key-type u64" + target_ + "f 18446744073709551615");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(run(amq() + " query --key-type u64" + target_ + "f 18446744073709551615 7").out,
            "18446744073709551615\n");
  // A filter that is not there is not created by add (build makes it).
  r = run(amq() + " add" + target_ + "absent k");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no such filter"), std::string::npos) << r.err;
  const std::string file = tmp_.file("set.amq");
  ASSERT_EQ(run(amq() + " build -t scalable-bloom -o " + q(file), "k\n").status, 0);
  r = run(amq() + " add " + q(file) + target_ + "f k2");  // a file and --redis
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("give either a file or --redis"), std::string::npos) << r.err;
  r = run(amq() + " add --name f k");  // --name without --redis
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--redis URL is required"), std::string::npos) << r.err;
  r = run(amq() + " add");  // neither a file nor --redis
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("file"), std::string::npos) << r.err;
}

TEST_F(RedisCli, PushPullRoundTrip) {
  const std::string keys = [] {
    std::string s;
    for (int i = 0; i < 5000; ++i) s += fmt::format("k{}\n", i);
    return s;
  }();
  for (const std::string kind : {"scalable-bloom", "bloom"}) {
    const std::string file = tmp_.file(kind + ".amq"), back = tmp_.file(kind + ".back");
    auto r = run(amq() + " build -t " + kind + " -n 1000 -o " + q(file), keys);
    ASSERT_EQ(r.status, 0) << r.err;
    r = run(amq() + " push " + q(file) + target_ + kind);
    ASSERT_EQ(r.status, 0) << r.err;
    r = run(amq() + " pull" + target_ + kind + " -o " + q(back));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(amq::read_file(file) == amq::read_file(back)) << kind;
    r = run(amq() + " query -c" + target_ + kind, keys);
    EXPECT_EQ(r.out, "5000\n") << kind;
  }
  // The file's key type goes to Redis and comes back with it.
  for (const std::string kind : {"scalable-bloom", "bloom"}) {
    const std::string file = tmp_.file(kind + "-u64.amq"), back = tmp_.file(kind + "-u64.back");
    ASSERT_EQ(run(amq() + " build -t " + kind + " --key-type u64 -o " + q(file), "1\n2\n3\n").status, 0);
    ASSERT_EQ(run(amq() + " push " + q(file) + target_ + kind + "-u64").status, 0);
    ASSERT_EQ(run(amq() + " pull" + target_ + kind + "-u64 -o " + q(back)).status, 0);
    const auto pulled = amq::read_file(back);
    EXPECT_TRUE(amq::read_file(file) == pulled) << kind;
    EXPECT_EQ(amq::container_key_type(pulled), amq::KeyType::u64) << kind;
    EXPECT_EQ(run(amq() + " query " + q(back) + " 2").out, "2\n") << kind;
  }
  // A Guava stream comes back as a Guava stream.
  const std::string guava = tmp_.file("g.bin"), gback = tmp_.file("g.back");
  ASSERT_EQ(run(amq() + " build -t bloom --format guava -o " + q(guava), keys).status, 0);
  ASSERT_EQ(run(amq() + " push " + q(guava) + target_ + "g").status, 0);
  ASSERT_EQ(run(amq() + " pull" + target_ + "g -o " + q(gback)).status, 0);
  EXPECT_TRUE(amq::read_file(guava) == amq::read_file(gback));
}

TEST_F(RedisCli, ErrorsAreClear) {
  auto r = run(amq() + " query --redis redis//nope --name x k");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("bad Redis URL"), std::string::npos) << r.err;
  r = run(amq() + " query" + target_ + "absent k");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no such filter"), std::string::npos) << r.err;
  r = run(amq() + " build -t bloom" + target_ + "x", "k\n");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("scalable-bloom"), std::string::npos) << r.err;
  const int port = amq::test::free_port();
  r = run(amq() + " info --redis redis://127.0.0.1:" + std::to_string(port) + " --name x");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("cannot connect"), std::string::npos) << r.err;
  r = run(amq() + " pull" + target_ + "absent -o " + q(tmp_.file("never")));
  EXPECT_EQ(r.status, 2);
  r = run(amq() + " push " + q(tmp_.file("missing.amq")) + target_ + "x");
  EXPECT_EQ(r.status, 2);
  r = run(amq() + " query --name x k");  // --name without --redis
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--redis"), std::string::npos) << r.err;
}

// info --json: numbers are numbers, and a name that is not UTF-8 cannot break the JSON
// (its bad bytes become U+FFFD).
TEST_F(RedisCli, InfoJsonIsValidForAnyName) {
  const std::string name = "\"$(printf 'x\\377\\042y')\"";  // x, 0xff, '"', y
  auto r = run(amq() + " build -t scalable-bloom -n 100" + target_ + name, "a\nb\n");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run(amq() + " info --json" + target_ + name);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"name\":\"x\xEF\xBF\xBD\\\"y\""), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\xFF'), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"initial_capacity\":100,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"layers\":[{\"capacity\":153,\"items\":2,"), std::string::npos) << r.out;
}

// `build --redis` refuses a name whose keys amq did not create, and leaves them as they are.
TEST_F(RedisCli, BuildRefusesKeysItDidNotCreate) {
  amq::detail::RedisClient c(server_->url());
  const std::string l0 = "amq:{s3}:L0";
  c.command(l0, {"SET", l0, "someone else's data"});
  auto r = run(amq() + " build -t scalable-bloom" + target_ + "s3", "a\nb\n");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("amq:{s3}:L0 exists but amq:{s3}:meta does not"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("refusing to overwrite it"), std::string::npos) << r.err;
  EXPECT_EQ(c.command(l0, {"GET", l0}).str, "someone else's data");
  r = run(amq() + " build -t scalable-bloom -n 100" + target_ + "s3", "a\n");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(c.command(l0, {"GET", l0}).str, "someone else's data");
}

#else
TEST(RedisCli, NeedsTheTool) { GTEST_SKIP() << "built without the amq tool (AMQ_BUILD_TOOLS=OFF)"; }
#endif

}  // namespace
