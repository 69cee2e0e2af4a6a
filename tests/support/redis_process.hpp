// A redis-server child process on a free loopback port: found, started, awaited and
// stopped. No GoogleTest here, so `amq bench` (bench/table/redis.cpp) uses it as well
// as the tests (redis_server.hpp builds the test fixtures on it).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "amq/detail/redis_client.hpp"
#include "amq/error.hpp"

namespace amq::test {

// The installed redis-server, or "" when there is none.
inline std::string redis_server_path() {
  for (const char* p : {"/usr/bin/redis-server", "/usr/local/bin/redis-server"})
    if (::access(p, X_OK) == 0) return p;
  return {};
}

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

// redis-server --port `port` --dir `dir` (no RDB snapshots; AOF as asked) plus `extra`
// options; start() returns once it answers PING (with the --requirepass password, if any).
class RedisProcess {
 public:
  RedisProcess(std::string dir, int port, std::vector<std::string> extra = {}, bool appendonly = false)
      : dir_(std::move(dir)), port_(port), extra_(std::move(extra)), appendonly_(appendonly) {}
  ~RedisProcess() { stop(SIGKILL); }
  RedisProcess(const RedisProcess&) = delete;
  RedisProcess& operator=(const RedisProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }

  void start() {
    std::vector<std::string> args{redis_server_path(), "--port", std::to_string(port_), "--bind", "127.0.0.1",
                                  "--dir", dir_, "--save", "", "--appendonly", appendonly_ ? "yes" : "no",
                                  "--daemonize", "no", "--logfile", dir_ + "/redis.log", "--protected-mode", "no"};
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

 private:
  void wait_ready() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    detail::RedisUrl auth;
    for (size_t i = 0; i + 1 < extra_.size(); ++i)
      if (extra_[i] == "--requirepass") auth.password = extra_[i + 1];
    while (std::chrono::steady_clock::now() < deadline) {
      try {
        detail::RedisConnection c("127.0.0.1", static_cast<uint16_t>(port_), auth, {});
        if (!c.command({"PING"}).is_error()) return;  // with AOF, PING answers LOADING until loaded
      } catch (const Error&) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    throw std::runtime_error("redis-server on port " + std::to_string(port_) + " did not start");
  }

  std::string dir_;
  int port_;
  std::vector<std::string> extra_;
  bool appendonly_;
  pid_t pid_ = -1;
};

}  // namespace amq::test
