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
#include "redis_process.hpp"
#include "test_util.hpp"

namespace amq::test {

#define AMQ_REQUIRE_REDIS()                                                                        \
  do {                                                                                             \
    if (amq::test::redis_server_path().empty())                                                    \
      GTEST_SKIP() << "redis-server is not installed (Debian package redis-server; scripts/setup.sh)"; \
  } while (0)

class RedisServer {
 public:
  // extra: more redis-server options, e.g. {"--requirepass", "s3cret"}.
  explicit RedisServer(std::vector<std::string> extra = {}, bool appendonly = false)
      : process_(dir_.path().string(), free_port(), std::move(extra), appendonly) {
    process_.start();
  }

  int port() const { return process_.port(); }
  pid_t pid() const { return process_.pid(); }
  std::string url(const std::string& userinfo = "") const {
    return "redis://" + (userinfo.empty() ? "" : userinfo + "@") + "127.0.0.1:" + std::to_string(port());
  }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port()); }
  const TempDir& dir() const { return dir_; }

  // Stops the server (SIGKILL: as a crash; SIGTERM: a clean shutdown) and reaps it.
  void stop(int sig = SIGKILL) { process_.stop(sig); }
  void start() { process_.start(); }
  void restart(int sig = SIGKILL) {
    stop(sig);
    start();
  }

 private:
  TempDir dir_;  // before process_: made first, removed after the server is gone
  RedisProcess process_;
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
