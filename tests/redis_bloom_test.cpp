// RedisBloomFilter and the Redis client against a real redis-server started by the
// test (tests/support/redis_server.hpp); skipped when redis-server is not installed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>
#include <random>
#include <set>
#include <thread>

#include <fmt/core.h>

#include "amq/bloom_filter.hpp"
#include "amq/detail/bloom_layers.hpp"
#include "amq/detail/redis_client.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "amq/redis_bloom_filter.hpp"
#include "amq/scalable_bloom_filter.hpp"
#include "redis_server.hpp"
#include "test_util.hpp"

namespace {

using amq::Errc;
using amq::RedisBloomFilter;
using amq::detail::RedisClient;
using amq::detail::RedisUrl;
using Params = amq::detail::ScalableParams;

std::vector<std::string> absent_keys(size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back("absent-" + std::to_string(i));
  return out;
}

// The most false positives to accept among n absent keys for a true rate of at most
// fpp: the expectation plus 4 standard deviations of the binomial (a filter near its
// bound must not fail by sampling noise; one clearly above it still does).
size_t fp_bound(double fpp, size_t n) {
  const double mean = fpp * static_cast<double>(n);
  return static_cast<size_t>(mean + 4 * std::sqrt(mean * (1 - fpp)));
}

size_t count_true(const std::vector<char>& v) {
  size_t c = 0;
  for (char x : v) c += x != 0;
  return c;
}

// contains_many over std::vector<char> storage (std::vector<bool> has no span).
size_t lookup(RedisBloomFilter& f, const std::vector<std::string>& keys, std::vector<char>& out) {
  std::unique_ptr<bool[]> hit(new bool[keys.size() + 1]);
  const size_t n = f.contains_many(keys, std::span<bool>(hit.get(), keys.size()));
  out.assign(hit.get(), hit.get() + keys.size());
  return n;
}

template <class F>
void expect_error(Errc code, const std::string& fragment, F&& f) {
  try {
    f();
    ADD_FAILURE() << "no error thrown (expected '" << fragment << "')";
  } catch (const amq::Error& e) {
    EXPECT_EQ(amq::errc_name(e.code()), amq::errc_name(code)) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(RedisUrl, Parses) {
  auto u = RedisUrl::parse("redis://127.0.0.1:6380/3");
  EXPECT_EQ(u.host, "127.0.0.1");
  EXPECT_EQ(u.port, 6380);
  EXPECT_EQ(u.db, 3);
  EXPECT_TRUE(u.password.empty());
  u = RedisUrl::parse("redis://alice:p%40ss:word@localhost:7000");
  EXPECT_EQ(u.user, "alice");
  EXPECT_EQ(u.password, "p@ss:word");
  EXPECT_EQ(u.host, "localhost");
  EXPECT_EQ(u.port, 7000);
  u = RedisUrl::parse("redis://:secret@h");
  EXPECT_EQ(u.user, "");
  EXPECT_EQ(u.password, "secret");
  EXPECT_EQ(u.port, 6379);
  u = RedisUrl::parse("redis://[::1]:6390/");
  EXPECT_EQ(u.host, "::1");
  EXPECT_EQ(u.port, 6390);
  EXPECT_EQ(u.db, 0);
}

TEST(RedisUrl, RejectsBadUrls) {
  for (const char* bad : {"http://h:1", "redis://", "redis://:1", "redis://h:0", "redis://h:65536", "redis://h:x",
                          "redis://h:", "redis://h:1/db", "redis://u:p%zz@h", "127.0.0.1:6379", "redis://[::1"}) {
    expect_error(Errc::invalid_argument, "bad Redis URL", [&] { RedisUrl::parse(bad); });
  }
  // The filter API reports the same, before connecting anywhere.
  expect_error(Errc::invalid_argument, "bad Redis URL", [] { RedisBloomFilter::open("redis//x", "f"); });
}

TEST(RedisClient, KeySlotIsRedisCluster) {
  // Values from the Redis Cluster specification (CRC16 XMODEM mod 16384).
  EXPECT_EQ(RedisClient::key_slot("123456789"), 0x31C3 & 16383);
  EXPECT_EQ(RedisClient::key_slot("foo"), 12182);
  EXPECT_EQ(RedisClient::key_slot("{user1000}.following"), RedisClient::key_slot("user1000"));
  EXPECT_EQ(RedisClient::key_slot("{}x"), RedisClient::key_slot("{}x"));
  EXPECT_NE(RedisClient::key_slot("{}x"), RedisClient::key_slot(""));  // empty tag: whole key hashed
  EXPECT_EQ(RedisClient::key_slot(RedisBloomFilter::meta_key("f")), RedisClient::key_slot(RedisBloomFilter::layer_key("f", 7)));
}

TEST(RedisBloom, RejectsBadNamesAndParams) {
  AMQ_REQUIRE_REDIS();
  amq::test::RedisServer server;
  expect_error(Errc::invalid_argument, "hash tag", [&] { RedisBloomFilter::create(server.url(), "a{b}", {}); });
  expect_error(Errc::invalid_argument, "non-empty", [&] { RedisBloomFilter::create(server.url(), "", {}); });
  expect_error(Errc::invalid_argument, "false-positive probability must be in (0, 1), got 1.5",
               [&] { RedisBloomFilter::create(server.url(), "x", {.initial_capacity = 10, .fpp = 1.5}); });
  expect_error(Errc::not_found, "no such filter", [&] { RedisBloomFilter::open(server.url(), "nope"); });
}

// Adds with duplicates, in batches of many sizes, through two clients whose layer
// counts go stale, and with the geometry protocol (status 1) exercised: the
// Redis filter must equal the in-memory ScalableBloomFilter given the same keys one at
// a time — pull() gives byte for byte its serialize(), and every answer agrees.
TEST(RedisBloom, EqualsInMemoryScalableBloomFilter) {
  AMQ_REQUIRE_REDIS();
  amq::test::RedisServer server;
  for (const Params p : {Params{.initial_capacity = 300, .fpp = 0.01, .growth = 2, .tightening = 0.5},
                         Params{.initial_capacity = 80, .fpp = 0.05, .growth = 1, .tightening = 0.8},
                         // Layers far larger than a batch: the per-bit BITFIELD paths.
                         Params{.initial_capacity = 1'000'000, .fpp = 0.01, .growth = 2, .tightening = 0.5}}) {
    const uint64_t seed = 12345;
    const std::string name = "ref-" + std::to_string(p.initial_capacity);
    amq::RedisOptions small;
    small.batch = 333;
    auto a = RedisBloomFilter::create(server.url(), name, p, seed, small);
    auto b = RedisBloomFilter::create(server.url(), name, p, seed);  // big batches
    amq::ScalableBloomFilter ref(p, seed);
    auto keys = amq::test::random_keys(3000, 7);
    std::mt19937_64 rng(1);
    for (size_t i = 0; i < 600; ++i) keys.push_back(keys[rng() % keys.size()]);  // duplicates
    std::shuffle(keys.begin(), keys.end(), rng);
    size_t at = 0, ref_added = 0, added = 0;
    while (at < keys.size()) {
      const size_t n = std::min<size_t>(keys.size() - at, 1 + rng() % 1500);
      std::vector<std::string> batch(keys.begin() + static_cast<long>(at), keys.begin() + static_cast<long>(at + n));
      for (const auto& k : batch) ref_added += ref.insert(k);
      added += ((at / 7) % 2 ? a : b).insert_many(batch);
      at += n;
    }
    EXPECT_EQ(added, ref_added);
    EXPECT_GE(ref.layer_count(), p.initial_capacity > 1000 ? 1u : 3u);
    EXPECT_TRUE(RedisBloomFilter::pull(server.url(), name) == ref.serialize()) << name;
    const auto layers = RedisBloomFilter::pull_layers(server.url(), name);
    EXPECT_EQ(layers.params, p);
    EXPECT_EQ(layers.seed, seed);
    ASSERT_EQ(layers.words.size(), ref.layer_count());
    for (uint32_t l = 0; l < ref.layer_count(); ++l) {
      EXPECT_EQ(layers.items[l], ref.layer_items(l)) << "layer " << l;
      const auto w = ref.layer_words(l);
      EXPECT_TRUE(std::equal(w.begin(), w.end(), layers.words[l].begin(), layers.words[l].end())) << "layer " << l;
    }
    const auto info = a.info();
    EXPECT_EQ(info.items, ref.size());
    EXPECT_EQ(info.layers.size(), ref.layer_count());
    std::vector<char> hit;
    const auto absent = absent_keys(4000);
    lookup(a, absent, hit);
    for (size_t i = 0; i < absent.size(); ++i) ASSERT_EQ(hit[i] != 0, ref.contains(absent[i])) << i;
    lookup(b, keys, hit);
    EXPECT_EQ(count_true(hit), keys.size());
  }
}

// open_redis_set: a filter in Redis behind AnySet answers, adds and describes itself as
// the same filter in memory does, and serializes to pull()'s file.
TEST(RedisBloom, AnySetAdapterIsTheFilter) {
  AMQ_REQUIRE_REDIS();
  amq::test::RedisServer server;
  const Params p{.initial_capacity = 200, .fpp = 0.01, .growth = 2, .tightening = 0.5};
  RedisBloomFilter::create(server.url(), "any", p, 9);
  amq::ScalableBloomFilter ref(p, 9);
  std::unique_ptr<amq::AnySet> set = amq::open_redis_set(server.url(), "any");
  EXPECT_EQ(set->kind(), amq::Kind::scalable_bloom);
  EXPECT_TRUE(set->is_dynamic());
  EXPECT_FALSE(set->supports_erase());
  const auto keys = amq::test::random_keys(1000, 3);
  std::vector<amq::Bytes> views;
  for (const auto& k : keys) views.push_back(amq::as_bytes(k));
  set->insert_many(std::span(views).first(900));  // batched
  for (size_t i = 900; i < views.size(); ++i) set->insert(views[i]);
  for (const auto& k : keys) ref.insert(k);
  const auto absent = absent_keys(3000);
  std::vector<amq::Bytes> absent_views;
  for (const auto& k : absent) absent_views.push_back(amq::as_bytes(k));
  std::unique_ptr<bool[]> hit(new bool[absent.size()]);
  EXPECT_EQ(set->contains_many(views, std::span(hit.get(), views.size())), views.size());
  set->contains_many(absent_views, std::span(hit.get(), absent.size()));
  for (size_t i = 0; i < absent.size(); ++i) {
    ASSERT_EQ(hit[i], ref.contains(absent[i])) << absent[i];
    ASSERT_EQ(set->contains(absent_views[i]), ref.contains(absent[i])) << absent[i];
  }
  const amq::SetInfo info = set->info();
  EXPECT_EQ(info.kind, amq::Kind::scalable_bloom);
  EXPECT_EQ(info.format, "redis");
  EXPECT_EQ(info.items, ref.size());
  EXPECT_TRUE(info.items_exact);
  ASSERT_EQ(info.layers.size(), ref.layer_count());
  uint64_t bits = 0;
  for (uint32_t l = 0; l < ref.layer_count(); ++l) {
    EXPECT_EQ(info.layers[l].items, ref.layer_items(l)) << l;
    bits += info.layers[l].bits;
  }
  EXPECT_EQ(info.bytes, bits / 8);
  EXPECT_GT(info.fpp_expected, 0);
  const auto param = [&](const std::string& name) {
    for (const auto& [k, v] : info.params)
      if (k == name) return v;
    return std::string("(none)");
  };
  EXPECT_EQ(param("name"), "any");
  EXPECT_EQ(param("server"), RedisUrl::parse(server.url()).endpoint());
  EXPECT_EQ(param("seed"), "9");
  EXPECT_EQ(param("layers"), std::to_string(ref.layer_count()));
  EXPECT_TRUE(set->serialize() == ref.serialize());
  // A filter that is not there, and a server that is not there, are the filter's errors.
  expect_error(Errc::not_found, "no such filter", [&] { amq::open_redis_set(server.url(), "absent"); });
  expect_error(Errc::io, "cannot connect", [&] {
    amq::open_redis_set("redis://127.0.0.1:" + std::to_string(amq::test::free_port()), "any");
  });
}

TEST(RedisBloom, NoFalseNegativesAndFprWithinTarget) {
  AMQ_REQUIRE_REDIS();
  amq::test::RedisServer server;
  const Params p{.initial_capacity = 5000, .fpp = 0.01};
  auto f = RedisBloomFilter::create(server.url(), "fpr", p);
  const auto keys = amq::test::random_keys(60000, 3);
  EXPECT_GT(f.insert_many(keys), 59000u);
  std::vector<char> hit;
  EXPECT_EQ(lookup(f, keys, hit), keys.size());
  const auto absent = absent_keys(100000);
  const size_t fp = lookup(f, absent, hit);
  EXPECT_LE(fp, fp_bound(p.fpp, absent.size())) << fp;
  const auto info = f.info();
  EXPECT_GE(info.layers.size(), 4u);
  EXPECT_LE(info.fpp_expected, p.fpp);
  EXPECT_GT(info.fpp_expected, 0);
  EXPECT_EQ(info.items, std::accumulate(info.layers.begin(), info.layers.end(), uint64_t{0},
                                        [](uint64_t s, const amq::RedisLayerInfo& l) { return s + l.items; }));
  // Single-key calls agree.
  EXPECT_TRUE(f.contains(keys[17]));
  EXPECT_FALSE(f.insert(keys[17]));
  EXPECT_TRUE(f.insert("a key never seen"));
  EXPECT_TRUE(f.contains("a key never seen"));
  EXPECT_TRUE(f.insert(uint64_t{42}));
  EXPECT_TRUE(f.contains(uint64_t{42}));
  EXPECT_TRUE(f.contains(std::string("\x2a\0\0\0\0\0\0\0", 8)));  // same key as its LE bytes
}

TEST(RedisBloom, CreateIsIdempotentAndChecksParams) {
  AMQ_REQUIRE_REDIS();
  amq::test::RedisServer server;
  const Params p{.initial_capacity = 1000, .fpp = 0.01};
  auto f = RedisBloomFilter::create(server.url(), "idem", p, 9);
  f.insert_many(std::vector<std::string>{"x", "y"});
  auto g = RedisBloomFilter::create(server.url(), "idem", p, 9);  // reserve if absent: no reset
  EXPECT_TRUE(g.contains("x"));
  EXPECT_EQ(g.size(), 2u);
  expect_error(Errc::incompatible, "fpp=0.001", [&] {
    RedisBloomFilter::create(server.url(), "idem", {.initial_capacity = 1000, .fpp = 0.001}, 9);
  });
  expect_error(Errc::incompatible, "seed=8", [&] { RedisBloomFilter::create(server.url(), "idem", p, 8); });
  auto opened = RedisBloomFilter::open(server.url(), "idem");
  EXPECT_EQ(opened.params(), p);
  EXPECT_EQ(opened.seed(), 9u);
  EXPECT_TRUE(opened.contains("y"));
}

TEST(RedisBloom, EightProcessesAddAtOnce) {
  AMQ_REQUIRE_REDIS();
  amq::test::RedisServer server;
  const Params p{.initial_capacity = 4000, .fpp = 0.01};
  RedisBloomFilter::create(server.url(), "shared", p);
  constexpr int kProcs = 8;
  constexpr size_t kPer = 6000;
  auto keys_of = [](int proc) {
    std::vector<std::string> k;
    for (size_t i = 0; i < kPer; ++i) k.push_back(fmt::format("p{}-k{}", proc, i));
    return k;
  };
  std::vector<pid_t> kids;
  for (int proc = 0; proc < kProcs; ++proc) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int rc = 0;
      try {
        amq::RedisOptions o;
        o.batch = 500;  // many interleaved batches
        auto f = RedisBloomFilter::create(server.url(), "shared", p, 0, o);
        const auto k = keys_of(proc);
        for (size_t i = 0; i < k.size(); i += 1000)
          f.insert_many(std::span<const std::string>(k).subspan(i, std::min<size_t>(1000, k.size() - i)));
      } catch (...) {
        rc = 3;
      }
      ::_exit(rc);  // no destructors: the server belongs to the parent
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int st = 0;
    ASSERT_EQ(::waitpid(pid, &st, 0), pid);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "a child failed";
  }
  auto f = RedisBloomFilter::open(server.url(), "shared");
  std::vector<char> hit;
  for (int proc = 0; proc < kProcs; ++proc) {
    const auto k = keys_of(proc);
    EXPECT_EQ(lookup(f, k, hit), k.size()) << "false negatives for process " << proc;
  }
  const auto absent = absent_keys(50000);
  const size_t fp = lookup(f, absent, hit);
  const auto info = f.info();
  EXPECT_LE(fp, fp_bound(p.fpp, absent.size())) << fp << " false positives; layers " << info.layers.size()
                                                              << ", items " << info.items;
  // Every key counted once, except the few that looked present (false positives) when added.
  EXPECT_LE(info.items, kProcs * kPer);
  EXPECT_GE(info.items, kProcs * kPer * 99 / 100);
  // Layers were opened one at a time by the script: geometry as bloom_layers says.
  for (size_t l = 0; l < info.layers.size(); ++l) {
    const auto g = amq::detail::layer_geometry(p, static_cast<uint32_t>(l));
    EXPECT_EQ(info.layers[l].bits, g.bits);
    EXPECT_EQ(info.layers[l].capacity, g.capacity);
    if (l + 1 < info.layers.size()) {
      EXPECT_EQ(info.layers[l].items, g.capacity);
    }
  }
}

TEST(RedisBloom, AppendOnlyRestartLosesNothing) {
  AMQ_REQUIRE_REDIS();
  amq::test::RedisServer server({"--appendfsync", "always"}, /*appendonly=*/true);
  const auto keys = amq::test::random_keys(20000, 11);
  const Params p{.initial_capacity = 3000, .fpp = 0.01};
  auto before = [&] {
    auto f = RedisBloomFilter::create(server.url(), "durable", p);
    f.insert_many(keys);
    f.expire(std::chrono::hours(1));
    return RedisBloomFilter::pull_layers(server.url(), "durable");
  }();
  server.restart(SIGKILL);  // a crash: only the fsynced append-only file survives
  auto f = RedisBloomFilter::open(server.url(), "durable");
  std::vector<char> hit;
  EXPECT_EQ(lookup(f, keys, hit), keys.size());
  const auto after = RedisBloomFilter::pull_layers(server.url(), "durable");
  EXPECT_TRUE(after.words == before.words);
  EXPECT_TRUE(after.items == before.items);
  EXPECT_GT(f.info().ttl_ms, 0);
}

TEST(RedisBloom, PushPullBloomIsByteIdenticalAndQueryable) {
  AMQ_REQUIRE_REDIS();
  amq::test::RedisServer server;
  for (auto strategy : {amq::GuavaStrategy::murmur128_mitz_64, amq::GuavaStrategy::murmur128_mitz_32}) {
    auto local = amq::BloomFilter::create(5000, 0.02, strategy);
    const auto keys = amq::test::random_keys(5000, 5);
    for (const auto& k : keys) local.insert(k);
    const auto file = local.serialize();
    RedisBloomFilter::push(server.url(), "guava", file);
    EXPECT_EQ(RedisBloomFilter::pull(server.url(), "guava"), file);
    auto f = RedisBloomFilter::open(server.url(), "guava");
    EXPECT_EQ(f.kind(), amq::Kind::bloom);
    std::vector<char> hit;
    EXPECT_EQ(lookup(f, keys, hit), keys.size());
    const auto absent = absent_keys(20000);
    lookup(f, absent, hit);
    for (size_t i = 0; i < absent.size(); ++i) ASSERT_EQ(hit[i] != 0, local.contains(absent[i])) << absent[i];
    // Adding on the server = adding locally (Guava's put), and the pull shows it.
    const auto more = absent_keys(300);
    f.insert_many(more);
    for (const auto& k : more) local.insert(k);
    EXPECT_EQ(RedisBloomFilter::pull(server.url(), "guava"), local.serialize());
    const auto info = f.info();
    EXPECT_EQ(info.bits, local.bit_size());
    EXPECT_EQ(info.items, local.approximate_element_count());
    // A Guava stream comes back as a Guava stream.
    RedisBloomFilter::push(server.url(), "java", local.to_guava());
    EXPECT_EQ(RedisBloomFilter::pull(server.url(), "java"), local.to_guava());
    auto j = RedisBloomFilter::open(server.url(), "java");
    EXPECT_EQ(lookup(j, keys, hit), keys.size());
  }
  // Pushing something else is refused.
  expect_error(Errc::bad_magic, "", [&] { RedisBloomFilter::push(server.url(), "x", std::vector<std::byte>(64)); });
}

TEST(RedisBloom, PushPullScalableIsByteIdentical) {
  AMQ_REQUIRE_REDIS();
  amq::test::RedisServer server;
  const Params p{.initial_capacity = 500, .fpp = 0.001, .growth = 3, .tightening = 0.6};
  amq::ScalableBloomFilter local(p, 77);
  const auto keys = amq::test::random_keys(4000, 21);
  for (const auto& k : keys) local.insert(k);
  ASSERT_GE(local.layer_count(), 3u);
  const auto file = local.serialize();
  RedisBloomFilter::push(server.url(), "layers", file);
  EXPECT_TRUE(RedisBloomFilter::pull(server.url(), "layers") == file);
  const auto out = RedisBloomFilter::pull_layers(server.url(), "layers");
  EXPECT_EQ(out.params, p);
  EXPECT_EQ(out.seed, 77u);
  // The pushed filter answers like the local one and keeps growing exactly as it does.
  auto f = RedisBloomFilter::open(server.url(), "layers");
  std::vector<char> hit;
  EXPECT_EQ(lookup(f, keys, hit), keys.size());
  const auto more = absent_keys(6000);
  size_t ref_added = 0;
  for (const auto& k : more) ref_added += local.insert(k);
  EXPECT_EQ(f.insert_many(more), ref_added);
  EXPECT_TRUE(RedisBloomFilter::pull(server.url(), "layers") == local.serialize());
  // Wrong-sized layers are refused.
  auto bad = out;
  bad.words[0].pop_back();
  expect_error(Errc::invalid_argument, "geometry", [&] { RedisBloomFilter::push_layers(server.url(), "bad", bad); });
  // So is a file of another kind.
  expect_error(Errc::wrong_kind, "only bloom and scalable-bloom", [&] {
    RedisBloomFilter::push(server.url(), "x", amq::write_container(amq::Kind::cuckoo, {}, {}));
  });
}

// As ScalableBloomFilter, the script opens a layer only for a new key that needs it:
// keys that fill layer 0 exactly (at 1e-4 none of them is a false positive) leave one
// layer, in batches that end at the capacity or cross it; a present key then opens
// nothing and the next new key opens layer 1.
TEST(RedisBloom, OpensALayerOnlyForAKeyThatNeedsIt) {
  AMQ_REQUIRE_REDIS();
  amq::test::RedisServer server;
  const Params p{.initial_capacity = 5000, .fpp = 1e-4};
  const uint64_t cap0 = amq::detail::layer_geometry(p, 0).capacity;
  const auto keys = amq::test::random_keys(cap0 + 100, 31);
  amq::ScalableBloomFilter ref(p, 4);
  size_t full = 0;  // keys that fill layer 0
  while (ref.layer_items(0) < cap0) ref.insert(keys[full++]);
  ASSERT_EQ(ref.layer_count(), 1u);
  const std::span<const std::string> all(keys);
  // Client batches of 700 in calls of 1000 (the last ends exactly at the capacity), or one batch.
  for (const size_t batch : {size_t{700}, size_t{8192}}) {
    const std::string name = "lazy-" + std::to_string(batch);
    amq::RedisOptions o;
    o.batch = batch;
    auto f = RedisBloomFilter::create(server.url(), name, p, 4, o);
    if (batch == 700) {
      for (size_t at = 0; at < full; at += 1000) f.insert_many(all.subspan(at, std::min<size_t>(1000, full - at)));
    } else {
      f.insert_many(all.first(full));
    }
    EXPECT_EQ(f.info().layers.size(), 1u);
    EXPECT_TRUE(RedisBloomFilter::pull(server.url(), name) == ref.serialize());
    EXPECT_EQ(f.insert_many(all.first(1)), 0u);  // present: nothing opened
    EXPECT_EQ(f.info().layers.size(), 1u);
  }
  // One more new key (after some present ones) opens layer 1 and goes there.
  size_t next = full;
  while (ref.contains(keys[next])) ++next;
  ASSERT_TRUE(ref.insert(keys[next]));
  ASSERT_EQ(ref.layer_count(), 2u);
  for (const std::string name : {"lazy-700", "lazy-8192"}) {
    auto f = RedisBloomFilter::open(server.url(), name);
    EXPECT_EQ(f.insert_many(all.subspan(full - 3, next + 1 - (full - 3))), 1u);
    EXPECT_TRUE(RedisBloomFilter::pull(server.url(), name) == ref.serialize()) << name;
  }
  // And a batch that fills layer 0 and goes on: the same filter as one key at a time.
  auto g = RedisBloomFilter::create(server.url(), "lazy-cross", p, 4);
  g.insert_many(all.first(next + 1));
  EXPECT_TRUE(RedisBloomFilter::pull(server.url(), "lazy-cross") == ref.serialize());
}

// A filter whose newest layer is empty, as the script left one when it opened a layer as
// soon as the one before it filled (here pushed from a file written then): it answers
// as it did and its empty layer takes the next keys, as in ScalableBloomFilter.
TEST(RedisBloom, AnEmptyNewestLayerTakesTheNextKeys) {
  AMQ_REQUIRE_REDIS();
  amq::test::RedisServer server;
  const auto file = amq::read_file(std::string(AMQ_SOURCE_DIR) + "/tests/data/scalable_bloom_full_layer0_n100.amq");
  auto local = amq::ScalableBloomFilter::load(file);
  ASSERT_EQ(local.layer_count(), 2u);
  ASSERT_EQ(local.layer_items(1), 0u);
  RedisBloomFilter::push(server.url(), "old", file);
  EXPECT_TRUE(RedisBloomFilter::pull(server.url(), "old") == file);
  auto f = RedisBloomFilter::open(server.url(), "old");
  std::vector<std::string> q, m;
  for (int i = 1; i <= 20000; ++i) q.push_back(fmt::format("q{}", i));
  for (int i = 1; i <= 300; ++i) m.push_back(fmt::format("m{}", i));
  std::vector<char> hit;
  EXPECT_EQ(lookup(f, q, hit), 80u);  // as the file answered when written
  size_t ref_added = 0;
  for (const auto& k : m) ref_added += local.insert(k);
  EXPECT_EQ(f.insert_many(m), ref_added);
  const auto layers = RedisBloomFilter::pull_layers(server.url(), "old");
  ASSERT_EQ(layers.words.size(), 3u);
  EXPECT_EQ(layers.items, (std::vector<uint64_t>{153, 243, 55}));
  for (uint32_t l = 0; l < 3; ++l) {
    const auto w = local.layer_words(l);
    EXPECT_TRUE(std::equal(w.begin(), w.end(), layers.words[l].begin(), layers.words[l].end())) << "layer " << l;
  }
  EXPECT_EQ(lookup(f, q, hit), 132u);
}

// Filters made before the layout parameter (no `layout` field in the meta hash, no
// layout in the file) keep the legacy geometry in Redis; new ones store layout 1.
TEST(RedisBloom, LegacyLayoutFiltersKeepTheirGeometry) {
  AMQ_REQUIRE_REDIS();
  amq::test::RedisServer server;
  RedisClient c(server.url());
  // A file written by the code before the layout parameter round-trips byte for byte.
  const auto file = amq::read_file(std::string(AMQ_SOURCE_DIR) + "/tests/data/scalable_bloom_legacy_n10.amq");
  RedisBloomFilter::push(server.url(), "old", file);
  const std::string old_meta = RedisBloomFilter::meta_key("old");
  EXPECT_EQ(c.command(old_meta, {"HEXISTS", old_meta, "layout"}).integer, 0);
  EXPECT_TRUE(RedisBloomFilter::pull(server.url(), "old") == file);
  auto old = RedisBloomFilter::open(server.url(), "old");
  auto local = amq::ScalableBloomFilter::load(file);
  ASSERT_EQ(local.params().layout, amq::detail::kLegacyLayout);
  const auto more = absent_keys(700);
  size_t ref_added = 0;
  for (const auto& k : more) ref_added += local.insert(k);
  EXPECT_EQ(old.insert_many(more), ref_added);  // grows with legacy layers, as the file does
  EXPECT_TRUE(RedisBloomFilter::pull(server.url(), "old") == local.serialize());
  EXPECT_EQ(old.info().layers.back().capacity, uint64_t{10} << (old.info().layers.size() - 1));
  // A filter created now stores its layout and is sized by it.
  const Params p{.initial_capacity = 10, .fpp = 0.01};
  auto now = RedisBloomFilter::create(server.url(), "new", p, 7);
  const std::string new_meta = RedisBloomFilter::meta_key("new");
  EXPECT_EQ(c.command(new_meta, {"HGET", new_meta, "layout"}).str, "1");
  EXPECT_EQ(now.info().layers[0].capacity, amq::detail::layer_geometry(p, 0).capacity);
  EXPECT_GT(now.info().layers[0].capacity, 10u);
  EXPECT_EQ(RedisBloomFilter::pull_layers(server.url(), "new").params, p);
  // A layout this version does not know is refused.
  c.command(new_meta, {"HSET", new_meta, "layout", "2"});
  expect_error(Errc::unsupported, "layout 2", [&] { RedisBloomFilter::open(server.url(), "new"); });
}

TEST(RedisBloom, ExpiryCoversEveryKeyAndDeleteRemovesThem) {
  AMQ_REQUIRE_REDIS();
  amq::test::RedisServer server;
  auto f = RedisBloomFilter::create(server.url(), "ttl", {.initial_capacity = 100, .fpp = 0.01});
  f.insert_many(absent_keys(150));  // two layers
  f.expire(std::chrono::seconds(100));
  f.insert_many(amq::test::random_keys(400, 2));  // opens more layers: they inherit the expiry
  RedisClient c(server.url());
  const auto info = f.info();
  ASSERT_GE(info.layers.size(), 3u);
  std::vector<std::string> keys{RedisBloomFilter::meta_key("ttl")};
  for (uint32_t l = 0; l < info.layers.size(); ++l) keys.push_back(RedisBloomFilter::layer_key("ttl", l));
  for (const auto& k : keys) {
    auto r = c.command(k, {"PTTL", k});
    EXPECT_GT(r.integer, 50000) << k;
    EXPECT_LE(r.integer, 100000) << k;
  }
  f.expire(std::chrono::milliseconds(0));  // persist
  for (const auto& k : keys) EXPECT_EQ(c.command(k, {"PTTL", k}).integer, -1) << k;
  EXPECT_TRUE(f.destroy());
  for (const auto& k : keys) EXPECT_EQ(c.command(k, {"EXISTS", k}).integer, 0) << k;
  EXPECT_FALSE(RedisBloomFilter::remove(server.url(), "ttl"));
  expect_error(Errc::not_found, "no such filter", [&] { RedisBloomFilter::open(server.url(), "ttl"); });
}

TEST(RedisBloom, WrongTypeIsAClearError) {
  AMQ_REQUIRE_REDIS();
  amq::test::RedisServer server;
  RedisClient c(server.url());
  const std::string meta = RedisBloomFilter::meta_key("clash");
  c.command(meta, {"SET", meta, "not a hash"});
  expect_error(Errc::incompatible, "is not an amq filter (a string)",
               [&] { RedisBloomFilter::create(server.url(), "clash", {}); });
  EXPECT_EQ(c.command(meta, {"GET", meta}).str, "not a hash");
  // A layer key of another type.
  auto f = RedisBloomFilter::create(server.url(), "clash2", {});
  const std::string l0 = RedisBloomFilter::layer_key("clash2", 0);
  c.command(l0, {"DEL", l0});
  c.command(l0, {"LPUSH", l0, "x"});
  expect_error(Errc::remote, "WRONGTYPE", [&] { f.insert("k"); });
}

// Keys amq did not create (a layer key without the meta key, a meta key that is not
// an amq filter's, a layer key beyond the filter's layers) are refused, never written.
TEST(RedisBloom, ForeignKeysAreNeverOverwritten) {
  AMQ_REQUIRE_REDIS();
  amq::test::RedisServer server;
  RedisClient c(server.url());
  const auto get = [&](const std::string& k) { return c.command(k, {"GET", k}).str; };
  const std::string l0 = RedisBloomFilter::layer_key("s3", 0);
  c.command(l0, {"SET", l0, "precious"});
  expect_error(Errc::incompatible, l0 + " exists but amq:{s3}:meta does not",
               [&] { RedisBloomFilter::create(server.url(), "s3", {}); });
  EXPECT_EQ(get(l0), "precious");
  EXPECT_EQ(c.command(l0, {"EXISTS", RedisBloomFilter::meta_key("s3")}).integer, 0);
  auto local = amq::BloomFilter::create(100, 0.01);
  expect_error(Errc::incompatible, "not created by amq",
               [&] { RedisBloomFilter::push(server.url(), "s3", local.serialize()); });
  EXPECT_EQ(get(l0), "precious");

  // A hash at the meta key that amq did not write.
  const std::string meta = RedisBloomFilter::meta_key("h");
  c.command(meta, {"HSET", meta, "owner", "someone"});
  expect_error(Errc::incompatible, "is not an amq filter (a hash)",
               [&] { RedisBloomFilter::create(server.url(), "h", {}); });
  expect_error(Errc::incompatible, "is not an amq filter",
               [&] { RedisBloomFilter::push(server.url(), "h", local.serialize()); });
  EXPECT_EQ(c.command(meta, {"HLEN", meta}).integer, 1);

  // A key where the next layer would be opened: the insert that needs it fails first.
  auto f = RedisBloomFilter::create(server.url(), "grow", {.initial_capacity = 10, .fpp = 0.01});
  const std::string l1 = RedisBloomFilter::layer_key("grow", 1);
  c.command(l1, {"SET", l1, "mine"});
  expect_error(Errc::incompatible, l1 + " exists but", [&] { f.insert_many(amq::test::random_keys(50, 3)); });
  EXPECT_EQ(get(l1), "mine");
  EXPECT_LE(f.size(), 10u);  // at most layer 0's capacity, added before layer 1 was needed
}

TEST(RedisBloom, ConnectionErrorsAreClear) {
  AMQ_REQUIRE_REDIS();
  // Nothing listens on a port we just found free.
  const int port = amq::test::free_port();
  expect_error(Errc::io, "cannot connect", [&] {
    RedisBloomFilter::create("redis://127.0.0.1:" + std::to_string(port), "x", {});
  });
  amq::test::RedisServer server({"--requirepass", "s3cret"});
  expect_error(Errc::remote, "authentication failed",
               [&] { RedisBloomFilter::create(server.url(":wrong"), "x", {}); });
  expect_error(Errc::remote, "authentication required", [&] { RedisBloomFilter::create(server.url(), "x", {}); });
  auto f = RedisBloomFilter::create(server.url(":s3cret") + "/2", "x", {});  // AUTH and SELECT 2
  f.insert("k");
  RedisClient c(server.url(":s3cret"));  // database 0 does not see it
  const std::string meta = RedisBloomFilter::meta_key("x");
  EXPECT_EQ(c.command(meta, {"EXISTS", meta}).integer, 0);
  RedisClient c2(server.url(":s3cret") + "/2");
  EXPECT_EQ(c2.command(meta, {"EXISTS", meta}).integer, 1);
  expect_error(Errc::remote, "select database", [&] { RedisClient(server.url(":s3cret") + "/999"); });
}

TEST(RedisBloom, CommandTimeout) {
  AMQ_REQUIRE_REDIS();
  amq::test::RedisServer server;
  amq::RedisOptions o;
  o.command_timeout = std::chrono::milliseconds(200);
  auto f = RedisBloomFilter::create(server.url(), "slow", {}, 0, o);
  RedisClient admin(server.url());
  admin.command("x", {"CLIENT", "PAUSE", "1500", "ALL"});
  expect_error(Errc::io, "no reply within 200 ms", [&] { f.insert("k"); });
}

TEST(RedisBloom, ServerKilledMidUseIsAnError) {
  AMQ_REQUIRE_REDIS();
  amq::test::RedisServer server;
  auto f = RedisBloomFilter::create(server.url(), "doomed", {.initial_capacity = 100000, .fpp = 0.01});
  f.insert_many(absent_keys(1000));
  // Kill the server while batches are in flight: some call must fail with Errc::io,
  // none may report success after the server is gone.
  std::atomic<bool> killed{false};
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    server.stop(SIGKILL);
    killed = true;
  });
  const auto keys = amq::test::random_keys(20000, 99);
  bool failed = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!failed && std::chrono::steady_clock::now() < deadline) {
    try {
      const bool was_killed = killed;
      f.insert_many(keys);
      ASSERT_FALSE(was_killed) << "a batch reported success after the server died";
    } catch (const amq::Error& e) {
      failed = true;
      EXPECT_EQ(e.code(), Errc::io) << e.what();
      const std::string msg = e.what();
      EXPECT_TRUE(msg.find("connection lost") != std::string::npos || msg.find("cannot connect") != std::string::npos)
          << msg;
    }
  }
  killer.join();
  EXPECT_TRUE(failed);
  expect_error(Errc::io, "cannot connect", [&] { f.contains("k"); });  // stays an error, no hang
}

}  // namespace
