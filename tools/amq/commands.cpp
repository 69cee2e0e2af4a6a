// amq build | query | add | remove | info
#include <fmt/core.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "amq/any_set.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "cli.hpp"

namespace amq::cli {
namespace {

// Loads FILE in the given format; errors name the file.
std::unique_ptr<AnySet> load_path(const std::string& path, const std::string& format) {
  try {
    LoadOptions options;
    options.format = format;
    return open_set(path, options);
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.rfind(path, 0) == 0) throw;
    throw Error(e.code(), path + ": " + msg);
  }
}

// Loads FILE with format-specific options (bip158's --siphash-key, ...).
std::unique_ptr<AnySet> load_path(const std::string& path, const LoadOptions& options) {
  try {
    return open_set(path, options);
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.rfind(path, 0) == 0) throw;
    throw Error(e.code(), path + ": " + msg);
  }
}

// gcs --format bip158: the SipHash key and Golomb-Rice parameters.
struct Bip158Opts {
  std::string siphash_key;
  uint64_t golomb_p = 19, golomb_m = 784931;
  CLI::Option *key = nullptr, *p = nullptr, *m = nullptr;
  void add(CLI::App& cmd) {
    key = cmd.add_option("--siphash-key", siphash_key, "gcs --format bip158: the 16-byte SipHash key, 32 hex digits");
    p = cmd.add_option("--golomb-p", golomb_p, "gcs --format bip158: Golomb-Rice parameter P (default 19)");
    m = cmd.add_option("--golomb-m", golomb_m, "gcs --format bip158: range per element M (default 784931)");
  }
  void put(std::map<std::string, std::string>& extra) const {
    if (*key) extra["siphash-key"] = siphash_key;
    if (*p) extra["golomb-p"] = std::to_string(golomb_p);
    if (*m) extra["golomb-m"] = std::to_string(golomb_m);
  }
};

void save_path(const std::string& path, const AnySet& set) {
  try {
    set.write_to([&](std::span<const std::byte> bytes) { write_output(path, bytes); });
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.rfind(path, 0) == 0) throw;
    throw Error(e.code(), path + ": " + msg);
  }
}

std::string json_escape(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) out += fmt::format("\\u{:04x}", c);
        else out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

void add_build(CLI::App& app, int& status) {
  struct Opts {
    std::string kind;
    double fpp = 0.01;
    uint64_t capacity = 0;
    KeyType key_type = KeyType::str;
    std::string format = "amq";
    std::string out = "-";
    uint64_t seed = 0;
    std::vector<std::string> files;
    bool parquet = false;
    double growth = 0, tightening = 0;
    uint32_t fingerprint_bits = 0, bucket_size = 0;
    std::string tail_coding;
    std::string arity;
    RedisTarget redis;
    Bip158Opts bip158;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("build", "build a set from keys (lines of FILEs, or stdin)");
  std::vector<std::string> kinds;
  for (Kind k : all_kinds()) kinds.emplace_back(kind_name(k));
  cmd->add_option("-t,--type", o->kind, "structure kind")->required()->check(CLI::IsMember(kinds));
  cmd->add_option("-p,--fpp", o->fpp, "target false-positive rate, in (0, 1)")->default_val(0.01);
  auto* cap = cmd->add_option("-n,--capacity", o->capacity, "expected number of keys (default: the keys given)");
  add_key_type_option(*cmd, o->key_type);
  cmd->add_option("--format", o->format, "output format: amq, or the kind's outside format (bloom: guava)")
      ->default_val("amq");
  cmd->add_option("-o,--output", o->out, "output file (default: stdout)");
  cmd->add_option("--seed", o->seed, "hash seed, for kinds with a seeded hash")->default_val(0);
  cmd->add_flag("--parquet", o->parquet, "blocked-bloom: Parquet's hashing (XXH64, seed 0)");
  auto* growth = cmd->add_option("--growth", o->growth, "scalable kinds: size factor of each new layer (default 2)");
  auto* tight = cmd->add_option("--tightening", o->tightening,
                                "scalable-bloom: error ratio of each new layer (default 0.5)");
  auto* fbits = cmd->add_option("--fingerprint-bits", o->fingerprint_bits,
                                "cuckoo kinds: fingerprint bits f, 4..32; binary-fuse: 1..32 (default: from --fpp)");
  cmd->add_option("--arity", o->arity, "binary-fuse: slots a key, 3 or 4 (default: the smaller filter)");
  auto* bsize = cmd->add_option("--bucket-size", o->bucket_size, "cuckoo kinds: slots per bucket, 2, 4 or 8");
  auto* tcode = cmd->add_option("--tail-coding", o->tail_coding,
                                "succinct: code the tails with a symbol table learnt from them: auto (where that "
                                "makes the set smaller; the default), always, never")
                    ->check(CLI::IsMember({"auto", "always", "never"}));
  o->bip158.add(*cmd);
  cmd->add_option("files", o->files, "key files (default: stdin)");
  cmd->add_option("--redis", o->redis.url, "add to a shared scalable-bloom in Redis: redis://[user:password@]host:port[/db]");
  cmd->add_option("--name", o->redis.name, "with --redis: the filter's name");
  cmd->callback([o, cap, growth, tight, fbits, bsize, tcode, cmd, &status] {
    if (!o->redis.url.empty() || !o->redis.name.empty()) {
      RedisBuildOptions r{o->kind, o->format, o->out, {}, {}, {}, {}, {}};
      if (*cap) r.capacity = o->capacity;
      if (cmd->count("--seed")) r.seed = o->seed;
      if (cmd->count("--fpp")) r.fpp = o->fpp;
      if (*growth) r.growth = o->growth;
      if (*tight) r.tightening = o->tightening;
      status = redis_build(o->redis, r, read_keys({}, o->files, o->key_type, true));
      return;
    }
    const Kind kind = *kind_from_name(o->kind);
    BuildOptions opt;
    opt.fpp = o->fpp;
    if (*cap) opt.capacity = o->capacity;
    opt.format = o->format;
    opt.seed = o->seed;
    if (o->parquet) opt.extra["parquet"] = "1";
    if (*growth) opt.extra["growth"] = std::to_string(o->growth);
    if (*tight) opt.extra["tightening"] = std::to_string(o->tightening);
    if (*fbits) opt.extra["fingerprint-bits"] = std::to_string(o->fingerprint_bits);
    if (*bsize) opt.extra["bucket-size"] = std::to_string(o->bucket_size);
    if (*tcode) opt.extra["tail-coding"] = o->tail_coding;
    if (cmd->count("--arity")) opt.extra["arity"] = o->arity;
    o->bip158.put(opt.extra);
    const KeyList keys = read_keys({}, o->files, o->key_type, true);
    const auto views = keys.views();
    auto set = build_set(kind, opt, views);
    save_path(o->out, *set);
    status = 0;
  });
}

void add_query(CLI::App& app, int& status) {
  struct Opts {
    std::string file;
    std::vector<std::string> keys;
    bool invert = false, count = false;
    KeyType key_type = KeyType::str;
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
  cmd->add_option("--format", o->format, "file format: auto, amq, guava")->default_val("auto");
  cmd->add_option("--redis", o->redis.url, "query a filter in Redis: redis://[user:password@]host:port[/db]");
  cmd->add_option("--name", o->redis.name, "with --redis: the filter's name");
  o->bip158.add(*cmd);
  cmd->callback([o, &status] {
    if (!o->redis.url.empty() || !o->redis.name.empty()) {
      std::vector<std::string> args = o->keys;  // with --redis, every positional is a key
      if (!o->file.empty()) args.insert(args.begin(), o->file);
      status = redis_query(o->redis, read_keys(args, {}, o->key_type, false), o->invert, o->count);
      return;
    }
    if (o->file.empty()) throw CLI::RequiredError("file");
    LoadOptions lo{.format = o->format, .extra = {}};
    o->bip158.put(lo.extra);
    auto set = load_path(o->file, lo);
    const KeyList keys = read_keys(o->keys, {}, o->key_type, false);
    const auto views = keys.views();
    std::unique_ptr<bool[]> hit(new bool[views.size() ? views.size() : 1]);
    set->contains_many(views, std::span<bool>(hit.get(), views.size()));
    size_t selected = 0;
    std::string out;
    for (size_t i = 0; i < views.size(); ++i) {
      if (hit[i] == o->invert) continue;
      ++selected;
      if (!o->count) {
        out += keys.text[i];
        out += '\n';
        if (out.size() > (1 << 16)) {
          std::fwrite(out.data(), 1, out.size(), stdout);
          out.clear();
        }
      }
    }
    if (o->count) out = fmt::format("{}\n", selected);
    std::fwrite(out.data(), 1, out.size(), stdout);
    if (std::fflush(stdout) != 0) throw Error(Errc::io, "cannot write standard output");
    status = selected > 0 ? 0 : 1;
  });
}

void add_add(CLI::App& app, int& status) {
  struct Opts {
    std::string file;
    std::vector<std::string> keys;
    KeyType key_type = KeyType::str;
    std::string format = "auto";
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("add", "add keys to a dynamic set; the file is replaced atomically");
  cmd->add_option("file", o->file, "set file")->required();
  cmd->add_option("keys", o->keys, "keys (default: lines of stdin)");
  add_key_type_option(*cmd, o->key_type);
  cmd->add_option("--format", o->format, "file format: auto, amq, guava")->default_val("auto");
  cmd->callback([o, &status] {
    auto set = load_path(o->file, o->format);
    if (!set->is_dynamic())
      throw Error(Errc::unsupported, o->file + ": a " + std::string(kind_name(set->kind())) +
                                         " is static: rebuild it with 'amq build' instead");
    const KeyList keys = read_keys(o->keys, {}, o->key_type, true);
    for (Bytes k : keys.views()) {
      try {
        set->insert(k);
      } catch (const Error& e) {
        throw Error(e.code(), o->file + ": " + e.what() + " (file left unchanged)");
      }
    }
    save_path(o->file, *set);
    status = 0;
  });
}

void add_remove(CLI::App& app, int& status) {
  struct Opts {
    std::string file;
    std::vector<std::string> keys;
    KeyType key_type = KeyType::str;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("remove", "remove keys from a set that can erase; prints the keys not found");
  cmd->add_option("file", o->file, "set file")->required();
  cmd->add_option("keys", o->keys, "keys (default: lines of stdin)");
  add_key_type_option(*cmd, o->key_type);
  cmd->callback([o, &status] {
    auto set = load_path(o->file, "auto");
    if (!set->supports_erase())
      throw Error(Errc::unsupported, o->file + ": a " + std::string(kind_name(set->kind())) + " cannot remove keys");
    const KeyList keys = read_keys(o->keys, {}, o->key_type, true);
    const auto views = keys.views();
    size_t missing = 0;
    for (size_t i = 0; i < views.size(); ++i) {
      if (!set->erase(views[i])) {
        fmt::print("{}\n", keys.text[i]);
        ++missing;
      }
    }
    save_path(o->file, *set);
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

void print_info_json(const SetInfo& i, std::string_view extra) {
  std::string params;
  for (const auto& [k, v] : i.params)
    params += fmt::format("{}\"{}\":\"{}\"", params.empty() ? "" : ",", json_escape(k), json_escape(v));
  fmt::print(
      "{{\"kind\":\"{}\",\"format\":\"{}\",\"params\":{{{}}}{},\"items\":{},\"items_exact\":{},\"bytes\":{},"
      "\"bits_per_key\":{:.4f},\"fpp_expected\":{:.6g}}}\n",
      kind_name(i.kind), json_escape(i.format), params, extra, i.items, i.items_exact ? "true" : "false", i.bytes,
      i.bits_per_key, i.fpp_expected);
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
  cmd->add_option("--format", o->format, "file format: auto, amq, guava")->default_val("auto");
  cmd->add_option("--redis", o->redis.url, "describe a filter in Redis: redis://[user:password@]host:port[/db]");
  cmd->add_option("--name", o->redis.name, "with --redis: the filter's name");
  o->bip158.add(*cmd);
  cmd->callback([o, &status] {
    if (!o->redis.url.empty() || !o->redis.name.empty()) {
      if (!o->file.empty()) throw Error(Errc::invalid_argument, "give either a file or --redis, not both");
      status = redis_info(o->redis, o->json);
      return;
    }
    if (o->file.empty()) throw CLI::RequiredError("file");
    LoadOptions lo{.format = o->format, .extra = {}};
    o->bip158.put(lo.extra);
    const SetInfo i = load_path(o->file, lo)->info();
    if (o->json)
      print_info_json(i);
    else
      print_info_text(i);
    status = 0;
  });
}

}  // namespace amq::cli
