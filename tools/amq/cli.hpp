// Shared pieces of the amq CLI: key input, output files and error reporting.
// The CLI only parses arguments and does I/O; everything else is the library's.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "amq/any_set.hpp"
#include "amq/error.hpp"
#include "amq/hash.hpp"

namespace amq::cli {

// str (bytes as they are), u64 (decimal, 8 little-endian bytes), hex; a set records
// its key type (amq/format.hpp), KeyType::unknown (not recorded) is read as str.
using KeyType = amq::KeyType;

// Keys as read: the text of each line (for printing) and the bytes that are the key.
struct KeyList {
  std::vector<std::string> text;
  std::vector<std::string> bytes;  // for str keys, empty: the text is the key
  size_t size() const { return text.size(); }
  std::vector<Bytes> views() const;
};

// Decodes one key of the given type; throws amq::Error(invalid_argument). A u64 key is a
// decimal number from -2^63 to 2^64-1, a negative one taken in two's complement as
// Guava's longFunnel takes a long (-1 is 0xFFFFFFFFFFFFFFFF).
std::string decode_key(const std::string& text, KeyType type);
// Keys from arguments, or else from the lines of files ("-" or none: stdin).
KeyList read_keys(const std::vector<std::string>& args, const std::vector<std::string>& files, KeyType type,
                  bool progress);
// --key-type; `type` is left as it is unless the option is given.
CLI::Option* add_key_type_option(CLI::App& cmd, KeyType& type);
// The key type to read `path`'s keys with: the one --key-type gives (`given`, which
// stays KeyType::unknown when not given), else the one its file records, else str.
// Throws amq::Error(invalid_argument), naming the file and both types, when one of the
// given and the recorded type is u64 and the other is not (str and hex are notations
// of the same byte-string keys, and read each other's sets).
KeyType resolve_key_type(const std::string& path, KeyType recorded, KeyType given);

// Key lines of standard input in batches: at most a few thousand keys, or fewer when
// no more input is waiting, so that answers keep pace with a slow producer and memory
// does not grow with the input. Decoding errors name "<stdin>:LINE".
void for_each_stdin_batch(KeyType type, const std::function<void(const KeyList&)>& batch);

// `amq query`'s loop: the keys (arguments, or else stdin in batches) are looked up a
// batch at a time and the selected ones printed (or, with `count`, their number), the
// output flushed after each batch. Returns the exit status: 0 if any key was selected.
using LookupFn = std::function<void(std::span<const Bytes> keys, std::span<bool> hits)>;
int run_query(const std::vector<std::string>& args, KeyType type, bool invert, bool count, const LookupFn& lookup);

// Runs f() and returns what it returns; an amq::Error it throws is thrown again with
// "WHERE: " before its message (unless the message starts with WHERE already) and
// `after` after it: every error of the CLI names the file (or filter) it concerns.
Error error_in(const Error& e, const std::string& where, std::string_view after = {});
template <class F>
decltype(auto) in_context(const std::string& where, F&& f, std::string_view after = {}) {
  try {
    return f();
  } catch (const Error& e) {
    throw error_in(e, where, after);
  }
}

// Writes to standard output; throws Errc::io "cannot write standard output: REASON".
void write_stdout(std::string_view text);
void flush_stdout();

// Text safe to print on one terminal line: control characters, C1 controls and bytes
// that are not UTF-8 are escaped (\n, \t, \r, \e, \xNN); everything else is kept.
std::string escape_text(std::string_view s);

// Names the file whose mapping a SIGBUS would concern, for the CLI's one-line error
// (main.cpp installs the handler).
void note_open_file(const std::string& path);

// Writes `data` to `path` atomically ("-" = stdout).
void write_output(const std::string& path, std::span<const std::byte> data);

// Registers each subcommand; the callback stores the exit status in `status`.
void add_build(CLI::App& app, int& status);
void add_query(CLI::App& app, int& status);
void add_add(CLI::App& app, int& status);
void add_remove(CLI::App& app, int& status);
void add_info(CLI::App& app, int& status);
void add_bench(CLI::App& app, int& status);
void add_store(CLI::App& app, int& status);
void add_push(CLI::App& app, int& status);
void add_pull(CLI::App& app, int& status);

// tools/amq/redis_cmd.cpp: the --redis forms of build, query, add and info.
struct RedisTarget {
  std::string url, name;
  bool given() const { return !url.empty() || !name.empty(); }
};
// The filter a --redis URL --name NAME pair names, as an AnySet (both are required).
std::unique_ptr<AnySet> open_redis_target(const RedisTarget& target);
struct RedisBuildOptions {
  std::string kind, format, output;
  std::optional<uint64_t> capacity, seed;
  std::optional<double> fpp, growth, tightening;  // unset: not given on the command line
};
int redis_build(const RedisTarget& target, const RedisBuildOptions& options, const KeyList& keys);
// `amq info`'s text form: a line a field, names in a column as wide as the longest.
void print_info_text(const SetInfo& i);
// `amq info --json`: one object a line; SetInfo::layers, when there are any, follow params.
void print_info_json(const SetInfo& i);
void add_list(CLI::App& app, int& status);
// tools/amq/advise_cmd.cpp: which kinds fit a set's needs.
void add_advise(CLI::App& app, int& status);

}  // namespace amq::cli
