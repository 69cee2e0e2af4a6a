// The C++ half of the Guava cross-check, run by tests/guava_test.sh (not on its own):
//   AMQ_GUAVA_DIR  files written by `java GuavaCheck gen` (see GuavaCheck.java)
//   AMQ_GUAVA_OUT  where to write amq-built filters for `java GuavaCheck check`
// It checks that amq's murmur3_x64_128 equals Guava's murmur3_128 for every input and
// seed; that amq loads each Guava file and answers every probe as Guava did; that amq
// builds the same filters from the same keys byte for byte (and put()'s answers agree);
// and writes filters of its own, from keys Guava has not seen, with amq's answers.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "amq/any_set.hpp"
#include "amq/bloom_filter.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"

namespace amq {
namespace {

namespace fs = std::filesystem;

fs::path env_dir(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) {
    ADD_FAILURE() << name << " is not set: this program is run by tests/guava_test.sh";
    return {};
  }
  return v;
}

std::vector<std::string> split(const std::string& line, char sep = '\t') {
  std::vector<std::string> out;
  size_t at = 0;
  for (;;) {
    const size_t t = line.find(sep, at);
    out.push_back(line.substr(at, t == std::string::npos ? std::string::npos : t - at));
    if (t == std::string::npos) return out;
    at = t + 1;
  }
}

std::vector<std::string> lines_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + p.string());
  std::vector<std::string> out;
  std::string l;
  while (std::getline(in, l))
    if (!l.empty()) out.push_back(l);
  return out;
}

std::string unhex(const std::string& s) {
  auto nib = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    throw std::runtime_error("bad hex " + s);
  };
  if (s.size() % 2) throw std::runtime_error("odd hex " + s);
  std::string out(s.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<char>(nib(s[2 * i]) * 16 + nib(s[2 * i + 1]));
  return out;
}

std::string hex(std::string_view b) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : b) {
    out += d[c >> 4];
    out += d[c & 15];
  }
  return out;
}

// A key as a Guava funnel sees it: str and bytes keys are byte strings, u64 keys a
// uint64_t (KeyView's own 8-byte little-endian encoding is what is under test).
struct Key {
  bool is_u64 = false;
  std::string bytes;
  uint64_t value = 0;
  KeyView view() const { return is_u64 ? KeyView(value) : KeyView(std::string_view(bytes)); }
  std::string encoded() const { return is_u64 ? std::to_string(value) : hex(bytes); }
};

Key decode(const std::string& funnel, const std::string& text) {
  Key k;
  if (funnel == "u64") {
    k.is_u64 = true;
    size_t used = 0;
    k.value = std::stoull(text, &used, 10);
    if (used != text.size()) throw std::runtime_error("bad u64 " + text);
  } else {
    k.bytes = unhex(text);
  }
  return k;
}

struct Filter {
  std::string name, funnel;
  GuavaStrategy strategy;
  uint64_t n;
  double fpp;
  double expected_fpp;
  std::string approx_count;
  std::vector<Key> keys;
  std::vector<bool> changed;  // Guava's put() answers
  std::vector<Key> probes;
  std::vector<bool> answers;  // Guava's mightContain answers
};

std::vector<Filter> read_guava_filters() {
  const fs::path dir = env_dir("AMQ_GUAVA_DIR");
  std::vector<Filter> out;
  if (dir.empty()) return out;
  for (const auto& row : lines_of(dir / "manifest.tsv")) {
    const auto c = split(row);
    if (c.size() != 9) throw std::runtime_error("bad manifest row: " + row);
    Filter f;
    f.name = c[0];
    f.funnel = c[1];
    f.strategy = static_cast<GuavaStrategy>(std::stoi(c[2]));
    f.n = std::stoull(c[3]);
    f.fpp = std::strtod(c[4].c_str(), nullptr);
    f.expected_fpp = std::strtod(c[7].c_str(), nullptr);
    f.approx_count = c[8];
    for (const auto& l : lines_of(dir / (f.name + ".keys"))) {
      const auto kc = split(l);
      f.changed.push_back(kc.at(0) == "1");
      f.keys.push_back(decode(f.funnel, kc.at(1)));
    }
    for (const auto& l : lines_of(dir / (f.name + ".probes"))) {
      const auto kc = split(l);
      f.answers.push_back(kc.at(0) == "1");
      f.probes.push_back(decode(f.funnel, kc.at(1)));
    }
    out.push_back(std::move(f));
  }
  return out;
}

const std::vector<Filter>& guava_filters() {
  static const std::vector<Filter> filters = read_guava_filters();
  return filters;
}

std::vector<std::byte> guava_file(const Filter& f) { return read_file((env_dir("AMQ_GUAVA_DIR") / (f.name + ".guava")).string()); }

std::vector<KeyView> views(const std::vector<Key>& keys) {
  std::vector<KeyView> v;
  v.reserve(keys.size());
  for (const auto& k : keys) v.push_back(k.view());
  return v;
}

TEST(Murmur3, EqualsGuavasMurmur3_128) {
  const fs::path dir = env_dir("AMQ_GUAVA_DIR");
  ASSERT_FALSE(dir.empty());
  size_t checked = 0;
  for (const auto& row : lines_of(dir / "murmur3.tsv")) {
    const auto c = split(row);
    ASSERT_EQ(c.size(), 3u) << row;
    const auto seed = static_cast<uint32_t>(static_cast<int32_t>(std::stol(c[0])));
    const std::string input = unhex(c[1]);
    const Hash128 h = murmur3_x64_128(as_bytes(input), seed);
    // HashCode.asBytes(): h1 then h2, each little-endian.
    std::string got(16, '\0');
    for (int i = 0; i < 8; ++i) {
      got[i] = static_cast<char>(h.low >> (8 * i));
      got[8 + i] = static_cast<char>(h.high >> (8 * i));
    }
    EXPECT_EQ(hex(got), c[2]) << "murmur3_x64_128 of " << input.size() << " bytes, seed " << c[0]
                              << " (Guava's seed as int): amq differs from Guava";
    ++checked;
  }
  EXPECT_GT(checked, 500u);
}

TEST(GuavaFiles, AmqAnswersEveryProbeAsGuava) {
  ASSERT_FALSE(guava_filters().empty());
  for (const Filter& f : guava_filters()) {
    SCOPED_TRACE(f.name);
    const auto bytes = guava_file(f);
    ASSERT_TRUE(BloomFilter::looks_like_guava(bytes));
    const BloomFilter bf = BloomFilter::from_guava(bytes);
    EXPECT_EQ(bf.strategy(), f.strategy);
    size_t wrong = 0;
    for (size_t i = 0; i < f.probes.size(); ++i) {
      if (bf.contains(f.probes[i].view()) != f.answers[i] && ++wrong <= 5)
        ADD_FAILURE() << f.name << ": probe " << i << " (key " << f.probes[i].encoded() << "): Guava says "
                      << f.answers[i] << ", amq's contains() " << !f.answers[i];
    }
    EXPECT_EQ(wrong, 0u) << f.name << ": contains() disagrees with Guava's mightContain()";

    const auto keys = views(f.probes);
    std::unique_ptr<bool[]> out(new bool[keys.size()]);
    bf.contains_many(keys, std::span<bool>(out.get(), keys.size()));
    for (size_t i = 0; i < keys.size(); ++i)
      ASSERT_EQ(out[i], f.answers[i]) << f.name << ": contains_many() disagrees with Guava at probe " << i;

    // Through the type-erased layer the CLI uses: auto-detected and forced format.
    for (const char* format : {"auto", "guava"}) {
      const auto set = load_set(bytes, format);
      EXPECT_EQ(set->info().format, "guava");
      EXPECT_EQ(set->kind(), Kind::bloom);
      for (size_t i = 0; i < f.probes.size(); ++i)
        ASSERT_EQ(set->contains(f.probes[i].view().bytes()), f.answers[i]) << f.name << " via load_set(" << format
                                                                           << "), probe " << i;
      EXPECT_EQ(set->serialize(), bytes) << "writing a loaded Guava file back changes it";
    }

    // Guava's expectedFpp() and approximateElementCount().
    EXPECT_NEAR(bf.expected_fpp(), f.expected_fpp, 1e-12 * std::max(1.0, f.expected_fpp)) << f.name;
    if (f.approx_count == "overflow")
      EXPECT_EQ(bf.approximate_element_count(), UINT64_MAX) << f.name << ": every bit set";
    else
      EXPECT_EQ(bf.approximate_element_count(), std::stoull(f.approx_count)) << f.name;
  }
}

TEST(GuavaFiles, AmqBuildsTheSameBytesFromTheSameKeys) {
  ASSERT_FALSE(guava_filters().empty());
  for (const Filter& f : guava_filters()) {
    SCOPED_TRACE(f.name);
    BloomFilter bf = BloomFilter::create(f.n, f.fpp, f.strategy);
    for (size_t i = 0; i < f.keys.size(); ++i)
      ASSERT_EQ(bf.insert(f.keys[i].view()), f.changed[i]) << f.name << ": insert() of key " << i << " ("
                                                            << f.keys[i].encoded() << ") vs Guava's put()";
    const auto expected = guava_file(f);
    const auto got = bf.to_guava();
    ASSERT_EQ(got.size(), expected.size()) << f.name << ": to_guava() length differs from Guava's writeTo";
    size_t first = 0;
    while (first < got.size() && got[first] == expected[first]) ++first;
    EXPECT_EQ(first, got.size()) << f.name << ": to_guava() differs from Guava's writeTo at byte " << first;

    // The same build through build_set (what `amq build --format guava` does).
    if (f.strategy == GuavaStrategy::murmur128_mitz_64) {
      BuildOptions opt;
      opt.fpp = f.fpp;
      opt.capacity = f.n;
      opt.format = "guava";
      std::vector<std::string> owned;
      for (const auto& k : f.keys) owned.emplace_back(as_chars(k.view().bytes()));
      std::vector<Bytes> keys;
      for (const auto& k : owned) keys.push_back(as_bytes(k));
      EXPECT_EQ(build_set(Kind::bloom, opt, keys)->serialize(), expected) << f.name << ": build_set(format guava)";
    }

    // The amq container keeps the same filter.
    EXPECT_EQ(BloomFilter::load(bf.serialize()), bf);
  }
}

// ---- filters amq writes for Guava to read ----------------------------------------

std::string random_utf8(std::mt19937_64& rng) {
  std::string s;
  const int n = static_cast<int>(rng() % 16);
  for (int i = 0; i < n; ++i) {
    uint32_t cp;
    switch (rng() % 4) {
      case 0: cp = 0x20 + rng() % 0x5f; break;
      case 1: cp = 0x80 + rng() % (0x800 - 0x80); break;
      case 2:
        do cp = 0x800 + rng() % (0x10000 - 0x800);
        while (cp >= 0xd800 && cp <= 0xdfff);
        break;
      default: cp = 0x10000 + rng() % (0x110000 - 0x10000); break;
    }
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      s += static_cast<char>(0xc0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      s += static_cast<char>(0xe0 | (cp >> 12));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      s += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      s += static_cast<char>(0xf0 | (cp >> 18));
      s += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      s += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }
  return s;
}

std::vector<Key> random_keys(const std::string& funnel, size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Key> out;
  for (size_t i = 0; i < count; ++i) {
    Key k;
    if (funnel == "u64") {
      k.is_u64 = true;
      k.value = rng() >> (rng() % 64);
    } else if (funnel == "str") {
      k.bytes = random_utf8(rng) + "#" + std::to_string(i);
    } else {
      k.bytes.resize(rng() % 48);
      for (auto& c : k.bytes) c = static_cast<char>(rng());
    }
    out.push_back(std::move(k));
  }
  return out;
}

class Writer {
 public:
  explicit Writer(fs::path dir) : dir_(std::move(dir)) { fs::create_directories(dir_); }
  ~Writer() { write_file_atomic((dir_ / "manifest.tsv").string(), as_bytes(manifest_)); }

  void add(const std::string& name, const std::string& funnel, const BloomFilter& bf, uint64_t n, double fpp,
           size_t inserted, const std::vector<Key>& probes) {
    write_file_atomic((dir_ / (name + ".guava")).string(), bf.to_guava());
    std::string p;
    size_t yes = 0;
    for (const auto& k : probes) {
      const bool a = bf.contains(k.view());
      yes += a;
      p += std::string(a ? "1" : "0") + "\t" + k.encoded() + "\n";
    }
    write_file_atomic((dir_ / (name + ".probes")).string(), as_bytes(p));
    const uint64_t approx = bf.approximate_element_count();
    manifest_ += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t0\t{}\t{}\n", name, funnel, static_cast<int>(bf.strategy()), n,
                             fpp, inserted, bf.expected_fpp(),
                             approx == UINT64_MAX ? std::string("overflow") : std::to_string(approx));
    EXPECT_GT(yes, 0u) << name;
  }

 private:
  fs::path dir_;
  std::string manifest_;
};

TEST(AmqFiles, WrittenForGuavaToRead) {
  const fs::path out = env_dir("AMQ_GUAVA_OUT");
  ASSERT_FALSE(out.empty());
  Writer w(out);
  struct Case {
    const char* funnel;
    GuavaStrategy strategy;
    uint64_t n;
    double fpp;
    size_t inserted;
  };
  uint64_t seed = 100;
  for (const Case& c : {Case{"str", GuavaStrategy::murmur128_mitz_64, 2000, 0.01, 2000},
                        Case{"str", GuavaStrategy::murmur128_mitz_32, 1500, 0.05, 1500},
                        Case{"u64", GuavaStrategy::murmur128_mitz_64, 5000, 0.001, 5000},
                        Case{"u64", GuavaStrategy::murmur128_mitz_32, 700, 0.02, 700},
                        Case{"bytes", GuavaStrategy::murmur128_mitz_64, 1000, 0.03, 1000},
                        Case{"bytes", GuavaStrategy::murmur128_mitz_32, 1000, 1e-5, 1000},
                        Case{"str", GuavaStrategy::murmur128_mitz_64, 300, 0.01, 3000},    // 10x overfilled
                        Case{"u64", GuavaStrategy::murmur128_mitz_32, 300, 0.01, 3000}}) {  // 10x overfilled
    const auto keys = random_keys(c.funnel, c.inserted, ++seed);
    auto probes = random_keys(c.funnel, 5000, ++seed);
    probes.insert(probes.end(), keys.begin(), keys.end());
    BloomFilter bf = BloomFilter::create(c.n, c.fpp, c.strategy);
    for (const auto& k : keys) bf.insert(k.view());
    const std::string name = std::string("amq_") + c.funnel + "_" +
                             (c.strategy == GuavaStrategy::murmur128_mitz_64 ? "mitz64" : "mitz32") + "_n" +
                             std::to_string(c.n) + "_x" + std::to_string(c.inserted);
    w.add(name, c.funnel, bf, c.n, c.fpp, c.inserted, probes);
  }
  // A union (merge) of two filters built apart.
  {
    const auto a = random_keys("str", 1000, 200), b = random_keys("str", 1000, 201);
    BloomFilter fa = BloomFilter::create(2000, 0.01), fb = BloomFilter::create(2000, 0.01);
    for (const auto& k : a) fa.insert(k.view());
    for (const auto& k : b) fb.insert(k.view());
    fa.merge(fb);
    auto probes = random_keys("str", 5000, 202);
    probes.insert(probes.end(), a.begin(), a.end());
    probes.insert(probes.end(), b.begin(), b.end());
    w.add("amq_str_merged", "str", fa, 2000, 0.01, 2000, probes);
  }
}

}  // namespace
}  // namespace amq
