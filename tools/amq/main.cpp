// amq — command-line front end of the amq library. Exit status: 0 success (for
// query: at least one key matched), 1 no match / keys not found, 2 any error.
// Every error is one line on stderr, "amq: " and the message with its untrusted
// bytes escaped; output that cannot be written is an error too.
#include <fmt/core.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "amq/error.hpp"
#include "cli.hpp"

namespace amq::cli {
namespace {

// The SIGBUS message, prepared outside the handler (which may only write and exit).
char bus_message[4096];
std::atomic<size_t> bus_length{0};
constexpr char kBusDefault[] = "amq: a mapped file changed or was truncated while in use (SIGBUS)\n";

extern "C" void on_sigbus(int) {
  const size_t n = bus_length.load();
  if (n > 0) {
    [[maybe_unused]] ssize_t w = ::write(2, bus_message, n);
  } else {
    [[maybe_unused]] ssize_t w = ::write(2, kBusDefault, sizeof kBusDefault - 1);
  }
  ::_exit(2);
}

void install_sigbus_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_sigbus;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGBUS, &sa, nullptr);
}

void print_error(std::string_view what) { fmt::print(stderr, "amq: {}\n", escape_text(what)); }

// Output still buffered is written now; a failure to write any of it is an error.
int finish(int status) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int err = errno;
  if (flushed && !std::ferror(stdout)) return status;
  print_error(err ? std::string("cannot write standard output: ") + std::strerror(err)
                  : std::string("cannot write standard output"));
  return 2;
}

}  // namespace

void note_open_file(const std::string& path) {
  const std::string m = "amq: " + escape_text(path) + ": file changed or truncated while in use (SIGBUS)\n";
  bus_length.store(0);
  if (m.size() > sizeof bus_message) return;
  std::memcpy(bus_message, m.data(), m.size());
  bus_length.store(m.size());
}

}  // namespace amq::cli

int main(int argc, char** argv) {
  amq::cli::install_sigbus_handler();
  CLI::App app{"amq — compact set-membership structures (Bloom, cuckoo, Golomb-coded, succinct trie)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "amq 0.1.0");
  int status = 0;
  amq::cli::add_build(app, status);
  amq::cli::add_query(app, status);
  amq::cli::add_add(app, status);
  amq::cli::add_remove(app, status);
  amq::cli::add_info(app, status);
  amq::cli::add_bench(app, status);
  amq::cli::add_store(app, status);
  amq::cli::add_push(app, status);
  amq::cli::add_pull(app, status);
  amq::cli::add_list(app, status);
  amq::cli::add_advise(app, status);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return amq::cli::finish(app.exit(e));
    amq::cli::print_error(e.what());
    return 2;
  } catch (const std::exception& e) {
    amq::cli::print_error(e.what());
    return 2;
  }
  return amq::cli::finish(status);
}
