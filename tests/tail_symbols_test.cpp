// The tails' symbol table (amq/detail/tail_symbols.hpp): coding and decoding round
// trips on text and on every byte value, equals() against the plain compare, what a
// learnt table holds, and the checks a loader relies on (valid(), valid_codes()).
#include "amq/detail/tail_symbols.hpp"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace amq::detail {
namespace {

struct Table {
  alignas(8) std::array<std::byte, TailSymbols::kBytes> bytes{};
  explicit Table(const std::vector<std::string>& sample) {
    const std::vector<std::string_view> v(sample.begin(), sample.end());
    TailSymbols::train(v, bytes.data());
  }
  TailSymbols view() const { return TailSymbols(bytes.data()); }
};

std::vector<uint8_t> encode(const TailEncoder& e, std::string_view s) {
  std::vector<uint8_t> out(2 * s.size() + 1);
  out.resize(static_cast<size_t>(e.encode(s, out.data()) - out.data()));
  EXPECT_EQ(out.size(), e.size(s));
  return out;
}

std::string decode(const TailSymbols& t, const std::vector<uint8_t>& c) {
  std::string s;
  t.append(c.data(), c.size(), s);
  return s;
}

std::vector<std::string> urls(size_t n, uint64_t seed) {
  static const char* const words[] = {"alpha", "beta", "gamma", "delta", "static", "images", "index", "profile"};
  std::mt19937_64 rng(seed);
  std::vector<std::string> v;
  for (size_t i = 0; i < n; ++i) {
    std::string s = words[rng() % 8];
    for (size_t k = rng() % 3; k-- > 0;) s += std::string("/") + words[rng() % 8];
    v.push_back(s + (rng() % 2 ? ".html" : ".png"));
  }
  return v;
}

TEST(TailSymbols, RoundTripsAndShrinksText) {
  const auto sample = urls(3000, 1);
  const Table table(sample);
  ASSERT_TRUE(TailSymbols::valid(table.bytes.data()));
  const TailSymbols t = table.view();
  const TailEncoder enc(table.bytes.data());
  size_t raw = 0, coded = 0;
  for (const std::string& s : urls(3000, 2)) {  // other strings of the same kind
    const auto c = encode(enc, s);
    ASSERT_TRUE(t.valid_codes(c.data(), c.size()));
    ASSERT_EQ(decode(t, c), s);
    ASSERT_TRUE(t.equals(c.data(), c.size(), reinterpret_cast<const uint8_t*>(s.data()), s.size()));
    raw += s.size();
    coded += c.size();
  }
  // Words of 4-7 letters, '/', ".html": a few long symbols cover most bytes.
  EXPECT_LT(coded * 3, raw);
  // Frequent strings became symbols of several bytes.
  bool html = false;
  for (size_t c = 0; c < TailSymbols::kCodes; ++c) {
    const uint8_t code = static_cast<uint8_t>(c);
    const uint64_t w = t.symbol(code);
    const std::string s(reinterpret_cast<const char*>(&w), t.length(code));
    html |= s.find("html") != std::string::npos;
  }
  EXPECT_TRUE(html);
}

// A learnt table weighs a one-byte symbol by the code bytes it saves over escaping its
// byte (two a use), not by the bytes it covers (one): here 200 bytes seen 10 times
// each alone and 100 pairs of ten letters seen 6 times each. Keeping the ten letters,
// every byte (10 saved each) and 45 pairs (6 each) codes the sample in 2930 bytes;
// counting covered bytes kept the 100 pairs (12 covered each) before the bytes and
// left some 50 bytes to be escaped: 3050.
TEST(TailSymbols, SingleBytesWeighedByTheEscapesTheySave) {
  std::vector<std::string> sample;
  for (int b = 0; b < 200; ++b)
    for (int k = 0; k < 10; ++k) sample.emplace_back(1, static_cast<char>(b < 144 ? 0x70 + b : 0x01 + (b - 144)));
  for (int p = 0; p < 100; ++p)
    for (int k = 0; k < 6; ++k) sample.push_back(std::string{static_cast<char>('a' + p / 10), static_cast<char>('a' + p % 10)});
  const Table table(sample);
  const TailEncoder enc(table.bytes.data());
  size_t coded = 0;
  for (const std::string& s : sample) coded += encode(enc, s).size();
  EXPECT_EQ(coded, 2930u);
}

// Bytes the table never saw are escaped; every byte value, empty strings and strings
// longer than any symbol round-trip.
TEST(TailSymbols, EveryByteValueAndUnseenBytes) {
  const Table table({"aaaa", "abab", "hello", "hello"});
  const TailSymbols t = table.view();
  const TailEncoder enc(table.bytes.data());
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  std::mt19937_64 rng(3);
  std::vector<std::string> cases = {"", all, std::string(1000, 'a'), "hellohellohello", std::string(1, '\xff'),
                                    std::string(3, '\0')};
  for (int i = 0; i < 300; ++i) {
    std::string s(rng() % 40, '\0');
    for (char& ch : s) ch = static_cast<char>(rng() % 2 ? "ab\xffhelo"[rng() % 7] : static_cast<char>(rng()));
    cases.push_back(s);
  }
  for (const std::string& s : cases) {
    const auto c = encode(enc, s);
    ASSERT_TRUE(t.valid_codes(c.data(), c.size()));
    ASSERT_EQ(decode(t, c), s);
  }
  // The escape codes a byte as two.
  EXPECT_EQ(encode(enc, "\x01").size(), 2u);
  EXPECT_EQ(encode(enc, "").size(), 0u);
}

// equals() answers as a plain compare of the decoded string, for strings that differ
// in one byte, are cut short, run on, or match a symbol only in part.
// A table learnt from 500 URL-like strings, with its view and its encoder.
struct UrlTable {
  Table table{urls(500, 4)};
  TailSymbols t = table.view();
  TailEncoder enc{table.bytes.data()};
};

TEST(TailSymbols, EqualsIsThePlainCompare) {
  const UrlTable u{};
  const TailSymbols& t = u.t;
  const TailEncoder& enc = u.enc;
  std::mt19937_64 rng(5);
  for (const std::string& s : urls(400, 6)) {
    const auto c = encode(enc, s);
    std::vector<std::string> others = {s, s.substr(0, s.size() - 1), s + "x", s + ".html", "", s.substr(1)};
    std::string changed = s;
    changed[rng() % s.size()] ^= static_cast<char>(1 + rng() % 255);
    others.push_back(changed);
    others.push_back(s.substr(0, rng() % s.size()));
    for (const std::string& o : others) {
      // the probe in a buffer of its own size, so a read past it is an ASan error
      std::vector<uint8_t> buf(o.begin(), o.end());
      ASSERT_EQ(t.equals(c.data(), c.size(), buf.data(), buf.size()), o == s) << s << " vs " << o;
    }
  }
}

// compare() orders a coding's bytes against a probe as std::string does (unsigned
// bytes, a prefix first), for probes equal, cut short, run on, changed in one byte
// either way, or empty; and escapes (bytes the table lacks) among the codes.
TEST(TailSymbols, CompareIsThePlainOrder) {
  const UrlTable u{};
  const TailSymbols& t = u.t;
  const TailEncoder& enc = u.enc;
  std::mt19937_64 rng(15);
  auto sign = [](int x) { return (x > 0) - (x < 0); };
  std::vector<std::string> strings = urls(300, 16);
  strings.push_back(std::string("\x01\xfe\x80") + "index.html\xff");
  strings.push_back("");
  for (const std::string& s : strings) {
    const auto c = encode(enc, s);
    std::vector<std::string> others = {s, s + "x", s + std::string(1, '\0'), "", "\xff"};
    if (!s.empty()) {
      others.push_back(s.substr(0, s.size() - 1));
      others.push_back(s.substr(0, rng() % s.size()));
      for (int up = 0; up < 2; ++up) {
        std::string changed = s;
        char& b = changed[rng() % s.size()];
        b = static_cast<char>(static_cast<uint8_t>(b) + (up ? 1 : -1));
        others.push_back(changed);
      }
    }
    for (const std::string& o : others) {
      std::vector<uint8_t> buf(o.begin(), o.end());  // its own size: ASan sees a read past it
      const std::string_view sv(s), ov(o);
      ASSERT_EQ(sign(t.compare(c.data(), c.size(), buf.data(), buf.size())), sign(sv.compare(ov)))
          << s << " vs " << o;
    }
  }
}

TEST(TailSymbols, ValidRejectsBadTables) {
  const Table table(urls(200, 7));
  ASSERT_TRUE(TailSymbols::valid(table.bytes.data()));
  {
    Table bad = table;
    bad.bytes[TailSymbols::kEscape] = std::byte{1};  // the escape given a length
    EXPECT_FALSE(TailSymbols::valid(bad.bytes.data()));
  }
  {
    Table bad = table;
    bad.bytes[0] = std::byte{9};  // longer than a word
    EXPECT_FALSE(TailSymbols::valid(bad.bytes.data()));
  }
  {
    Table bad = table;
    // a byte past the length of a symbol shorter than 8 bytes
    size_t c = 0;
    while (c < TailSymbols::kCodes && (bad.view().length(static_cast<uint8_t>(c)) == 0 ||
                                       bad.view().length(static_cast<uint8_t>(c)) == 8))
      ++c;
    ASSERT_LT(c, TailSymbols::kCodes);
    bad.bytes[256 + 8 * c + static_cast<size_t>(bad.bytes[c])] = std::byte{'x'};
    EXPECT_FALSE(TailSymbols::valid(bad.bytes.data()));
  }
  {
    Table bad = table;
    bad.bytes[5] = std::byte{0};  // a symbol made unused: its bytes are no longer padding
    EXPECT_FALSE(TailSymbols::valid(bad.bytes.data()));
  }
}

TEST(TailSymbols, ValidCodesRejectsUnusedCodesAndALoneEscape) {
  const Table table({"ab", "ab", "cd"});  // a table with few symbols: most codes unused
  const TailSymbols t = table.view();
  uint8_t unused = 0;
  while (t.length(unused) != 0) ++unused;
  uint8_t used = 0;
  while (t.length(used) == 0) ++used;
  const uint8_t esc = TailSymbols::kEscape;
  const std::vector<std::vector<uint8_t>> bad = {{unused}, {used, unused}, {esc}, {used, esc}};
  for (const auto& c : bad) EXPECT_FALSE(t.valid_codes(c.data(), c.size()));
  const std::vector<std::vector<uint8_t>> good = {{}, {used}, {esc, esc}, {esc, 0, used}};
  for (const auto& c : good) EXPECT_TRUE(t.valid_codes(c.data(), c.size()));
}

}  // namespace
}  // namespace amq::detail
