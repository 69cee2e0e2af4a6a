#include <fmt/core.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
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
      // The first character that is not a hex digit is named before the length is checked.
      if (const size_t bad = text.find_first_not_of("0123456789abcdefABCDEF"); bad != std::string::npos) {
        const auto c = static_cast<unsigned char>(text[bad]);
        const std::string shown = c >= 0x20 && c < 0x7f ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
        throw Error(Errc::invalid_argument, fmt::format("not a hex key: '{}': character {} ('{}') is not a hex digit",
                                                        text, bad + 1, shown));
      }
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

void for_each_stdin_batch(KeyType type, const std::function<void(const KeyList&)>& batch) {
  constexpr size_t kBatchKeys = 4096;
  KeyList keys;
  size_t line_no = 0;
  auto take = [&](std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++line_no;
    keys.text.emplace_back(line);
    if (type == KeyType::str) return;
    try {
      keys.bytes.push_back(decode_key(keys.text.back(), type));
    } catch (const Error& e) {
      throw Error(e.code(), "<stdin>:" + std::to_string(line_no) + ": " + e.what());
    }
  };
  auto answer = [&] {
    if (keys.size() == 0) return;
    batch(keys);
    keys.text.clear();
    keys.bytes.clear();
  };
  // read(2), not stdio: poll must see whether more input is already waiting.
  std::string pending;
  auto buf = std::make_unique<char[]>(1 << 16);
  for (;;) {
    if (keys.size() > 0) {
      pollfd p{.fd = 0, .events = POLLIN, .revents = 0};
      if (::poll(&p, 1, 0) == 0) answer();  // the producer is slow: answer what we have
    }
    const ssize_t n = ::read(0, buf.get(), 1 << 16);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(Errc::io, std::string("cannot read standard input: ") + std::strerror(errno));
    }
    if (n == 0) break;
    pending.append(buf.get(), static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      take(std::string_view(pending).substr(start, nl - start));
      if (keys.size() >= kBatchKeys) answer();
    }
    pending.erase(0, start);
  }
  if (!pending.empty()) take(pending);
  answer();
}

Error error_in(const Error& e, const std::string& where, std::string_view after) {
  const std::string msg = e.what();
  const bool named = !where.empty() && msg.rfind(where, 0) == 0;
  return Error(e.code(), (named || where.empty() ? msg : where + ": " + msg) + std::string(after));
}

void write_stdout(std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size())
    throw Error(Errc::io, std::string("cannot write standard output: ") + std::strerror(errno));
}

void flush_stdout() {
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    // An earlier write may have failed (ferror) with its errno since overwritten.
    const int err = errno;
    throw Error(Errc::io, err ? std::string("cannot write standard output: ") + std::strerror(err)
                              : std::string("cannot write standard output"));
  }
}

int run_query(const std::vector<std::string>& args, KeyType type, bool invert, bool count, const LookupFn& lookup) {
  if (::isatty(1)) std::setvbuf(stdout, nullptr, _IOLBF, 0);
  uint64_t selected = 0;
  std::string out;
  auto run = [&](const KeyList& keys) {
    const auto views = keys.views();
    auto hit = std::make_unique<bool[]>(views.size());
    lookup(views, std::span<bool>(hit.get(), views.size()));
    for (size_t i = 0; i < views.size(); ++i) {
      if (hit[i] == invert) continue;
      ++selected;
      if (count) continue;
      out += keys.text[i];
      out += '\n';
    }
    write_stdout(out);
    out.clear();
    flush_stdout();
  };
  if (!args.empty())
    run(read_keys(args, {}, type, false));
  else
    for_each_stdin_batch(type, run);
  if (count) write_stdout(fmt::format("{}\n", selected));
  flush_stdout();
  return selected > 0 ? 0 : 1;
}

std::string escape_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  auto hex = [&](unsigned char c) { out += fmt::format("\\x{:02x}", c); };
  for (size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    if (c < 0x20 || c == 0x7f) {
      switch (c) {
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        case 0x1b: out += "\\e"; break;
        default: hex(c);
      }
      ++i;
      continue;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence (no overlong forms, surrogates or C1 controls) is
    // kept; any other byte is escaped on its own.
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      if (c == 0xe0) lo = 0xa0;
      if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      if (c == 0xf0) lo = 0x90;
      if (c == 0xf4) hi = 0x8f;
    }
    bool ok = len > 0 && i + len <= n && p[i + 1] >= lo && p[i + 1] <= hi;
    for (size_t k = 2; ok && k < len; ++k) ok = p[i + k] >= 0x80 && p[i + k] <= 0xbf;
    if (ok && c == 0xc2 && p[i + 1] < 0xa0) ok = false;  // U+0080..U+009F, the C1 controls
    if (!ok) {
      hex(c);
      ++i;
      continue;
    }
    out.append(s.substr(i, len));
    i += len;
  }
  return out;
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
    write_stdout(std::string_view(reinterpret_cast<const char*>(data.data()), data.size()));
    flush_stdout();
    return;
  }
  write_file_atomic(path, data);
}

}  // namespace amq::cli
