// RedisBloomFilter on a real 3-master Redis Cluster started by the test: routing by
// CLUSTER SLOTS, and ASK then MOVED while a filter's slot migrates to another node.
#include <gtest/gtest.h>

#include <memory>
#include <set>

#include "amq/detail/redis_client.hpp"
#include "amq/error.hpp"
#include "amq/redis_bloom_filter.hpp"
#include "redis_bloom_test_peer.hpp"
#include "redis_server.hpp"
#include "test_util.hpp"

namespace {

using amq::RedisBloomFilter;
using amq::detail::RedisClient;
using amq::detail::RedisConnection;
using amq::detail::RedisReply;

std::vector<std::string> keys_with(const std::string& prefix, size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

size_t found(RedisBloomFilter& f, const std::vector<std::string>& keys) {
  std::unique_ptr<bool[]> hit(new bool[keys.size()]);
  return f.contains_many(keys, std::span<bool>(hit.get(), keys.size()));
}

RedisReply on(amq::test::RedisServer& s, const std::vector<std::string_view>& args) {
  RedisConnection c("127.0.0.1", static_cast<uint16_t>(s.port()), {}, {});
  RedisReply r = c.command(args);
  if (r.is_error()) throw std::runtime_error(std::string(args[0]) + ": " + r.str);
  return r;
}

TEST(RedisCluster, RoutesFollowsAskAndMovedAcrossSlotMigration) {
  AMQ_REQUIRE_REDIS();
  amq::test::RedisCluster cluster;
  RedisClient client(cluster.url());
  ASSERT_TRUE(client.is_cluster());
  EXPECT_EQ(client.masters().size(), 3u);

  // Several filters: each lives in the slot of its name, on whichever master owns it.
  const amq::detail::ScalableParams p{.initial_capacity = 2000, .fpp = 0.01};
  std::set<std::string> owners;
  for (const char* name : {"alpha", "beta", "gamma", "delta", "epsilon"}) {
    auto f = RedisBloomFilter::create(cluster.url(), name, p);
    const auto keys = keys_with(std::string(name) + "-", 3000);
    f.insert_many(keys);
    EXPECT_EQ(found(f, keys), keys.size()) << name;
    for (size_t i = 0; i < cluster.size(); ++i) {
      const std::string slot = std::to_string(RedisClient::key_slot(RedisBloomFilter::meta_key(name)));
      if (on(cluster.node(i), {"CLUSTER", "COUNTKEYSINSLOT", slot}).integer > 0) owners.insert(cluster.node(i).endpoint());
    }
  }
  EXPECT_GE(owners.size(), 2u) << "five filters all landed on one node";

  // Migrate "alpha"'s slot to another master while a client keeps using it.
  auto f = RedisBloomFilter::create(cluster.url(), "alpha", p);
  const auto first = keys_with("alpha-", 3000);
  const uint16_t slot = RedisClient::key_slot(RedisBloomFilter::meta_key("alpha"));
  const std::string s = std::to_string(slot);
  size_t src = 0;
  for (size_t i = 0; i < cluster.size(); ++i)
    if (on(cluster.node(i), {"CLUSTER", "COUNTKEYSINSLOT", s}).integer > 0) src = i;
  const size_t dst = (src + 1) % cluster.size();
  const std::string src_id = on(cluster.node(src), {"CLUSTER", "MYID"}).str;
  const std::string dst_id = on(cluster.node(dst), {"CLUSTER", "MYID"}).str;
  // Every key of the filter is in that one slot: meta and its layers.
  const auto in_slot = on(cluster.node(src), {"CLUSTER", "GETKEYSINSLOT", s, "1000"});
  EXPECT_EQ(in_slot.elements.size(), f.info().layers.size() + 1);

  on(cluster.node(dst), {"CLUSTER", "SETSLOT", s, "IMPORTING", src_id});
  on(cluster.node(src), {"CLUSTER", "SETSLOT", s, "MIGRATING", dst_id});
  EXPECT_EQ(found(f, first), first.size());  // keys still on the source: served there
  std::vector<std::string_view> migrate{"MIGRATE", "127.0.0.1", std::to_string(cluster.node(dst).port()), "", "0",
                                        "5000", "KEYS"};
  const std::string dst_port = std::to_string(cluster.node(dst).port());
  migrate[2] = dst_port;
  for (const auto& k : in_slot.elements) migrate.push_back(k.str);
  on(cluster.node(src), migrate);

  // The source answers ASK now; the client follows it (ASKING + script on the target,
  // where the script is not loaded yet: NOSCRIPT, SCRIPT LOAD, again).
  const auto before = amq::detail::RedisBloomTestPeer::client(f).stats();
  EXPECT_EQ(found(f, first), first.size());
  EXPECT_GT(amq::detail::RedisBloomTestPeer::client(f).stats().ask, before.ask);
  EXPECT_EQ(amq::detail::RedisBloomTestPeer::client(f).stats().moved, before.moved);
  const auto second = keys_with("alpha-ask-", 3000);  // opens a new layer on the target
  f.insert_many(second);
  EXPECT_EQ(found(f, second), second.size());

  // Finish the migration: the client's slot map is stale and gets MOVED.
  for (size_t i : {dst, src, (dst + 1) % cluster.size()})
    on(cluster.node(i), {"CLUSTER", "SETSLOT", s, "NODE", dst_id});
  const uint64_t moved_before = amq::detail::RedisBloomTestPeer::client(f).stats().moved;
  EXPECT_EQ(found(f, first), first.size());
  EXPECT_EQ(amq::detail::RedisBloomTestPeer::client(f).stats().moved, moved_before + 1);  // once: the slot map is re-read
  EXPECT_EQ(found(f, second), second.size());
  EXPECT_EQ(amq::detail::RedisBloomTestPeer::client(f).stats().moved, moved_before + 1);
  const auto third = keys_with("alpha-moved-", 2000);
  f.insert_many(third);
  EXPECT_EQ(found(f, third), third.size());
  EXPECT_EQ(on(cluster.node(src), {"CLUSTER", "COUNTKEYSINSLOT", s}).integer, 0);
  EXPECT_GT(on(cluster.node(dst), {"CLUSTER", "COUNTKEYSINSLOT", s}).integer, 0);
  // A fresh client through the old owner is redirected as well.
  auto g = RedisBloomFilter::open(cluster.node(src).url(), "alpha");
  EXPECT_EQ(found(g, first), first.size());
  EXPECT_EQ(g.info().items, f.info().items);
  // Push/pull works in a cluster too.
  const auto layers = RedisBloomFilter::pull_layers(cluster.url(), "alpha");
  RedisBloomFilter::push_layers(cluster.url(), "alpha-copy", layers);
  const auto again = RedisBloomFilter::pull_layers(cluster.url(), "alpha-copy");
  EXPECT_TRUE(again.words == layers.words);
  EXPECT_TRUE(again.items == layers.items);

  // A cluster has only database 0.
  try {
    RedisClient c(cluster.url() + "/1");
    ADD_FAILURE() << "SELECT 1 accepted on a cluster";
  } catch (const amq::Error& e) {
    EXPECT_TRUE(e.code() == amq::Errc::remote || e.code() == amq::Errc::invalid_argument) << e.what();
  }
}

}  // namespace
