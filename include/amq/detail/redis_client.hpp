// amq/detail/redis_client.hpp — a small synchronous Redis client on hiredis, with
// Redis Cluster routing. Used by RedisBloomFilter; public only so tests and the
// benchmark can drive a server directly.
//
//  * URL: redis://[user:password@]host[:port][/db] (user and password may be
//    percent-encoded; port defaults to 6379, db to 0). A bad URL is
//    Errc::invalid_argument.
//  * Connect and command timeouts; AUTH (with or without a user name) and SELECT on
//    every connection. A refused connection, a timeout or a server that goes away is
//    Errc::io; an error reply (failed AUTH, WRONGTYPE, a script error) is Errc::remote,
//    with the server's text in the message. A connection that failed is reopened on
//    the next command.
//  * Redis Cluster (hiredis 0.14 has none): detected at connect with CLUSTER SLOTS;
//    each command carries a routing key, goes to the master that owns the CRC16 slot
//    of the key's hash tag, and follows MOVED (re-reading the slot map) and ASK
//    (ASKING, then the command, on the named node).
//  * Scripts: eval() sends EVALSHA and, on NOSCRIPT, SCRIPT LOAD on that node and
//    EVALSHA again.
//  * Not thread-safe: one client per thread (or per process after fork()).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace amq::detail {

struct RedisUrl {
  std::string host;
  uint16_t port = 6379;
  std::string user;      // empty: AUTH password alone (the default user)
  std::string password;  // empty: no AUTH
  long long db = 0;
  // Throws Errc::invalid_argument with the reason.
  static RedisUrl parse(std::string_view url);
  std::string endpoint() const { return host + ":" + std::to_string(port); }
};

struct RedisTimeouts {
  std::chrono::milliseconds connect{3000};
  std::chrono::milliseconds command{30000};
};

struct RedisReply {
  enum class Type { string, integer, array, nil, status, error };
  Type type = Type::nil;
  std::string str;  // string, status and error replies
  long long integer = 0;
  std::vector<RedisReply> elements;
  bool is_error() const noexcept { return type == Type::error; }
  // The first word of an error reply ("WRONGTYPE", "NOSCRIPT", "MOVED", ...).
  std::string_view error_code() const noexcept;
};

// One connection to one server.
class RedisConnection {
 public:
  RedisConnection(std::string host, uint16_t port, const RedisUrl& auth, RedisTimeouts timeouts);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Sends the commands in one write and reads every reply. Error replies are
  // returned, not thrown; Errc::io if the connection fails (it is then closed and
  // reopened by the next call).
  std::vector<RedisReply> pipeline(const std::vector<std::vector<std::string_view>>& commands);
  RedisReply command(const std::vector<std::string_view>& args) { return std::move(pipeline({args})[0]); }
  const std::string& endpoint() const noexcept { return endpoint_; }

 private:
  void connect();
  void close() noexcept;
  std::string host_;
  uint16_t port_;
  std::string endpoint_;
  RedisUrl auth_;
  RedisTimeouts timeouts_;
  void* ctx_ = nullptr;  // redisContext*
};

// A script body and its SHA1, for RedisClient::eval.
struct RedisScript {
  explicit RedisScript(std::string body);
  std::string body;
  std::string sha1;  // lower-case hex
};

class RedisClient {
 public:
  // Connects to the URL's server and finds out whether it is part of a cluster.
  explicit RedisClient(std::string_view url, RedisTimeouts timeouts = {});
  ~RedisClient();
  RedisClient(RedisClient&&) noexcept;
  RedisClient& operator=(RedisClient&&) noexcept;

  bool is_cluster() const noexcept { return cluster_; }
  // Redirections and reloads seen so far (for tests and diagnostics).
  struct Stats {
    uint64_t moved = 0, ask = 0, tryagain = 0, noscript = 0;
  };
  const Stats& stats() const noexcept { return stats_; }
  const RedisUrl& url() const noexcept { return url_; }

  // Runs a command on the node that owns `routing_key`'s slot. Error replies are
  // returned (MOVED/ASK are followed first).
  RedisReply command(std::string_view routing_key, const std::vector<std::string_view>& args);
  // EVALSHA script numkeys keys... args... (numkeys = keys.size()), loading the
  // script on NOSCRIPT. The first key routes it.
  RedisReply eval(const RedisScript& script, const std::vector<std::string_view>& keys,
                  const std::vector<std::string_view>& args);
  // Every master (a single server: just it), for commands such as FLUSHALL in tests.
  std::vector<std::string> masters() const;
  RedisReply command_on(const std::string& endpoint, const std::vector<std::string_view>& args);

  // CRC16 (XMODEM) of the key's hash tag, mod 16384 — Redis Cluster's key slot.
  static uint16_t key_slot(std::string_view key) noexcept;

 private:
  RedisConnection& node(const std::string& endpoint);
  void refresh_slots(RedisConnection& from);
  RedisReply routed(std::string_view routing_key, const std::vector<std::string_view>& args, const RedisScript* script);

  RedisUrl url_;
  RedisTimeouts timeouts_;
  bool cluster_ = false;
  std::string default_endpoint_;
  std::map<std::string, std::unique_ptr<RedisConnection>> nodes_;
  std::vector<std::string> slot_owner_;  // 16384 endpoints when cluster_
  Stats stats_;
};

// Throws amq::Error(Errc::remote) naming `what` if `r` is an error reply; returns r.
RedisReply& expect_ok(RedisReply& r, std::string_view what);

}  // namespace amq::detail
