// amq bench ARGS: runs amq-bench ARGS (bench/table), the comparison table, which is its
// own program so that amq carries no benchmark code and no outside peers. amq-bench is
// looked for beside the running amq, then on PATH.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "amq/error.hpp"
#include "cli.hpp"

namespace amq::cli {
namespace {

constexpr const char* kBench = "amq-bench";

// Replaces this process with amq-bench ARGS; returns only on failure (errno says why).
void exec_bench(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path beside = self.parent_path() / kBench;
    if (::access(beside.c_str(), X_OK) == 0) {
      ::execv(beside.c_str(), argv.data());
      throw Error(Errc::io, beside.string() + ": cannot run: " + std::strerror(errno));
    }
  }
  ::execvp(kBench, argv.data());
}

}  // namespace

void add_bench(CLI::App& app, int& /*status*/) {
  auto* cmd = app.add_subcommand("bench", "measure every structure and its peers on the same keys (runs amq-bench; "
                                          "'amq bench --help' lists its options)");
  // Every argument after "bench", --help included, is amq-bench's.
  cmd->prefix_command();
  cmd->set_help_flag();
  cmd->allow_extras();
  cmd->callback([cmd] {
    std::vector<std::string> args{kBench};
    for (const std::string& a : cmd->remaining()) args.push_back(a);
    exec_bench(std::move(args));
    if (errno == ENOENT)
      throw Error(Errc::not_found, std::string(kBench) + " is not installed: it is built and installed with amq "
                                                         "(AMQ_BUILD_TOOLS=ON), beside it or on PATH");
    throw Error(Errc::io, std::string("cannot run ") + kBench + ": " + std::strerror(errno));
  });
}

}  // namespace amq::cli
