// The Golomb coding against outside vectors: the seed's worked example (MD5, 26 words,
// 197 bits), BIP158 testnet filters and headers, HTTP Cache Digests, SipHash-2-4.
#include <gtest/gtest.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <variant>

#include "amq/detail/bit_stream.hpp"
#include "amq/detail/golomb_code.hpp"
#include "amq/detail/siphash.hpp"
#include "amq/any_set.hpp"
#include "amq/error.hpp"
#include "amq/golomb_coded_set.hpp"
#include "format_registry.hpp"
#include "test_util.hpp"

extern "C" void amq_formats_register();  // src/any_cache_digest.cpp

namespace {

using amq::Bytes;
using amq::Errc;

std::vector<std::byte> from_hex(std::string_view hex) {
  std::vector<std::byte> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<std::byte>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

std::string to_hex(std::span<const std::byte> b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (std::byte x : b) {
    s += d[static_cast<uint8_t>(x) >> 4];
    s += d[static_cast<uint8_t>(x) & 15];
  }
  return s;
}

std::vector<std::byte> digest(const EVP_MD* md, std::span<const std::byte> data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EXPECT_EQ(EVP_Digest(data.data(), data.size(), out, &len, md, nullptr), 1);
  return {reinterpret_cast<std::byte*>(out), reinterpret_cast<std::byte*>(out) + len};
}

std::vector<std::byte> sha256d(std::span<const std::byte> data) {
  return digest(EVP_sha256(), digest(EVP_sha256(), data));
}

template <class Code>
void expect_errc(Errc code, Code&& f) {
  try {
    f();
    ADD_FAILURE() << "no amq::Error thrown";
  } catch (const amq::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
  }
}

// ---- SipHash-2-4 ------------------------------------------------------------------

// The reference outputs for key 00 01 .. 0f and message 00 01 .. (len - 1), as the
// 8 output bytes (the little-endian 64-bit result); checked against `openssl mac SIPHASH`.
TEST(SipHash, ReferenceVectors) {
  const std::pair<size_t, const char*> vectors[] = {
      {0, "310e0edd47db6f72"},  {1, "fd67dc93c539f874"}, {2, "5a4fa9d909806c0d"}, {3, "2d7efbd796666785"},
      {7, "37d1018bf50002ab"},  {8, "6224939a79f5f593"}, {15, "e545be4961ca29a1"}, {63, "724506eb4c328a95"},
  };
  std::vector<std::byte> msg;
  for (int i = 0; i < 64; ++i) msg.push_back(static_cast<std::byte>(i));
  const uint64_t k0 = 0x0706050403020100ULL, k1 = 0x0f0e0d0c0b0a0908ULL;
  for (const auto& [len, hex] : vectors) {
    const uint64_t h = amq::detail::siphash24(k0, k1, std::span(msg).first(len));
    std::vector<std::byte> out(8);
    std::memcpy(out.data(), &h, 8);
    EXPECT_EQ(to_hex(out), hex) << "message length " << len;
  }
}

// Agrees with OpenSSL's SIPHASH MAC (8-byte output, 2-4 rounds) on random inputs.
TEST(SipHash, MatchesOpenSsl) {
  EVP_MAC* mac = EVP_MAC_fetch(nullptr, "SIPHASH", nullptr);
  if (!mac) GTEST_SKIP() << "this OpenSSL has no SIPHASH MAC";
  std::mt19937_64 rng(5);
  for (int t = 0; t < 300; ++t) {
    std::vector<std::byte> key(16), msg(rng() % 70);
    for (auto& b : key) b = static_cast<std::byte>(rng());
    for (auto& b : msg) b = static_cast<std::byte>(rng());
    EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
    size_t size = 8;
    OSSL_PARAM params[] = {OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &size), OSSL_PARAM_construct_end()};
    ASSERT_EQ(EVP_MAC_init(ctx, reinterpret_cast<unsigned char*>(key.data()), 16, params), 1);
    ASSERT_EQ(EVP_MAC_update(ctx, reinterpret_cast<unsigned char*>(msg.data()), msg.size()), 1);
    unsigned char out[16];
    size_t out_len = 0;
    ASSERT_EQ(EVP_MAC_final(ctx, out, &out_len, sizeof out), 1);
    EVP_MAC_CTX_free(ctx);
    ASSERT_EQ(out_len, 8u);
    uint64_t expected;
    std::memcpy(&expected, out, 8);
    const auto p = amq::Bip158Params::from_key(key);
    EXPECT_EQ(amq::detail::siphash24(p.k0, p.k1, msg), expected);
  }
  EVP_MAC_free(mac);
}

// ---- the bit stream and Golomb code -------------------------------------------------

TEST(BitStream, MsbFirstAndChecked) {
  amq::detail::BitWriter w;
  w.put(0b101, 3);
  w.put_run(true, 4);
  w.put(0xabcdef0123456789ULL, 64);
  w.put_run(false, 70);
  w.put_bit(true);
  const uint64_t bits = w.bit_size();
  EXPECT_EQ(bits, 3u + 4 + 64 + 70 + 1);
  const auto bytes = w.take();
  EXPECT_EQ(bytes.size(), (bits + 7) / 8);
  EXPECT_EQ(static_cast<uint8_t>(bytes[0]), 0xbf);  // 101, 1111, then the value's top bit 1
  amq::detail::BitReader r(bytes, 0, bits);
  EXPECT_EQ(r.get(3), 5u);
  EXPECT_EQ(r.get_run(true), 5u);  // four 1s and the value's leading 1, ended by its 0
  EXPECT_EQ(r.get(62), 0xabcdef0123456789ULL & ((uint64_t{1} << 62) - 1));
  EXPECT_EQ(r.get_run(false), 70u);
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_TRUE(r.rest_is_zero());
}

TEST(BitStream, ReaderRoundTripAndTruncation) {
  std::mt19937_64 rng(1);
  std::vector<std::pair<uint64_t, unsigned>> items;
  amq::detail::BitWriter w;
  for (int i = 0; i < 5000; ++i) {
    const unsigned n = static_cast<unsigned>(rng() % 65);
    const uint64_t v = n == 64 ? rng() : (rng() & ((uint64_t{1} << n) - 1));
    items.emplace_back(v, n);
    w.put(v, n);
  }
  const uint64_t bits = w.bit_size();
  const auto bytes = w.take();
  amq::detail::BitReader r(bytes, 0, bits);
  for (const auto& [v, n] : items) ASSERT_EQ(r.get(n), v);
  EXPECT_EQ(r.remaining(), 0u);
  expect_errc(Errc::truncated, [&] { r.get(1); });
  expect_errc(Errc::truncated, [&] { r.get_run(true); });
}

TEST(GolombCode, RoundTripAllDivisorsAndStyles) {
  std::mt19937_64 rng(2);
  for (uint64_t d : {1ULL, 2ULL, 3ULL, 5ULL, 64ULL, 100ULL, 177ULL, 178ULL, 784931ULL, 1ULL << 19, (1ULL << 40) + 7}) {
    for (bool ones : {true, false}) {
      const amq::detail::GolombCode code(d, ones);
      amq::detail::BitWriter w;
      std::vector<uint64_t> vals;
      uint64_t expected_bits = 0;
      for (int i = 0; i < 2000; ++i) {
        const uint64_t v = rng() % (d * 5 + 3);
        vals.push_back(v);
        code.encode(w, v);
        expected_bits += code.code_length(v);
      }
      ASSERT_EQ(w.bit_size(), expected_bits);
      const uint64_t bits = w.bit_size();
      const auto bytes = w.take();
      amq::detail::BitReader r(bytes, 0, bits);
      for (uint64_t v : vals) ASSERT_EQ(code.decode(r), v) << "divisor " << d;
      EXPECT_EQ(r.remaining(), 0u);
    }
  }
}

// Truncated binary: divisor 5 has c = 3, u = 3: remainders 0..2 in 2 bits, 3..4 as 6..7.
TEST(GolombCode, TruncatedBinaryRemainders) {
  const amq::detail::GolombCode code(5);
  EXPECT_EQ(code.remainder_bits(), 3u);
  EXPECT_EQ(code.cutoff(), 3u);
  amq::GolombCoding c{.divisor = 5, .unary_ones = true, .gaps = amq::GapRule::keep_duplicates};
  const std::vector<uint64_t> v = {2, 2 + 3, 5 + 4, 9 + 7};  // gaps 2, 3, 4, 7
  EXPECT_EQ(amq::golomb_encode(v, c).to_string(), std::string("0") + "10" + "0" + "110" + "0" + "111" + "10" + "10");
}

TEST(GolombCoding, OptimalParameters) {
  // BIP158 picked P = 19 for M = 784931 = 1.497 * 2^19.
  EXPECT_EQ(amq::optimal_rice_bits(784931), 19u);
  // The smallest d with theta^d + theta^(d+1) <= 1, theta = 1 - 1/256: 177.
  EXPECT_EQ(amq::optimal_golomb_divisor(256), 177u);
  // The closed form agrees with a direct sum over the geometric distribution.
  for (uint64_t d : {64ULL, 128ULL, 177ULL, 256ULL}) {
    const amq::detail::GolombCode code(d);
    double sum = 0;
    const double p = 1.0 / 256;
    for (uint64_t g = 0; g < 20000; ++g) sum += std::pow(1 - p, static_cast<double>(g)) * p * static_cast<double>(code.code_length(g));
    EXPECT_NEAR(amq::expected_golomb_bits(256, d), sum, 1e-6) << d;
  }
  EXPECT_LT(amq::expected_golomb_bits(256, 177), amq::expected_golomb_bits(256, 128));
  EXPECT_LT(amq::expected_golomb_bits(256, 177), amq::expected_golomb_bits(256, 256));
}

TEST(GolombCoding, EncodeDecodeEveryGapRule) {
  std::mt19937_64 rng(3);
  for (auto rule : {amq::GapRule::keep_duplicates, amq::GapRule::skip_duplicates, amq::GapRule::minus_one}) {
    for (uint64_t d : {1ULL, 7ULL, 64ULL, 200ULL}) {
      std::vector<uint64_t> v(3000);
      for (auto& x : v) x = rng() % 200000;
      std::sort(v.begin(), v.end());
      const amq::GolombCoding c{.divisor = d, .unary_ones = rule != amq::GapRule::minus_one, .gaps = rule};
      const auto bits = amq::golomb_encode(v, c);
      std::vector<uint64_t> expect = v;
      if (rule != amq::GapRule::keep_duplicates) expect.erase(std::unique(expect.begin(), expect.end()), expect.end());
      EXPECT_EQ(bits.count, expect.size());
      const auto back = amq::golomb_decode(bits.bytes, 0, bits.bits, bits.count, c);
      EXPECT_EQ(back, expect);
      if (!c.unary_ones) {
        EXPECT_EQ(amq::golomb_decode(bits.bytes, 0, bits.bytes.size() * 8, std::nullopt, c), expect);
      }
    }
  }
  const std::vector<uint64_t> unsorted = {5, 3};
  expect_errc(Errc::invalid_argument, [&] { amq::golomb_encode(unsorted, {}); });
}

// ---- seed 000: the worked example -----------------------------------------------------

// The seed hashes a word to the last 8 hex digits of its MD5, as an integer, mod N·P.
uint64_t seed_hash(std::string_view word, uint64_t n, uint64_t p) {
  const auto md = digest(EVP_md5(), amq::as_bytes(word));
  uint64_t v = 0;
  for (int i = 12; i < 16; ++i) v = (v << 8) | static_cast<uint8_t>(md[i]);
  return v % (n * p);
}

TEST(SeedExample, HashesGapsAndBits) {
  const std::vector<std::string> words = {"alpha", "bravo",  "charlie", "delta", "echo",    "foxtrot", "golf",
                                          "hotel", "india",  "juliet",  "kilo",  "lima",    "mike",    "november",
                                          "oscar", "papa",   "quebec",  "romeo", "sierra",  "tango",   "uniform",
                                          "victor", "whiskey", "xray",  "yankee", "zulu"};
  const uint64_t n = words.size(), p = 64;
  ASSERT_EQ(n, 26u);
  // The seed's hash list, in word order.
  const std::vector<uint64_t> expected_hashes = {1017, 591, 1207, 151, 1393, 1005, 526,  208,  461,
                                                 1378, 1231, 192, 1630, 1327, 997,  662,  806,  1627,
                                                 866,  890,  1134, 269, 512,  831,  1418, 1525};
  std::vector<uint64_t> hashes;
  for (const auto& w : words) hashes.push_back(seed_hash(w, n, p));
  EXPECT_EQ(hashes, expected_hashes);
  EXPECT_EQ(seed_hash("apple", n, p), 1535u);  // the seed's absent example

  std::sort(hashes.begin(), hashes.end());
  // The seed's gap list: the first value as it is, then the differences.
  const std::vector<uint64_t> expected_gaps = {151, 41, 16, 61, 192, 51, 14, 65, 71,  144, 25, 35, 24,
                                               107, 8,  12, 117, 73, 24, 96, 51, 15, 25,  107, 102, 3};
  std::vector<uint64_t> gaps = {hashes[0]};
  for (size_t i = 1; i < hashes.size(); ++i)
    if (hashes[i] != hashes[i - 1]) gaps.push_back(hashes[i] - hashes[i - 1]);
  EXPECT_EQ(gaps, expected_gaps);

  // The seed's 197 bits: unary quotient of 1s ended by a 0, then 6 remainder bits.
  const std::string expected_bits =
      "11001011" "10101001" "00100000" "11110111" "10000000" "01100110" "00111010" "00000110"
      "00011111" "00100000" "01100101" "00011001" "10001010" "10110001" "00000011" "00101101"
      "01100010" "01001100" "01010000" "00110011" "00011110" "01100110" "10101110" "10011000" "00011";
  ASSERT_EQ(expected_bits.size(), 197u);
  const amq::GolombCoding coding{.divisor = p, .unary_ones = true, .gaps = amq::GapRule::skip_duplicates};
  const amq::BitString bits = amq::golomb_encode(hashes, coding);
  EXPECT_EQ(bits.bits, 197u);
  EXPECT_EQ(bits.to_string(), expected_bits);
  EXPECT_EQ(bits.bytes.size(), 25u);  // "197 bits, 25 bytes"
  // Each code as the seed's table lists it: 151 = 110 010111, 192 = 1110 000000.
  EXPECT_EQ(expected_bits.substr(0, 9), "110010111");
  // And back.
  EXPECT_EQ(amq::golomb_decode(bits.bytes, 0, bits.bits, 26, coding), hashes);
}

// ---- BIP158 -----------------------------------------------------------------------------

// A minimal JSON reader for the vector file: arrays, strings, integers.
struct Json {
  std::variant<std::string, int64_t, std::vector<Json>> v;
  const std::string& str() const { return std::get<std::string>(v); }
  int64_t num() const { return std::get<int64_t>(v); }
  const std::vector<Json>& arr() const { return std::get<std::vector<Json>>(v); }
};

Json parse_json(std::string_view& s) {
  auto skip = [&] {
    while (!s.empty() && (s[0] == ' ' || s[0] == '\n' || s[0] == '\r' || s[0] == '\t')) s.remove_prefix(1);
  };
  skip();
  if (s.empty()) throw std::runtime_error("json: unexpected end");
  if (s[0] == '[') {
    s.remove_prefix(1);
    std::vector<Json> items;
    skip();
    if (!s.empty() && s[0] == ']') {
      s.remove_prefix(1);
      return {items};
    }
    for (;;) {
      items.push_back(parse_json(s));
      skip();
      if (s.empty()) throw std::runtime_error("json: unterminated array");
      if (s[0] == ',') {
        s.remove_prefix(1);
        continue;
      }
      if (s[0] == ']') {
        s.remove_prefix(1);
        return {items};
      }
      throw std::runtime_error("json: bad array");
    }
  }
  if (s[0] == '"') {
    std::string out;
    size_t i = 1;
    for (; i < s.size() && s[i] != '"'; ++i) {
      if (s[i] == '\\') ++i;
      out += s[i];
    }
    s.remove_prefix(i + 1);
    return {out};
  }
  size_t i = 0;
  while (i < s.size() && (s[i] == '-' || (s[i] >= '0' && s[i] <= '9'))) ++i;
  if (i == 0) throw std::runtime_error("json: unexpected character");
  const int64_t v = std::stoll(std::string(s.substr(0, i)));
  s.remove_prefix(i);
  return {v};
}

// Reads a serialized block: its header and, per transaction, the output scripts.
struct Block {
  std::vector<std::byte> header;
  std::vector<std::vector<std::byte>> output_scripts;
};

Block parse_block(std::span<const std::byte> b) {
  size_t pos = 0;
  auto take = [&](size_t n) {
    if (pos + n > b.size()) throw std::runtime_error("block truncated");
    auto s = b.subspan(pos, n);
    pos += n;
    return s;
  };
  auto compact = [&] { return amq::read_compact_size(b, pos); };
  Block blk;
  const auto h = take(80);
  blk.header.assign(h.begin(), h.end());
  const uint64_t txs = compact();
  for (uint64_t t = 0; t < txs; ++t) {
    take(4);  // version
    bool witness = false;
    if (pos + 1 < b.size() && b[pos] == std::byte{0} && b[pos + 1] == std::byte{1}) {
      witness = true;
      take(2);
    }
    const uint64_t ins = compact();
    for (uint64_t i = 0; i < ins; ++i) {
      take(36);
      take(compact());
      take(4);
    }
    const uint64_t outs = compact();
    for (uint64_t o = 0; o < outs; ++o) {
      take(8);
      const auto script = take(compact());
      blk.output_scripts.emplace_back(script.begin(), script.end());
    }
    if (witness)
      for (uint64_t i = 0; i < ins; ++i) {
        const uint64_t items = compact();
        for (uint64_t k = 0; k < items; ++k) take(compact());
      }
    take(4);  // lock time
  }
  if (pos != b.size()) throw std::runtime_error("bytes after the last transaction");
  return blk;
}

std::vector<std::byte> reversed(std::vector<std::byte> v) {
  std::reverse(v.begin(), v.end());
  return v;
}

TEST(Bip158, TestnetVectorsFiltersAndHeaders) {
  AMQ_REQUIRE_SHARED("vectors/bip158/testnet-19.json");
  std::ifstream in(amq::test::shared_dir() / "vectors/bip158/testnet-19.json");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::string_view sv = text;
  const Json doc = parse_json(sv);
  ASSERT_GE(doc.arr().size(), 11u);
  int checked = 0;
  for (size_t row = 1; row < doc.arr().size(); ++row) {
    const auto& r = doc.arr()[row].arr();
    ASSERT_EQ(r.size(), 8u);
    SCOPED_TRACE("block " + std::to_string(r[0].num()) + " (" + r[7].str() + ")");
    const auto block_bytes = from_hex(r[2].str());
    const Block blk = parse_block(block_bytes);
    // The block hash is the double SHA-256 of the header; JSON shows it byte-reversed.
    const auto block_hash = sha256d(blk.header);
    ASSERT_EQ(to_hex(reversed(block_hash)), r[1].str());
    // BIP158 basic filter elements: output scripts but empty and OP_RETURN ones, and
    // the scripts of the outputs spent (empty ones skipped); repeats count once.
    std::vector<std::vector<std::byte>> elements;
    for (const auto& s : blk.output_scripts)
      if (!s.empty() && s[0] != std::byte{0x6a}) elements.push_back(s);
    for (const auto& prev : r[3].arr()) {
      auto s = from_hex(prev.str());
      if (!s.empty()) elements.push_back(std::move(s));
    }
    std::vector<Bytes> views;
    for (const auto& e : elements) views.push_back(e);
    // SipHash key: the first 16 bytes of the block hash, internal byte order.
    const auto params = amq::Bip158Params::from_key(std::span(block_hash).first(16));
    const auto filter = amq::Bip158Filter::build(views, params);
    EXPECT_EQ(to_hex(filter), r[5].str());
    // Filter header = dSHA256(dSHA256(filter) || previous header), shown reversed.
    auto pre = sha256d(filter);
    const auto prev_header = reversed(from_hex(r[4].str()));
    pre.insert(pre.end(), prev_header.begin(), prev_header.end());
    EXPECT_EQ(to_hex(reversed(sha256d(pre))), r[6].str());
    // Parsing the expected filter finds every element; contains_many agrees.
    const auto parsed = amq::Bip158Filter::parse(from_hex(r[5].str()), params);
    std::set<std::string> distinct;
    for (const auto& e : elements) distinct.insert(to_hex(e));
    EXPECT_EQ(parsed.size(), distinct.size());
    for (Bytes e : views) EXPECT_TRUE(parsed.contains(e));
    std::unique_ptr<bool[]> out(new bool[views.size() + 1]);
    EXPECT_EQ(parsed.contains_many(views, std::span<bool>(out.get(), views.size())), views.size());
    if (!views.empty()) {
      EXPECT_TRUE(parsed.match_any(views));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 10);
}

TEST(Bip158, ParseRejectsMalformedFilters) {
  const auto params = amq::Bip158Params::from_hex_key("000102030405060708090a0b0c0d0e0f");
  std::vector<std::string> keys = amq::test::random_keys(500, 9);
  std::vector<Bytes> views;
  for (const auto& k : keys) views.push_back(amq::as_bytes(k));
  const auto good = amq::Bip158Filter::build(views, params);
  const auto f = amq::Bip158Filter::parse(good, params);
  EXPECT_EQ(f.size(), 500u);
  for (Bytes k : views) EXPECT_TRUE(f.contains(k));
  const std::set<std::string> members(keys.begin(), keys.end());
  size_t fp = 0;
  for (const auto& k : amq::test::random_keys(20000, 10)) fp += !members.count(k) && f.contains(amq::as_bytes(k));
  EXPECT_LT(fp, 20u);  // expected 20000 / 784931 ~ 0.03
  // Truncated anywhere: an error, never a crash.
  for (size_t n = 0; n < good.size(); ++n) {
    try {
      (void)amq::Bip158Filter::parse(std::span(good).first(n), params);
      ADD_FAILURE() << "accepted a filter truncated to " << n << " bytes";
    } catch (const amq::Error& e) {
      EXPECT_TRUE(e.code() == Errc::truncated || e.code() == Errc::corrupt) << e.what();
    }
  }
  auto extra = good;
  extra.push_back(std::byte{0});
  expect_errc(Errc::corrupt, [&] { amq::Bip158Filter::parse(extra, params); });
  // A huge N in a tiny filter is refused before anything is allocated by it.
  const std::vector<std::byte> huge = {std::byte{0xff}, std::byte{0xff}, std::byte{0xff}, std::byte{0xff},
                                       std::byte{0xff}, std::byte{0xff}, std::byte{0xff}, std::byte{0xff},
                                       std::byte{0x7f}, std::byte{0}};
  expect_errc(Errc::truncated, [&] { amq::Bip158Filter::parse(huge, params); });
  // Non-canonical CompactSize.
  const std::vector<std::byte> noncanon = {std::byte{0xfd}, std::byte{0x01}, std::byte{0x00}};
  expect_errc(Errc::corrupt, [&] { amq::Bip158Filter::parse(noncanon, params); });
  expect_errc(Errc::invalid_argument, [] { amq::Bip158Params::from_hex_key("0011"); });
  expect_errc(Errc::invalid_argument, [] { amq::Bip158Params::from_hex_key("zz0102030405060708090a0b0c0d0e0f"); });
  // The empty filter is the single byte 0.
  EXPECT_EQ(amq::Bip158Filter::build({}, params), std::vector<std::byte>{std::byte{0}});
  EXPECT_FALSE(amq::Bip158Filter::parse(std::vector<std::byte>{std::byte{0}}, params).contains(views[0]));
}

TEST(Bip158, CompactSize) {
  for (uint64_t v : {0ULL, 1ULL, 0xfcULL, 0xfdULL, 0xffffULL, 0x10000ULL, 0xffffffffULL, 0x100000000ULL, ~0ULL}) {
    std::vector<std::byte> out;
    amq::write_compact_size(out, v);
    EXPECT_EQ(out.size(), v < 0xfd ? 1u : v <= 0xffff ? 3u : v <= 0xffffffff ? 5u : 9u);
    size_t pos = 0;
    EXPECT_EQ(amq::read_compact_size(out, pos), v);
    EXPECT_EQ(pos, out.size());
  }
}

// ---- HTTP Cache Digests ------------------------------------------------------------------

TEST(CacheDigest, DraftExampleAeLA) {
  const auto bytes = amq::base64url_decode("AeLA");
  EXPECT_EQ(to_hex(bytes), "01e2c0");
  const auto d = amq::CacheDigest::parse(bytes);
  EXPECT_EQ(d.log2_n(), 0u);
  EXPECT_EQ(d.log2_p(), 7u);
  EXPECT_EQ(d.values(), std::vector<uint64_t>{0x0b});
  EXPECT_TRUE(d.contains_value(0x0b));
  EXPECT_FALSE(d.contains_value(0x0a));
  EXPECT_EQ(amq::base64url_encode(bytes), "AeLA");
}

TEST(CacheDigest, HashIsTruncatedSha256) {
  // SHA-256("https://example.com/style.css") starts with these bits; the value is its
  // top log2(N·P) bits.
  const std::string url = "https://example.com/style.css";
  const auto md = digest(EVP_sha256(), amq::as_bytes(url + "\"abc\""));
  uint64_t top = 0;
  for (int i = 0; i < 8; ++i) top = (top << 8) | static_cast<uint8_t>(md[i]);
  EXPECT_EQ(amq::CacheDigest::hash_value(url, "\"abc\"", 13), top >> 51);
  EXPECT_EQ(amq::CacheDigest::hash_value(url, "\"abc\"", 62), top >> 2);
  EXPECT_EQ(amq::CacheDigest::hash_value(url, "", 0), 0u);
}

TEST(CacheDigest, BuildParseRoundTrip) {
  std::vector<std::string> urls;
  for (int i = 0; i < 300; ++i) urls.push_back("https://example.com/asset/" + std::to_string(i) + ".js");
  std::vector<amq::CacheDigest::Entry> entries;
  for (size_t i = 0; i < urls.size(); ++i) entries.push_back({urls[i], i % 2 ? std::string_view("\"v1\"") : ""});
  const auto bytes = amq::CacheDigest::build(entries, 7);
  const auto d = amq::CacheDigest::parse(bytes);
  EXPECT_EQ(d.log2_n(), 8u);  // 300 rounds to 256
  EXPECT_EQ(d.log2_p(), 7u);
  // Header bits: 01000 00111.
  EXPECT_EQ(amq::detail::bit_string(bytes, 10), "0100000111");
  for (const auto& e : entries) EXPECT_TRUE(d.contains(e.url, e.etag));
  size_t fp = 0;
  for (int i = 0; i < 10000; ++i) fp += d.contains("https://example.com/other/" + std::to_string(i));
  EXPECT_LT(fp, 10000 * 300 / (256 * 128) * 2 + 50);
  // The values are the sorted distinct hashes.
  std::vector<uint64_t> expect;
  for (const auto& e : entries) expect.push_back(amq::CacheDigest::hash_value(e.url, e.etag, 15));
  std::sort(expect.begin(), expect.end());
  expect.erase(std::unique(expect.begin(), expect.end()), expect.end());
  EXPECT_EQ(d.values(), expect);
  // Rebuilt from its text form.
  EXPECT_EQ(amq::base64url_decode(amq::base64url_encode(bytes) + "\n"), bytes);
  // Rounding of N: 3 entries -> 4, 1 -> 1, 0 -> 1.
  const std::vector<amq::CacheDigest::Entry> three = {{"a", ""}, {"b", ""}, {"c", ""}};
  EXPECT_EQ(amq::CacheDigest::parse(amq::CacheDigest::build(three, 5)).log2_n(), 2u);
  EXPECT_EQ(amq::CacheDigest::parse(amq::CacheDigest::build(std::span(three).first(1), 5)).log2_n(), 0u);
  EXPECT_TRUE(amq::CacheDigest::parse(amq::CacheDigest::build({}, 5)).values().empty());
  // Nearest in value: 23 -> 16 (7 away, 32 is 9 away), 24 -> 32 (a tie goes up), 5 -> 4.
  for (auto [count, log2n] : {std::pair{23, 4u}, {24, 5u}, {5, 2u}, {2, 1u}}) {
    std::vector<std::string> names;
    for (int i = 0; i < count; ++i) names.push_back(std::string("u").append(std::to_string(i)));
    std::vector<amq::CacheDigest::Entry> many;
    for (const auto& u : names) many.push_back({u, ""});
    EXPECT_EQ(amq::CacheDigest::parse(amq::CacheDigest::build(many, 5)).log2_n(), log2n) << count;
    // An entry listed twice counts once.
    many.insert(many.end(), many.begin(), many.end());
    EXPECT_EQ(amq::CacheDigest::parse(amq::CacheDigest::build(many, 5)).log2_n(), log2n) << count;
  }
  const std::vector<amq::CacheDigest::Entry> same(23, {"u", ""});
  EXPECT_EQ(amq::CacheDigest::parse(amq::CacheDigest::build(same, 5)).log2_n(), 0u);
  EXPECT_EQ(amq::CacheDigest::log2_p_for(1.0 / 8192), 13u);
}

TEST(CacheDigest, CompleteDigestsOfEverySizeParse) {
  // The completeness checks never refuse a digest as built, whatever its N and P.
  std::vector<std::string> urls;
  for (int i = 0; i < 3000; ++i) urls.push_back("https://example.org/p/" + std::to_string(i));
  std::vector<amq::CacheDigest::Entry> entries;
  for (const auto& u : urls) entries.push_back({u, ""});
  for (unsigned log2_p : {0u, 1u, 2u, 5u, 7u, 13u, 31u}) {
    for (size_t count = 0; count <= 3000; count += count < 80 ? 1 : count < 600 ? 37 : 997) {
      const auto sub = std::span(entries).first(count);
      const auto d = amq::CacheDigest::parse(amq::CacheDigest::build(sub, log2_p));
      for (const auto& e : sub) ASSERT_TRUE(d.contains(e.url, e.etag)) << count << " " << log2_p;
    }
  }
}

TEST(CacheDigest, TruncationIsRejectedUnlessOnlyTheLastFewValuesAreLost) {
  std::vector<std::string> urls;
  for (int i = 0; i < 200; ++i) urls.push_back("https://example.com/t/" + std::to_string(i));
  std::vector<amq::CacheDigest::Entry> entries;
  for (const auto& u : urls) entries.push_back({u, ""});
  const auto full_bytes = amq::CacheDigest::build(entries, 7);
  const auto full = amq::CacheDigest::parse(full_bytes).values();
  ASSERT_EQ(full.size(), 200u);
  // Every cut of the bytes, and of the base64url text (as `head -c` makes it): an
  // error, or a digest that kept a prefix of the values and lost only the last few.
  // The format has no count or checksum, so a cut at a code boundary that removed
  // fewer than about 28 values looks like a complete digest; anything more is refused.
  const std::string text = amq::base64url_encode(full_bytes);
  size_t accepted = 0, max_lost = 0;
  auto try_parse = [&](auto&& make, size_t n) {
    try {
      const auto d = amq::CacheDigest::parse(make());
      const auto& got = d.values();
      ASSERT_LE(got.size(), full.size());
      EXPECT_TRUE(std::equal(got.begin(), got.end(), full.begin())) << n;
      const size_t lost = full.size() - got.size();
      EXPECT_LE(lost, 50u) << "accepted a digest cut to " << n << " that lost " << lost << " of 200 values";
      max_lost = std::max(max_lost, lost);
      accepted += lost > 0;
    } catch (const amq::Error& e) {
      EXPECT_TRUE(e.code() == Errc::truncated || e.code() == Errc::corrupt) << n << ": " << e.what();
    }
  };
  for (size_t n = 0; n < full_bytes.size(); ++n)
    try_parse([&] { return std::vector<std::byte>(full_bytes.begin(), full_bytes.begin() + n); }, n);
  for (size_t n = 0; n < text.size(); ++n) try_parse([&] { return amq::base64url_decode(text.substr(0, n)); }, n);
  EXPECT_LT(accepted, 40u);
  EXPECT_LE(max_lost, 50u);
  // Zero bytes after the padding are refused too.
  auto longer = full_bytes;
  longer.push_back(std::byte{0});
  expect_errc(Errc::truncated, [&] { amq::CacheDigest::parse(longer); });
  // Too few values for N: the header says N = 1024, one value follows.
  expect_errc(Errc::truncated, [] { amq::CacheDigest::parse(amq::base64url_decode("UeLA")); });
}

// A digest as amq wrote it before N counted distinct entries: `lines` input lines of
// `distinct` URLs, N rounded from `lines`.
std::vector<std::byte> digest_with_n(unsigned log2_n, int distinct, unsigned log2_p) {
  std::vector<uint64_t> values;
  for (int i = 0; i < distinct; ++i)
    values.push_back(amq::CacheDigest::hash_value("https://example.net/" + std::to_string(i), "", log2_n + log2_p));
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  amq::detail::BitWriter w;
  w.put(log2_n, 5);
  w.put(log2_p, 5);
  const amq::detail::GolombCode code(uint64_t{1} << log2_p, false);
  for (size_t i = 0; i < values.size(); ++i) code.encode(w, i == 0 ? values[0] : values[i] - values[i - 1] - 1);
  return w.take();
}

TEST(CacheDigest, OlderDigestsOfRepeatedLinesStillLoad) {
  // 2,000 log lines of 100 URLs (N = 2048): the values reach the top of their range.
  const auto d = amq::CacheDigest::parse(digest_with_n(11, 100, 7));
  EXPECT_EQ(d.log2_n(), 11u);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(d.contains("https://example.net/" + std::to_string(i)));
  EXPECT_EQ(amq::CacheDigest::parse(digest_with_n(11, 16, 7)).values().size(), 16u);
  // Fewer than 16 values where N/8 were due cannot be told from a cut digest: refused.
  expect_errc(Errc::truncated, [] { amq::CacheDigest::parse(digest_with_n(11, 15, 7)); });
  expect_errc(Errc::truncated, [] { amq::CacheDigest::parse(digest_with_n(11, 1, 7)); });
}

TEST(CacheDigest, RejectsMalformed) {
  expect_errc(Errc::corrupt, [] { amq::base64url_decode("Ae+A"); });
  expect_errc(Errc::corrupt, [] { amq::base64url_decode("AeLAA"); });
  expect_errc(Errc::truncated, [] { amq::CacheDigest::parse(std::vector<std::byte>{std::byte{1}}); });
  // A '1' with too few remainder bits after it.
  expect_errc(Errc::truncated, [] { amq::CacheDigest::parse(amq::base64url_decode("AeM")); });
  // Padded forms are accepted.
  EXPECT_EQ(amq::base64url_decode("AeI="), amq::base64url_decode("AeI"));
}

// The outside formats reach AnySet through core's format registry; amq::formats (linked
// here through amq::amq) fills in the cache digest's row at start-up, once, however
// often its registration runs. tests/core_only_test.cpp is the same without it.
TEST(CacheDigest, RegisteredWithTheFormatRegistry) {
  amq_formats_register();
  std::vector<std::string> names;
  for (const auto& f : amq::detail::outside_formats()) {
    names.emplace_back(f.name);
    EXPECT_TRUE(f.linked()) << f.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"guava", "parquet", "bip158", "cache-digest"}));

  std::vector<std::string> urls;
  for (int i = 0; i < 300; ++i) urls.push_back("https://example.com/" + std::to_string(i));
  std::vector<Bytes> keys;
  for (const auto& u : urls) keys.push_back(amq::as_bytes(u));
  amq::BuildOptions o;
  o.format = "cache-digest";
  o.fpp = 1.0 / 128;
  EXPECT_GT(amq::build_bytes(amq::Kind::gcs, o, keys), 300u);
  const auto digest = amq::build_set(amq::Kind::gcs, o, keys);
  const auto back = amq::load_set(digest->serialize(), "cache-digest");
  EXPECT_EQ(back->info().format, "cache-digest");
  for (Bytes k : keys) ASSERT_TRUE(back->contains(k));
}

}  // namespace
