// Helpers shared by the tests: random keys, temporary directories, running the CLI.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "amq/error.hpp"

namespace amq::test {

// True in builds with AddressSanitizer, where tests scale their sizes down.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

// The Errc of the amq::Error that f throws; a test failure if it throws none.
inline Errc code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no amq::Error thrown";
  return Errc::io;
}

inline std::filesystem::path shared_dir() { return AMQ_SHARED_DIR; }

// Skips the current test, saying why, when ../shared is not beside the project.
#define AMQ_REQUIRE_SHARED(relpath)                                                                   \
  do {                                                                                               \
    if (!std::filesystem::exists(amq::test::shared_dir() / (relpath)))                               \
      GTEST_SKIP() << "needs " << (amq::test::shared_dir() / (relpath)).string()                      \
                   << " (the shared/ folder beside the project); not present in this clone";          \
  } while (0)

// `n` distinct random byte-string keys of length 1..max_len, from `seed`.
inline std::vector<std::string> random_keys(size_t n, uint64_t seed, size_t max_len = 24) {
  std::mt19937_64 rng(seed);
  std::unordered_set<std::string> seen;
  std::vector<std::string> out;
  out.reserve(n);
  while (out.size() < n) {
    std::string k(1 + rng() % max_len, '\0');
    for (auto& c : k) c = static_cast<char>(rng());
    if (seen.insert(k).second) out.push_back(std::move(k));
  }
  return out;
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "amq-test-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

struct RunResult {
  int status = -1;
  std::string out;
  std::string err;
};

// Runs a shell command line, with `input` on stdin; captures stdout and stderr.
inline RunResult run(const std::string& command, const std::string& input = "") {
  TempDir tmp;
  const std::string in = tmp.file("in"), out = tmp.file("out"), err = tmp.file("err");
  {
    FILE* f = std::fopen(in.c_str(), "wb");
    std::fwrite(input.data(), 1, input.size(), f);
    std::fclose(f);
  }
  const std::string full = "(" + command + ") <'" + in + "' >'" + out + "' 2>'" + err + "'";
  const int raw = std::system(full.c_str());
  RunResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  auto slurp = [](const std::string& p) {
    std::string s;
    if (FILE* f = std::fopen(p.c_str(), "rb")) {
      char buf[4096];
      size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
      std::fclose(f);
    }
    return s;
  };
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

#ifdef AMQ_CLI
inline std::string cli() { return AMQ_CLI; }
#endif

}  // namespace amq::test
