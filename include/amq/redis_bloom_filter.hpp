// amq/redis_bloom_filter.hpp — a scalable Bloom filter kept in Redis, shared by
// every process and host that can reach the server (or Redis Cluster).
//
// The filter is the in-memory ScalableBloomFilter's structure, bit for bit: the same
// layers (amq/detail/bloom_layers.hpp: layer i has n0 * growth^i capacity and error
// fpp * (1 - r) * r^i) and the same probes (hash = XXH3-64(key, seed); probe j of
// layer i is bit (a + j*b) mod m_i). Each layer is a Redis string used as a bitmap
// (Redis offset = amq bit index), beside a small metadata hash; all keys of a filter
// share the hash tag {NAME}, so in a cluster a filter lives in one slot:
//   amq:{NAME}:meta   hash: parameters, layer geometry, item counts
//   amq:{NAME}:L0, amq:{NAME}:L1, ...   the layers' bitmaps
// docs/format.md ("RedisBloomFilter") describes the layout and the script protocol.
//
// Guarantees
//  * No false negatives, across any number of concurrent clients: each batch of
//    adds is one Lua script (one round trip, atomic on the server) that tests the
//    layers, sets bits in the newest layer, counts new items and opens the next layer
//    when a new key finds the newest full — so clients never race to create two layers or lose
//    bits. The false-positive rate stays below fpp at any fill, as for
//    ScalableBloomFilter.
//  * Creation is idempotent (reserve if absent); a caller whose parameters differ
//    from the stored ones gets Errc::incompatible, naming both.
//  * Adds are idempotent (re-adding a key changes nothing and is not counted), so a
//    batch that failed with Errc::io (server gone mid-batch: never reported as
//    success) can simply be sent again.
//  * push()/pull() upload a local amq file (Kind::scalable_bloom, or Kind::bloom —
//    a Guava-compatible BloomFilter, then answered with Guava's probes computed by the
//    client) and download it back byte-identical.
//  * Errors: Errc::invalid_argument (bad URL, name or parameters), Errc::io (refused
//    connection, timeout, connection lost), Errc::remote (failed AUTH, WRONGTYPE, any
//    other server error), Errc::not_found (open() of an absent filter),
//    Errc::incompatible (other parameters).
//  * One object is not thread-safe (it owns its connections); use one per thread.
//
// Cost. Every call is at least one round trip to the server: insert_many and
// contains_many send RedisOptions::batch keys per round trip (one script call);
// insert and contains send one key. The server holds the bits of a ScalableBloomFilter
// with the same options (one bitmap per layer) and the metadata hash; the client holds
// the parameters and its connections.
//
// Choose it when many processes or machines must share one growing filter; for one
// process, ScalableBloomFilter in memory answers without a network round trip.
//
//   auto f = amq::RedisBloomFilter::create("redis://127.0.0.1:6379", "users",
//                                          {.initial_capacity = 1'000'000, .fpp = 0.001});
//   f.insert_many(std::vector<std::string>{"alice", "bob"});   // one round trip
//   bool maybe = f.contains("alice");                          // true
//   f.expire(std::chrono::hours(24));                          // every key of the filter
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "amq/any_set.hpp"
#include "amq/bloom_filter.hpp"
#include "amq/detail/bloom_layers.hpp"
#include "amq/format.hpp"
#include "amq/hash.hpp"
#include "amq/scalable_bloom_params.hpp"

namespace amq {

namespace detail {
class RedisClient;
struct RedisBloomTestPeer;
}

struct RedisOptions {
  std::chrono::milliseconds connect_timeout{3000};
  std::chrono::milliseconds command_timeout{30000};
  size_t batch = 8192;  // keys per round trip (per script call)
};

using RedisLayerInfo = SetLayerInfo;  // amq/any_set.hpp

struct RedisBloomInfo {
  std::string name;
  Kind kind = Kind::scalable_bloom;  // scalable_bloom, or bloom for a pushed BloomFilter
  ScalableBloomParams params{};      // scalable_bloom only
  uint64_t seed = 0;                 // scalable_bloom only
  GuavaStrategy strategy = GuavaStrategy::murmur128_mitz_64;  // bloom only
  std::vector<RedisLayerInfo> layers;
  uint64_t capacity = 0;   // sum of the layers' capacities (scalable: before the next layer opens)
  uint64_t items = 0;      // keys added (bloom: estimated from the bits set)
  uint64_t bits = 0;       // sum of the layers' bits
  double fpp_expected = 0; // from the items and geometry of each layer
  int64_t ttl_ms = -1;     // -1: no expiry
};

class RedisBloomFilter {
 public:
  using Params = ScalableBloomParams;

  // Connects and opens the filter NAME, creating it with `params` and `seed` if it
  // does not exist. Throws Errc::incompatible if it exists with other parameters.
  static RedisBloomFilter create(std::string_view url, std::string_view name, const Params& params,
                                 uint64_t seed = 0, const RedisOptions& options = {});
  // Opens an existing filter of either kind; Errc::not_found if absent.
  static RedisBloomFilter open(std::string_view url, std::string_view name, const RedisOptions& options = {});

  RedisBloomFilter(RedisBloomFilter&&) noexcept;
  RedisBloomFilter& operator=(RedisBloomFilter&&) noexcept;
  ~RedisBloomFilter();

  // Adds the keys (one round trip per options.batch keys); returns how many were
  // new (not already reported present). A pushed Guava filter counts keys whose bits changed.
  template <class Keys>
  size_t insert_many(const Keys& keys) {
    std::vector<Bytes> v;
    std::vector<uint64_t> store;
    views(keys, v, store);
    return insert_bytes(v);
  }
  bool insert(KeyView key) {
    const Bytes b = key.bytes();
    return insert_bytes(std::span<const Bytes>(&b, 1)) == 1;
  }

  // out[i] = contains(keys[i]); returns how many are true. One round trip per batch.
  template <class Keys>
  size_t contains_many(const Keys& keys, std::span<bool> out) {
    std::vector<Bytes> v;
    std::vector<uint64_t> store;
    views(keys, v, store);
    return contains_bytes(v, out);
  }
  bool contains(KeyView key) {
    bool r = false;
    const Bytes b = key.bytes();
    contains_bytes(std::span<const Bytes>(&b, 1), std::span<bool>(&r, 1));
    return r;
  }

  RedisBloomInfo info();
  uint64_t size() { return info().items; }
  // Sets (or with ttl <= 0, removes) an expiry on every key of the filter; layers
  // opened later inherit the remaining time.
  void expire(std::chrono::milliseconds ttl);
  // Deletes every key of the filter; returns false if it did not exist. The object
  // must not be used afterwards except to be destroyed or assigned.
  bool destroy();

  Kind kind() const noexcept { return kind_; }
  const std::string& name() const noexcept { return name_; }
  const Params& params() const noexcept { return params_; }
  uint64_t seed() const noexcept { return seed_; }

  // Deletes the filter NAME (every key); false if absent.
  static bool remove(std::string_view url, std::string_view name, const RedisOptions& options = {});
  // Uploads an amq file (Kind::scalable_bloom or Kind::bloom) or a Guava BloomFilter
  // stream as filter NAME, replacing any filter of that name, atomically.
  static void push(std::string_view url, std::string_view name, std::span<const std::byte> file,
                   const RedisOptions& options = {});
  // Downloads filter NAME as the file it was pushed as (amq or Guava stream), or, for a
  // filter built in Redis, as a scalable-bloom amq file. An amq file's key type
  // (amq/format.hpp) goes with it, as the metadata field "key_type".
  static std::vector<std::byte> pull(std::string_view url, std::string_view name, const RedisOptions& options = {});

  // Layer-level push/pull (what push()/pull() use for a scalable filter). Words are
  // amq's layout: bit i is bit i % 64 of little-endian word i / 64.
  struct Layers {
    Params params;
    uint64_t seed = 0;
    std::vector<std::vector<uint64_t>> words;
    std::vector<uint64_t> items;
    // The key type of the file pushed (metadata field "key_type", when recorded).
    KeyType key_type = KeyType::unknown;
  };
  static void push_layers(std::string_view url, std::string_view name, const Layers& layers,
                          const RedisOptions& options = {});
  static Layers pull_layers(std::string_view url, std::string_view name, const RedisOptions& options = {});
  static void push_bloom(std::string_view url, std::string_view name, const BloomFilter& filter,
                         const RedisOptions& options = {});
  static BloomFilter pull_bloom(std::string_view url, std::string_view name, const RedisOptions& options = {});

  // The Redis key of the metadata hash / of layer i of filter NAME.
  static std::string meta_key(std::string_view name);
  static std::string layer_key(std::string_view name, uint32_t layer);

 private:
  RedisBloomFilter(std::string_view url, std::string_view name, const RedisOptions& options);
  template <class Keys>
  static void views(const Keys& keys, std::vector<Bytes>& v, std::vector<uint64_t>& store) {
    v.reserve(std::size(keys));
    if constexpr (std::is_integral_v<std::decay_t<decltype(*std::begin(keys))>>) {
      store.assign(std::begin(keys), std::end(keys));
      for (const uint64_t& x : store) v.push_back(Bytes(reinterpret_cast<const std::byte*>(&x), 8));
    } else {
      for (const auto& k : keys) v.push_back(KeyView(k).bytes());
    }
  }
  static void push_bloom_as(std::string_view url, std::string_view name, const BloomFilter& filter,
                            const char* file_format, KeyType key_type, const RedisOptions& options);
  size_t insert_bytes(std::span<const Bytes> keys);
  size_t contains_bytes(std::span<const Bytes> keys, std::span<bool> out);
  void load_meta();
  std::vector<std::string> geometry_args(uint32_t upto) const;
  std::string throw_context() const;

  friend struct detail::RedisBloomTestPeer;  // tests: the client's redirection counts
  std::unique_ptr<detail::RedisClient> client_;
  RedisOptions options_;
  std::string name_, meta_, prefix_;
  Kind kind_ = Kind::scalable_bloom;
  Params params_{};
  uint64_t seed_ = 0;
  uint32_t known_layers_ = 1;
  uint64_t bloom_bits_ = 0;  // bloom kind
  uint32_t bloom_hashes_ = 0;
  GuavaStrategy strategy_ = GuavaStrategy::murmur128_mitz_64;
};

// The filter NAME as an AnySet (amq/any_set.hpp), so that code written against AnySet
// queries, adds to and describes a filter in Redis as it does a file: contains and
// contains_many ask the server (one round trip a batch), insert and insert_many add
// (the same), info() states the server (without credentials), the filter's parameters
// and its layers (SetInfo::layers), format "redis"; serialize() is pull()'s file.
// Opens an existing filter, as open() does (Errc::not_found if absent). Like
// RedisBloomFilter, the object is not thread-safe, its const members included.
std::unique_ptr<AnySet> open_redis_set(std::string_view url, std::string_view name, const RedisOptions& options = {});

}  // namespace amq
