// amq build | query | add | remove | info
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

#include "amq/any_set.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "amq/registry.hpp"
#include "cli.hpp"
#include "json_out.hpp"
#include "kind_flags.hpp"
#include "numbers.hpp"

namespace amq::cli {
namespace {

// Loads FILE (format-specific options: bip158's --siphash-key, ...); errors name the file.
std::unique_ptr<AnySet> load_path(const std::string& path, const LoadOptions& options) {
  note_open_file(path);
  return in_context(path, [&] { return open_set(path, options); });
}

// The options an outside format needs to be read (gcs --format bip158: the SipHash key
// and Golomb-Rice parameters), generated from the kind rows; load_set checks them
// against the format's kind.
struct Bip158Opts {
  KindFlags flags{true};
  void add(CLI::App& cmd) { flags.add(cmd); }
  void put(OptionMap& extra) const { flags.put_text(extra); }
};

// `amq build --format`'s help: each format and the kinds that write it.
std::string build_formats_help() {
  std::string out = "output format: amq (every kind)";
  for (const KindRow* row : kind_rows())
    for (std::string_view f : row->formats)
      if (f != "amq") out += ", " + std::string(f) + " (" + std::string(row->name) + ")";
  return out;
}

void save_path(const std::string& path, const AnySet& set) {
  in_context(path, [&] { set.write_to([&](std::span<const std::byte> bytes) { write_output(path, bytes); }); });
}

// With --redis every positional of query and add is a key, but a first one that names
// a file is surely a set file given by mistake: refused before connecting.
void refuse_file_with_redis(const std::string& first) {
  struct stat st {};
  if (!first.empty() && ::stat(first.c_str(), &st) == 0 && S_ISREG(st.st_mode))
    throw Error(Errc::invalid_argument, first + ": give either a file or --redis, not both (keys that name files: "
                                                "give them on standard input)");
}

// The filter the positionals of query and add go to with --redis: every positional is a
// key (the file's slot, when given, is the first key), after refuse_file_with_redis.
std::unique_ptr<AnySet> open_redis_for_keys(const std::string& file, const RedisTarget& target,
                                            std::vector<std::string>& keys) {
  refuse_file_with_redis(file);
  if (!file.empty()) keys.insert(keys.begin(), file);
  return open_redis_target(target);
}

// --redis URL and --name NAME of build, query, add and info; `what` says what --redis does.
void add_redis_options(CLI::App& cmd, RedisTarget& target, const std::string& what) {
  cmd.add_option("--redis", target.url, what + ": redis://[user:password@]host:port[/db]");
  cmd.add_option("--name", target.name, "with --redis: the filter's name");
}

// --wait SECONDS of add, remove and build: how long to wait for another writer's lock.
CLI::Option* add_wait_option(CLI::App& cmd, double& seconds) {
  return cmd.add_option("--wait", seconds,
                        "wait at most SECONDS for another amq writer of the file to finish (default: as long as it "
                        "takes)");
}

std::optional<std::chrono::milliseconds> wait_limit(const CLI::Option* opt, double seconds) {
  if (!*opt) return std::nullopt;
  if (!(seconds >= 0)) throw Error(Errc::invalid_argument, "--wait: expected a number of seconds >= 0");
  return std::chrono::milliseconds(static_cast<int64_t>(std::min(seconds, 1e9) * 1000.0));
}

// The file formats `--format` reads, for the help of query, add and info.
constexpr const char* kLoadFormats =
    "file format: auto (an amq file or a Guava stream, recognised), amq, guava (bloom), parquet (a raw "
    "blocked-bloom bitset), bip158 (gcs, with --siphash-key), cache-digest (gcs, base64url text)";

// `amq build`'s command line: the values, and the options whose presence matters.
struct BuildOpts {
  std::string kind;
  double fpp = 0.01;
  uint64_t capacity = 0;
  KeyType key_type = KeyType::str;
  std::string format = "amq";
  std::string out = "-";
  uint64_t seed = 0;
  std::vector<std::string> files;
  uint64_t max_memory = 0;
  KindFlags kind_flags{false};  // every kind's own options
  RedisTarget redis;
  double wait = 0;
  CLI::App* cmd = nullptr;
  CLI::Option *capacity_opt = nullptr, *max_memory_opt = nullptr, *wait_opt = nullptr;
};

// A flat list of option definitions: the common ones, then each kind's (from the rows).
void add_build_options(CLI::App& cmd, BuildOpts& o) {
  std::vector<std::string> kinds;
  for (const KindRow* row : kind_rows()) kinds.emplace_back(row->name);
  cmd.add_option("-t,--type", o.kind, "structure kind")->required()->check(CLI::IsMember(kinds));
  cmd.add_option("-p,--fpp", o.fpp,
                 "target false-positive rate: in (0, 1); gcs: (0, 0.5]; gcs --format cache-digest: rounded to the "
                 "nearest power of 1/2; not for succinct (an exact set)")
      ->transform(real_in(0, Bound::open, 1, Bound::open))
      ->default_val(0.01);
  o.capacity_opt = cmd.add_option("-n,--capacity", o.capacity,
                                  "expected number of keys (default: the keys given; 0 counts as 1, as in Guava); "
                                  "not for gcs and succinct, which hold exactly the keys given")
                       ->transform(count_in(0));
  add_key_type_option(cmd, o.key_type);
  cmd.add_option("--format", o.format, build_formats_help())->default_val("amq");
  cmd.add_option("-o,--output", o.out, "output file (default: stdout)");
  cmd.add_option("--seed", o.seed, "hash seed, for kinds with a seeded hash")->transform(count_in())->default_val(0);
  o.max_memory_opt = cmd.add_option("--max-memory", o.max_memory,
                                    "refuse to build a set that needs more memory than this many bytes (suffix k, "
                                    "M, G or T: powers of 1024; default: the memory available now)")
                         ->transform(byte_size());
  o.kind_flags.add(cmd);
  o.wait_opt = add_wait_option(cmd, o.wait);
  cmd.add_option("files", o.files, "key files (default: stdin)");
  add_redis_options(cmd, o.redis, "add to a shared scalable-bloom in Redis");
}

// amq build --redis: adds the keys to a shared scalable-bloom; returns the exit status.
int build_in_redis(const BuildOpts& o, const KindRow& row) {
  RedisBuildOptions r{o.kind, o.format, o.out, {}, {}, {}, {}, {}};
  if (*o.capacity_opt) r.capacity = o.capacity;
  if (o.cmd->count("--seed")) r.seed = o.seed;
  if (o.cmd->count("--fpp")) r.fpp = o.fpp;
  // A shared scalable-bloom's layers: read as the kind reads them (redis_build refuses
  // any other kind).
  const auto real = [&](std::string_view name) -> std::optional<double> {
    const std::string* text = o.kind_flags.given(name);
    const OptionSpec* spec = row.option(name);
    if (!text || !spec) return std::nullopt;
    const OptionValue v = parse_option_value(*spec, *text);
    if (const double* d = std::get_if<double>(&v)) return *d;
    if (const uint64_t* u = std::get_if<uint64_t>(&v)) return static_cast<double>(*u);
    return std::nullopt;
  };
  r.growth = real("growth");
  r.tightening = real("tightening");
  return redis_build(o.redis, r, read_keys({}, o.files, o.key_type, true));
}

// The memory the set needs, checked before anything is allocated: the set, and its
// file image while it is written (a succinct set is its file image).
void check_build_memory(const BuildOpts& o, const KindRow& row, const BuildOptions& opt,
                        std::span<const Bytes> keys, const std::string& where) {
  const std::optional<uint64_t> limit = *o.max_memory_opt ? std::optional<uint64_t>(o.max_memory) : available_memory();
  if (!limit) return;
  const uint64_t set_bytes = build_bytes(row.kind, opt, keys);
  const uint64_t need = row.caps.whole_image ? set_bytes : 2 * set_bytes;
  if (need > *limit)
    throw Error(Errc::too_large,
                fmt::format("{}: a {} of {} keys needs {} of memory (the set and its file image), more than the "
                            "{} {} (--max-memory)",
                            where, o.kind, opt.capacity.value_or(keys.size()), bytes_text(need), bytes_text(*limit),
                            *o.max_memory_opt ? "allowed" : "available"));
}

// amq build to a file (or stdout): reads the keys, checks the memory, builds, saves and
// warns or notes what the user should know.
void build_to_file(const BuildOpts& o, const KindRow& row) {
  if (row.caps.exact && o.cmd->count("--fpp"))
    throw Error(Errc::invalid_argument, "--fpp does not apply to " + std::string(row.name) + ": it is an exact set");
  BuildOptions opt;
  opt.fpp = o.fpp;
  if (*o.capacity_opt) opt.capacity = std::max<uint64_t>(o.capacity, 1);  // 0 counts as 1, as in Guava
  opt.format = o.format;
  opt.seed = o.seed;
  opt.key_type = o.key_type;
  opt.extra = o.kind_flags.typed(row);
  const KeyList keys = read_keys({}, o.files, o.key_type, true);
  const auto views = keys.views();
  const std::string where = o.out == "-" ? std::string("build") : o.out;
  check_build_memory(o, row, opt, views, where);
  auto set = build_set(row.kind, opt, views);
  // Replacing a file that amq writers may be updating: take turns with them, or
  // either this file or their update would be lost.
  std::optional<FileLock> lock;
  struct stat st {};
  if (o.out != "-" && ::stat(o.out.c_str(), &st) == 0 && S_ISREG(st.st_mode))
    lock.emplace(o.out, wait_limit(o.wait_opt, o.wait));
  save_path(lock ? lock->path() : o.out, *set);
  // A fixed-size filter given more keys than its capacity still answers, at a worse rate.
  if (row.caps.fills_past_capacity && opt.capacity && views.size() > *opt.capacity)
    fmt::print(stderr,
               "amq: warning: {}: {} keys are more than the capacity {} (-n): the expected false-positive rate is "
               "{:g}, not {:g}\n",
               where, views.size(), *opt.capacity, set->info().fpp_expected, opt.fpp);
  if (row.build_note)
    if (const std::string note = row.build_note(opt); !note.empty()) fmt::print(stderr, "amq: note: {}: {}\n", where, note);
}

}  // namespace

void add_build(CLI::App& app, int& status) {
  auto o = std::make_shared<BuildOpts>();
  o->cmd = app.add_subcommand("build", "build a set from keys (lines of FILEs, or stdin)");
  add_build_options(*o->cmd, *o);
  o->cmd->callback([o, &status] {
    const KindRow& row = *find_kind_row(o->kind);  // -t is one of the rows' names
    if (o->redis.given()) {
      status = build_in_redis(*o, row);
      return;
    }
    build_to_file(*o, row);
    status = 0;
  });
}

void add_query(CLI::App& app, int& status) {
  struct Opts {
    std::string file;
    std::vector<std::string> keys;
    bool invert = false, count = false;
    KeyType key_type = KeyType::unknown;  // unknown: not given
    std::string format = "auto";
    RedisTarget redis;
    Bip158Opts bip158;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("query", "print the keys that may be in the set (like grep); exit 0 if any");
  cmd->add_option("file", o->file, "set file (none with --redis)");
  cmd->add_option("keys", o->keys, "keys (default: lines of stdin)");
  cmd->add_flag("-v,--invert", o->invert, "print the keys that are surely absent instead");
  cmd->add_flag("-c,--count", o->count, "print only the number of keys selected");
  add_key_type_option(*cmd, o->key_type);
  cmd->add_option("--format", o->format, kLoadFormats)->default_val("auto");
  add_redis_options(*cmd, o->redis, "query a filter in Redis");
  o->bip158.add(*cmd);
  cmd->callback([o, &status] {
    std::vector<std::string> args = o->keys;
    std::unique_ptr<AnySet> set;
    if (o->redis.given()) {
      set = open_redis_for_keys(o->file, o->redis, args);
    } else {
      if (o->file.empty()) throw CLI::RequiredError("file");
      LoadOptions lo{.format = o->format, .extra = {}};
      o->bip158.put(lo.extra);
      set = load_path(o->file, lo);
    }
    const std::string& where = o->redis.given() ? o->redis.name : o->file;
    status = run_query(args, resolve_key_type(where, set->key_type(), o->key_type), o->invert, o->count,
                       [&](std::span<const Bytes> keys, std::span<bool> hits) { set->contains_many(keys, hits); });
  });
}

void add_add(CLI::App& app, int& status) {
  struct Opts {
    std::string file;
    std::vector<std::string> keys;
    KeyType key_type = KeyType::unknown;  // unknown: not given
    std::string format = "auto";
    double wait = 0;
    RedisTarget redis;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("add", "add keys to a dynamic set; the file is replaced atomically");
  cmd->add_option("file", o->file, "set file (none with --redis)");
  cmd->add_option("keys", o->keys, "keys (default: lines of stdin)");
  add_key_type_option(*cmd, o->key_type);
  cmd->add_option("--format", o->format, "file format: auto (an amq file or a Guava stream, recognised), amq, guava")
      ->default_val("auto");
  auto* wait = add_wait_option(*cmd, o->wait);
  add_redis_options(*cmd, o->redis, "add to a filter in Redis");
  cmd->callback([o, wait, &status] {
    std::vector<std::string> args = o->keys;
    std::optional<FileLock> lock;
    std::unique_ptr<AnySet> set;
    if (o->redis.given()) {
      // The filter takes concurrent adds: no lock, no file.
      set = open_redis_for_keys(o->file, o->redis, args);
    } else {
      if (o->file.empty()) throw CLI::RequiredError("file");
      // Writers take turns: the lock is held from the read to the replacement.
      lock.emplace(o->file, wait_limit(wait, o->wait));
      set = load_path(lock->path(), LoadOptions{.format = o->format, .extra = {}});
    }
    const std::string where = lock ? o->file : o->redis.name;
    if (!set->is_dynamic())
      throw Error(Errc::unsupported, where + ": a " + std::string(kind_name(set->kind())) +
                                         " is static: rebuild it with 'amq build' instead");
    const KeyList keys = read_keys(args, {}, resolve_key_type(where, set->key_type(), o->key_type), true);
    if (lock) {
      in_context(where, [&] { set->insert_many(keys.views()); }, " (file left unchanged)");
      save_path(lock->path(), *set);
    } else {
      set->insert_many(keys.views());
    }
    status = 0;
  });
}

void add_remove(CLI::App& app, int& status) {
  struct Opts {
    std::string file;
    std::vector<std::string> keys;
    KeyType key_type = KeyType::unknown;  // unknown: not given
    bool only_inserted = false;
    std::string inserted_list;
    double wait = 0;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "remove",
      "remove keys from a set that can erase; prints the keys not removed.\n"
      "Only keys that were inserted may be removed, each at most as often as it was added: a filter stores "
      "fingerprints, and removing any other key can delete the fingerprint of a key that is in the set, which is "
      "then reported absent. So remove asks for --only-inserted (you state that every key was inserted) or "
      "--only-if-present-in LIST (only keys listed in LIST, e.g. the keys the set was built from, are removed)");
  cmd->add_option("file", o->file, "set file")->required();
  cmd->add_option("keys", o->keys, "keys (default: lines of stdin)");
  add_key_type_option(*cmd, o->key_type);
  auto* only = cmd->add_flag("--only-inserted", o->only_inserted,
                             "state that every key given was inserted into the set (and not removed since)");
  cmd->add_option("--only-if-present-in", o->inserted_list,
                  "remove only the keys listed in LIST (one a line, read as --key-type says), each once; the "
                  "others are printed as not removed")
      ->type_name("LIST")
      ->excludes(only);
  auto* wait = add_wait_option(*cmd, o->wait);
  cmd->callback([o, wait, &status] {
    if (!o->only_inserted && o->inserted_list.empty())
      throw Error(Errc::invalid_argument,
                  o->file + ": refusing to remove keys without --only-inserted or --only-if-present-in LIST: removing a "
                            "key that was never inserted can delete another key's fingerprint, which is then "
                            "reported absent (see 'amq remove --help')");
    if (o->inserted_list == "-" && o->keys.empty())
      throw Error(Errc::invalid_argument, "--only-if-present-in - needs the keys as arguments (stdin is the list)");
    const FileLock lock(o->file, wait_limit(wait, o->wait));
    auto set = load_path(lock.path(), LoadOptions{});
    if (!set->supports_erase())
      throw Error(Errc::unsupported, o->file + ": a " + std::string(kind_name(set->kind())) + " cannot remove keys");
    const KeyType key_type = resolve_key_type(o->file, set->key_type(), o->key_type);
    const KeyList keys = read_keys(o->keys, {}, key_type, true);
    const auto views = keys.views();
    KeyList listed;
    std::unordered_set<std::string_view> allowed;
    if (!o->inserted_list.empty()) {
      listed = read_keys({}, {o->inserted_list}, key_type, true);
      for (Bytes k : listed.views()) allowed.insert(as_chars(k));
    }
    size_t missing = 0;
    for (size_t i = 0; i < views.size(); ++i) {
      // A listed key is removed once (a second removal could take another key's copy).
      if ((!o->inserted_list.empty() && allowed.erase(as_chars(views[i])) == 0) || !set->erase(views[i])) {
        fmt::print("{}\n", keys.text[i]);
        ++missing;
      }
    }
    flush_stdout();  // the keys not found: if they cannot be written, the file stays as it was
    save_path(lock.path(), *set);
    status = missing ? 1 : 0;
  });
}

void print_info_text(const SetInfo& i) {
  // Names in a column as wide as the longest (13 at least), values after it.
  size_t w = 13;
  for (const auto& p : i.params) w = std::max(w, p.first.size());
  const auto line = [w](std::string_view k, const auto& v) { fmt::print("{:<{}} {}\n", k, w, v); };
  line("kind", kind_name(i.kind));
  line("format", i.format);
  for (const auto& [k, v] : i.params) line(k, v);
  line("items", fmt::format("{}{}", i.items, i.items_exact ? "" : " (estimate)"));
  line("bytes", i.bytes);
  line("bits/key", fmt::format("{:.2f}", i.bits_per_key));
  line("expected fpp", fmt::format("{:.6g}", i.fpp_expected));
}

void print_info_json(const SetInfo& i) {
  // Numbers as numbers; the per-layer lists as arrays; names and keys always strings.
  const auto is_list = [lists = kind_row(i.kind).list_params](const std::string& name) {
    return std::find(lists.begin(), lists.end(), name) != lists.end();
  };
  Json params = Json::object();
  for (const auto& [k, v] : i.params) {
    if (k == "name" || k == "siphash_key" || k == "base64url") {
      params[k] = v;
    } else if (is_list(k)) {
      Json list = Json::array();
      for (size_t at = 0; at <= v.size();) {
        const size_t comma = std::min(v.find(',', at), v.size());
        if (comma > at) list.push_back(json_number_or_string(std::string_view(v).substr(at, comma - at)));
        at = comma + 1;
      }
      params[k] = std::move(list);
    } else {
      params[k] = json_number_or_string(v);
    }
  }
  Json j = Json::object();
  j["kind"] = kind_name(i.kind);
  j["format"] = i.format;
  j["params"] = std::move(params);
  if (!i.layers.empty()) {
    Json layers = Json::array();
    for (const SetLayerInfo& l : i.layers)
      layers.push_back({{"capacity", l.capacity}, {"items", l.items}, {"bits", l.bits}, {"hashes", l.hashes}});
    j["layers"] = std::move(layers);
  }
  j["items"] = i.items;
  j["items_exact"] = i.items_exact;
  j["bytes"] = i.bytes;
  j["bits_per_key"] = i.bits_per_key;
  j["fpp_expected"] = i.fpp_expected;
  fmt::print("{}\n", json_text(j));
}

void add_info(CLI::App& app, int& status) {
  struct Opts {
    std::string file;
    bool json = false;
    std::string format = "auto";
    RedisTarget redis;
    Bip158Opts bip158;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("info", "describe a set file");
  cmd->add_option("file", o->file, "set file (none with --redis)");
  cmd->add_flag("--json", o->json, "one JSON object");
  cmd->add_option("--format", o->format, kLoadFormats)->default_val("auto");
  add_redis_options(*cmd, o->redis, "describe a filter in Redis");
  o->bip158.add(*cmd);
  cmd->callback([o, &status] {
    std::unique_ptr<AnySet> set;
    if (o->redis.given()) {
      if (!o->file.empty()) throw Error(Errc::invalid_argument, "give either a file or --redis, not both");
      set = open_redis_target(o->redis);
    } else {
      if (o->file.empty()) throw CLI::RequiredError("file");
      LoadOptions lo{.format = o->format, .extra = {}};
      o->bip158.put(lo.extra);
      set = load_path(o->file, lo);
    }
    const SetInfo i = set->info();
    if (o->json)
      print_info_json(i);
    else
      print_info_text(i);
    status = 0;
  });
}

}  // namespace amq::cli
