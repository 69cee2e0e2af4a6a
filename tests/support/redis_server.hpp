// Test helper: a private redis-server (or a 3-master Redis Cluster) on free loopback
// ports, in a temporary directory, stopped and removed at the end. Tests that need one
// skip with a message when redis-server is not installed.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "amq/detail/redis_client.hpp"
#include "amq/error.hpp"
#include "test_util.hpp"

namespace amq::test {

inline std::string redis_server_path() {
  for (const char* p : {"/usr/bin/redis-server", "/usr/local/bin/redis-server"})
    if (::access(p, X_OK) == 0) return p;
  return {};
}

#define AMQ_REQUIRE_REDIS()                                                                        \
  do {                                                                                             \
    if (amq::test::redis_server_path().empty())                                                    \
      GTEST_SKIP() << "redis-server is not installed (Debian package redis-server; scripts/setup.sh)"; \
  } while (0)

inline bool port_free(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

// A port p with p and p + 10000 (the cluster bus) free.
inline int free_port() {
  static std::mt19937 rng(static_cast<unsigned>(::getpid() * 7919u + std::random_device{}()));
  for (int i = 0; i < 1000; ++i) {
    const int p = 20000 + static_cast<int>(rng() % 25000);
    if (port_free(p) && port_free(p + 10000)) return p;
  }
  throw std::runtime_error("no free port");
}

class RedisServer {
 public:
  // extra: more redis-server options, e.g. {"--requirepass", "s3cret"}.
  explicit RedisServer(std::vector<std::string> extra = {}, bool appendonly = false)
      : extra_(std::move(extra)), appendonly_(appendonly) {
    port_ = free_port();
    start();
  }
  ~RedisServer() { stop(SIGKILL); }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string url(const std::string& userinfo = "") const {
    return "redis://" + (userinfo.empty() ? "" : userinfo + "@") + "127.0.0.1:" + std::to_string(port_);
  }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }
  const TempDir& dir() const { return dir_; }

  void start() {
    std::vector<std::string> args{redis_server_path(), "--port", std::to_string(port_), "--bind", "127.0.0.1",
                                  "--dir", dir_.path().string(), "--save", "", "--appendonly",
                                  appendonly_ ? "yes" : "no", "--daemonize", "no", "--logfile",
                                  dir_.file("redis.log"), "--protected-mode", "no"};
    args.insert(args.end(), extra_.begin(), extra_.end());
    pid_ = ::fork();
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    wait_ready();
  }
  // Stops the server (SIGKILL: as a crash; SIGTERM: a clean shutdown) and reaps it.
  void stop(int sig = SIGKILL) {
    if (pid_ <= 0) return;
    ::kill(pid_, sig);
    int st = 0;
    ::waitpid(pid_, &st, 0);
    pid_ = -1;
  }
  void restart(int sig = SIGKILL) {
    stop(sig);
    start();
  }

 private:
  void wait_ready() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    amq::detail::RedisUrl auth;
    for (size_t i = 0; i + 1 < extra_.size(); ++i)
      if (extra_[i] == "--requirepass") auth.password = extra_[i + 1];
    while (std::chrono::steady_clock::now() < deadline) {
      try {
        amq::detail::RedisConnection c("127.0.0.1", static_cast<uint16_t>(port_), auth, {});
        auto r = c.command({"PING"});
        if (!r.is_error()) {
          // With appendonly, wait until the AOF is loaded (PING answers LOADING otherwise).
          return;
        }
      } catch (const amq::Error&) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    throw std::runtime_error("redis-server on port " + std::to_string(port_) + " did not start");
  }

  std::vector<std::string> extra_;
  bool appendonly_;
  int port_ = 0;
  pid_t pid_ = -1;
  TempDir dir_;
};

// Three masters with cluster-enabled yes, joined by redis-cli --cluster create.
class RedisCluster {
 public:
  RedisCluster() {
    for (int i = 0; i < 3; ++i) {
      nodes_.push_back(std::make_unique<RedisServer>(std::vector<std::string>{
          "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000"}));
    }
    std::string cmd = "redis-cli --cluster create";
    for (auto& n : nodes_) {
      cmd += ' ';
      cmd += n->endpoint();
    }
    cmd += " --cluster-replicas 0 --cluster-yes";
    const RunResult r = run(cmd);
    if (r.status != 0) throw std::runtime_error("redis-cli --cluster create failed: " + r.out + r.err);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (auto& n : nodes_) {
      for (;;) {
        amq::detail::RedisConnection c("127.0.0.1", static_cast<uint16_t>(n->port()), {}, {});
        auto info = c.command({"CLUSTER", "INFO"});
        if (info.str.find("cluster_state:ok") != std::string::npos) break;
        if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("cluster did not become ok");
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
  }
  std::string url() const { return nodes_[0]->url(); }
  RedisServer& node(size_t i) { return *nodes_[i]; }
  size_t size() const { return nodes_.size(); }

 private:
  std::vector<std::unique_ptr<RedisServer>> nodes_;
};

}  // namespace amq::test
