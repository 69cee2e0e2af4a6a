#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "cli.hpp"

namespace amq::cli {

std::vector<Bytes> KeyList::views() const {
  std::vector<Bytes> v;
  v.reserve(text.size());
  const auto& src = bytes.empty() ? text : bytes;
  for (const auto& s : src) v.push_back(as_bytes(s));
  return v;
}

std::string decode_key(const std::string& text, KeyType type) {
  switch (type) {
    case KeyType::unknown:
    case KeyType::str: return text;
    case KeyType::u64: {
      const bool negative = !text.empty() && text[0] == '-';
      const std::string_view digits = std::string_view(text).substr(negative ? 1 : 0);
      if (digits.empty() || digits.size() > 20) throw Error(Errc::invalid_argument, "not a 64-bit decimal key: '" + text + "'");
      unsigned __int128 v = 0;
      for (char c : digits) {
        if (c < '0' || c > '9') throw Error(Errc::invalid_argument, "not a 64-bit decimal key: '" + text + "'");
        v = v * 10 + static_cast<unsigned>(c - '0');
      }
      if (v > (negative ? (unsigned __int128){1} << 63 : UINT64_MAX))
        throw Error(Errc::invalid_argument, "key out of 64-bit range: '" + text + "'");
      const uint64_t x = negative ? ~static_cast<uint64_t>(v) + 1 : static_cast<uint64_t>(v);
      return std::string(reinterpret_cast<const char*>(&x), 8);  // little-endian host
    }
    case KeyType::hex: {
      auto nibble = [&](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        throw Error(Errc::invalid_argument, "not a hex key: '" + text + "'");
      };
      if (text.size() % 2 != 0) throw Error(Errc::invalid_argument, "hex key has an odd number of digits: '" + text + "'");
      std::string out(text.size() / 2, '\0');
      for (size_t i = 0; i < out.size(); ++i)
        out[i] = static_cast<char>(nibble(text[2 * i]) * 16 + nibble(text[2 * i + 1]));
      return out;
    }
  }
  return text;
}

namespace {

void add_lines(KeyList& keys, std::string_view data, const std::string& name, KeyType type, bool progress) {
  size_t line_no = 0;
  while (!data.empty()) {
    const size_t nl = data.find('\n');
    std::string_view line = data.substr(0, nl);
    data = nl == std::string_view::npos ? std::string_view{} : data.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++line_no;
    keys.text.emplace_back(line);
    if (type != KeyType::str) {
      try {
        keys.bytes.push_back(decode_key(keys.text.back(), type));
      } catch (const Error& e) {
        throw Error(e.code(), name + ":" + std::to_string(line_no) + ": " + e.what());
      }
    }
    if (progress && keys.text.size() % (1 << 20) == 0) fmt::print(stderr, "\ramq: read {} keys", keys.text.size());
  }
}

std::string read_stdin() {
  std::string s;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) s.append(buf, n);
  if (std::ferror(stdin)) throw Error(Errc::io, "cannot read standard input");
  return s;
}

}  // namespace

KeyList read_keys(const std::vector<std::string>& args, const std::vector<std::string>& files, KeyType type,
                  bool progress) {
  progress = progress && ::isatty(2);
  KeyList keys;
  if (!args.empty()) {
    for (const auto& a : args) {
      keys.text.push_back(a);
      if (type != KeyType::str) keys.bytes.push_back(decode_key(a, type));
    }
    return keys;
  }
  if (files.empty()) {
    add_lines(keys, read_stdin(), "<stdin>", type, progress);
  } else {
    for (const auto& f : files) {
      if (f == "-") {
        add_lines(keys, read_stdin(), "<stdin>", type, progress);
      } else {
        const auto data = read_file(f);
        add_lines(keys, as_chars(data), f, type, progress);
      }
    }
  }
  if (progress && keys.size() >= (1 << 20)) fmt::print(stderr, "\ramq: read {} keys\n", keys.size());
  return keys;
}

CLI::Option* add_key_type_option(CLI::App& cmd, KeyType& type) {
  return cmd
      .add_option("--key-type", type,
                  "how each key line is read: str (bytes as they are), u64 (decimal, -2^63 to 2^64-1), hex. "
                  "A built set records it, and later commands read its keys by it (default: the set's type, "
                  "else str)")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, KeyType>{{"str", KeyType::str}, {"u64", KeyType::u64}, {"hex", KeyType::hex}}));
}

KeyType resolve_key_type(const std::string& path, KeyType recorded, KeyType given) {
  if (given == KeyType::unknown) return recorded == KeyType::unknown ? KeyType::str : recorded;
  // str and hex are two notations of the same keys, byte strings: either reads a set of
  // the other (hex gives keys no line can hold). A u64 key is another key altogether.
  if (recorded != KeyType::unknown && (recorded == KeyType::u64) != (given == KeyType::u64))
    throw Error(Errc::invalid_argument,
                fmt::format("{}: the set holds {} keys, not {} keys (leave out --key-type to read them as {})", path,
                            key_type_name(recorded), key_type_name(given), key_type_name(recorded)));
  return given;
}

void write_output(const std::string& path, std::span<const std::byte> data) {
  if (path == "-") {
    if (::isatty(1)) throw Error(Errc::invalid_argument, "refusing to write a binary file to a terminal (use -o FILE)");
    if (std::fwrite(data.data(), 1, data.size(), stdout) != data.size() || std::fflush(stdout) != 0)
      throw Error(Errc::io, "cannot write standard output");
    return;
  }
  write_file_atomic(path, data);
}

}  // namespace amq::cli
