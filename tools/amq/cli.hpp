// Shared pieces of the amq CLI: key input, output files and error reporting.
// The CLI only parses arguments and does I/O; everything else is the library's.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "amq/hash.hpp"

namespace amq::cli {

enum class KeyType { str, u64, hex };

// Keys as read: the text of each line (for printing) and the bytes that are the key.
struct KeyList {
  std::vector<std::string> text;
  std::vector<std::string> bytes;  // for str keys, empty: the text is the key
  size_t size() const { return text.size(); }
  std::vector<Bytes> views() const;
};

// Decodes one key of the given type; throws amq::Error(invalid_argument).
std::string decode_key(const std::string& text, KeyType type);
// Keys from arguments, or else from the lines of files ("-" or none: stdin).
KeyList read_keys(const std::vector<std::string>& args, const std::vector<std::string>& files, KeyType type,
                  bool progress);
void add_key_type_option(CLI::App& cmd, KeyType& type);

// Writes `data` to `path` atomically ("-" = stdout).
void write_output(const std::string& path, std::span<const std::byte> data);

// Registers each subcommand; the callback stores the exit status in `status`.
void add_build(CLI::App& app, int& status);
void add_query(CLI::App& app, int& status);
void add_add(CLI::App& app, int& status);
void add_remove(CLI::App& app, int& status);
void add_info(CLI::App& app, int& status);
void add_bench(CLI::App& app, int& status);
void add_list(CLI::App& app, int& status);

}  // namespace amq::cli
