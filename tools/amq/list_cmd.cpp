// amq list: the keys of a succinct set in order, optionally restricted to a prefix
// and a range [--from, --to). The file is memory-mapped and read in place.
#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "amq/error.hpp"
#include "amq/succinct_set.hpp"
#include "cli.hpp"

namespace amq::cli {
namespace {

// A set that records u64 keys keeps them big-endian (so they sort numerically); one
// that records no key type, written before the type was recorded, little-endian.
std::string u64_bytes(std::string key, bool big_endian) {
  if (big_endian) std::reverse(key.begin(), key.end());
  return key;
}

std::string encode_key(std::string_view key, KeyType type, bool big_endian) {
  switch (type) {
    case KeyType::unknown:
    case KeyType::str: return std::string(key);
    case KeyType::hex: {
      std::string out;
      out.reserve(2 * key.size());
      for (unsigned char c : key) out += fmt::format("{:02x}", c);
      return out;
    }
    case KeyType::u64: {
      if (key.size() != 8)
        throw Error(Errc::invalid_argument, "a key of " + std::to_string(key.size()) + " bytes is not a u64 key");
      uint64_t v;
      std::memcpy(&v, u64_bytes(std::string(key), big_endian).data(), 8);
      return std::to_string(v);
    }
  }
  return std::string(key);
}

}  // namespace

void add_list(CLI::App& app, int& status) {
  struct Opts {
    std::string file, prefix, from, to;
    bool count = false;
    KeyType key_type = KeyType::unknown;  // unknown: not given
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("list", "print the keys of a succinct set in order, one a line; exit 0 if any");
  cmd->add_option("file", o->file, "succinct set file")->required();
  auto* prefix = cmd->add_option("--prefix", o->prefix, "only keys starting with this");
  auto* from = cmd->add_option("--from", o->from, "only keys >= this");
  auto* to = cmd->add_option("--to", o->to, "only keys < this");
  cmd->add_flag("-c,--count", o->count, "print only the number of keys selected");
  add_key_type_option(*cmd, o->key_type);
  cmd->callback([o, prefix, from, to, &status] {
    note_open_file(o->file);
    const SuccinctSet set = in_context(o->file, [&] { return SuccinctSet::open(o->file); });
    const KeyType recorded = container_key_type(set.bytes());
    const KeyType type = resolve_key_type(o->file, recorded, o->key_type);
    const bool big_endian = recorded == KeyType::u64;
    const auto decode = [&](const std::string& text) {
      std::string key = decode_key(text, type);
      return type == KeyType::u64 ? u64_bytes(std::move(key), big_endian) : key;
    };
    const std::string p = *prefix ? decode(o->prefix) : std::string();
    std::optional<std::string> lo, hi;
    if (*from) lo = decode(o->from);
    if (*to) hi = decode(o->to);
    uint64_t selected = 0;
    std::string out;
    for (std::string_view k : set.scan(p, lo, hi)) {
      ++selected;
      if (o->count) continue;
      out += encode_key(k, type, big_endian);
      out += '\n';
      if (out.size() > (1 << 16)) {
        write_stdout(out);
        out.clear();
      }
    }
    if (o->count) out = fmt::format("{}\n", selected);
    write_stdout(out);
    flush_stdout();
    status = selected > 0 ? 0 : 1;
  });
}

}  // namespace amq::cli
