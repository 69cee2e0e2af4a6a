// amq — command-line front end of the amq library. Exit status: 0 success (for
// query: at least one key matched), 1 no match / keys not found, 2 any error.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "amq/error.hpp"
#include "cli.hpp"

int main(int argc, char** argv) {
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    fmt::print(stderr, "amq: {}\n", e.what());
    return 2;
  } catch (const amq::Error& e) {
    fmt::print(stderr, "amq: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "amq: {}\n", e.what());
    return 2;
  }
  return status;
}
