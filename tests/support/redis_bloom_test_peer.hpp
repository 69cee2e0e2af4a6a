// tests/support/redis_bloom_test_peer.hpp — for tests only: a RedisBloomFilter's
// client (its cluster redirection counts).
#pragma once

#include "amq/detail/redis_client.hpp"
#include "amq/redis_bloom_filter.hpp"

namespace amq::detail {

struct RedisBloomTestPeer {
  static RedisClient& client(RedisBloomFilter& f) noexcept { return *f.client_; }
};

}  // namespace amq::detail
