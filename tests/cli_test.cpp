// The `amq` command line, run as a user runs it: build / query / add / info / bench,
// keys from files and stdin, key types, grep-like query output and exit statuses,
// one-line errors with exit status 2, and no partial or temporary files left behind.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "amq/bloom_filter.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "test_util.hpp"

namespace amq {
namespace {

#ifndef AMQ_CLI
TEST(Cli, NeedsTheTool) { GTEST_SKIP() << "amq was configured without its command-line tool (AMQ_BUILD_TOOLS=OFF)"; }
#else

namespace fs = std::filesystem;
using test::run;
using test::RunResult;
using test::TempDir;

std::string amq_cmd(const std::string& args) { return "'" + test::cli() + "' " + args; }
RunResult amq_run(const std::string& args, const std::string& input = "") { return run(amq_cmd(args), input); }

std::string q(const std::string& path) { return "'" + path + "'"; }

void write(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

std::string slurp(const std::string& path) {
  const auto b = read_file(path);
  return std::string(as_chars(b));
}

std::set<std::string> dir_listing(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

std::string describe(const RunResult& r) {
  return "exit " + std::to_string(r.status) + "\n--- stdout:\n" + r.out.substr(0, 2000) + "\n--- stderr:\n" + r.err;
}

// An error as the CLI must report it: status 2, nothing on stdout, exactly one line on
// stderr that names `name` and contains `problem`.
void expect_error(const RunResult& r, const std::string& name, const std::string& problem) {
  EXPECT_EQ(r.status, 2) << describe(r);
  EXPECT_EQ(r.out, "") << describe(r);
  ASSERT_FALSE(r.err.empty()) << describe(r);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "not one line:\n" << r.err;
  EXPECT_EQ(r.err.back(), '\n') << r.err;
  EXPECT_NE(r.err.find(name), std::string::npos) << "error does not name " << name << ": " << r.err;
  EXPECT_NE(r.err.find(problem), std::string::npos) << "error does not say '" << problem << "': " << r.err;
}

// prefix + i (a function: GCC 12 warns falsely on `"literal" + std::to_string(i)`).
std::string numbered(std::string prefix, int i) {
  prefix += std::to_string(i);
  return prefix;
}

std::string join_lines(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

// ---- JSON: the CLI's output read with nlohmann-json ---------------------------------

using Json = nlohmann::json;
// Parses one whole document (throws nlohmann::json::parse_error on anything else); with
// `duplicates`, also collects the keys that repeat within one object (nlohmann keeps the
// last of them).
Json parse_json(const std::string& s, std::vector<std::string>* duplicates = nullptr) {
  std::vector<std::set<std::string>> keys;  // per enclosing object, the keys seen
  return Json::parse(s, [&](int, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) {
      keys.emplace_back();
    } else if (event == Json::parse_event_t::object_end) {
      keys.pop_back();
    } else if (event == Json::parse_event_t::key && !keys.back().insert(parsed.get<std::string>()).second &&
               duplicates != nullptr) {
      duplicates->push_back(parsed.get<std::string>());
    }
    return true;
  });
}

TEST(Json, ParseRejectsWhatIsNotJsonAndFindsDuplicateKeys) {
  std::vector<std::string> dups;
  EXPECT_NO_THROW(parse_json(R"({"a":[1,-2.5e3,true,null,"x\"y"],"b":{}})", &dups));
  EXPECT_TRUE(dups.empty());
  for (const char* bad : {"{", R"({"a":inf})", R"({"a":nan})", "[1,]", R"({"a" 1})", "{} x", "\"a\tb\""})
    EXPECT_THROW(parse_json(bad), Json::parse_error) << bad;
  EXPECT_EQ(parse_json(R"({"a":1,"b":{"a":2,"c":[{"a":0}]},"a":3})", &dups).at("a"), 3);
  EXPECT_EQ(dups, std::vector<std::string>{"a"});
}

// ---- build / query -------------------------------------------------------------------

class Cli : public ::testing::Test {
 protected:
  TempDir dir;
  std::string file(const std::string& name) const { return dir.file(name); }
};

TEST_F(Cli, BuildFromFilesAndStdinGivesTheSameFilter) {
  const auto keys = test::random_keys(3000, 1, 20);
  std::vector<std::string> printable;
  for (const auto& k : keys) {
    std::string s;
    for (char c : k) s += static_cast<char>('a' + (static_cast<unsigned char>(c) % 26));
    printable.push_back(s + "é中😀");
  }
  std::sort(printable.begin(), printable.end());
  printable.erase(std::unique(printable.begin(), printable.end()), printable.end());
  const std::vector<std::string> first(printable.begin(), printable.begin() + 1000),
      rest(printable.begin() + 1000, printable.end());
  write(file("a.txt"), join_lines(first));
  write(file("b.txt"), join_lines(rest));

  auto r = amq_run("build -t bloom -p 0.01 -o " + q(file("files.amq")) + " " + q(file("a.txt")) + " " +
                   q(file("b.txt")));
  ASSERT_EQ(r.status, 0) << describe(r);
  EXPECT_EQ(r.out, "");
  r = amq_run("build -t bloom -p 0.01 -o " + q(file("stdin.amq")), join_lines(printable));
  ASSERT_EQ(r.status, 0) << describe(r);
  // "-" is stdin, mixed with a file.
  r = amq_run("build -t bloom -p 0.01 -o " + q(file("mixed.amq")) + " " + q(file("a.txt")) + " -", join_lines(rest));
  ASSERT_EQ(r.status, 0) << describe(r);
  // Without -o the file goes to stdout.
  r = amq_run("build -t bloom -p 0.01 " + q(file("a.txt")) + " " + q(file("b.txt")));
  ASSERT_EQ(r.status, 0) << describe(r);

  const auto a = read_file(file("files.amq"));
  EXPECT_EQ(read_file(file("stdin.amq")), a);
  EXPECT_EQ(read_file(file("mixed.amq")), a);
  EXPECT_EQ(std::string(as_chars(a)), r.out);

  // It is the library's filter of those keys, sized for them.
  const auto f = BloomFilter::load(a);
  auto expect = BloomFilter::create(printable.size(), 0.01);
  for (const auto& k : printable) expect.insert(k);
  EXPECT_EQ(f, expect);
}

TEST_F(Cli, CrLfLinesAreTheSameKeys) {
  write(file("lf.txt"), "alpha\nbeta\ngamma\n\ndelta");  // an empty key, no final newline
  write(file("crlf.txt"), "alpha\r\nbeta\r\ngamma\r\n\r\ndelta\r\n");
  ASSERT_EQ(amq_run("build -t bloom -o " + q(file("lf.amq")) + " " + q(file("lf.txt"))).status, 0);
  ASSERT_EQ(amq_run("build -t bloom -o " + q(file("crlf.amq")) + " " + q(file("crlf.txt"))).status, 0);
  EXPECT_EQ(read_file(file("lf.amq")), read_file(file("crlf.amq")));
  const auto f = BloomFilter::load(read_file(file("crlf.amq")));
  for (const char* k : {"alpha", "beta", "gamma", "", "delta"}) EXPECT_TRUE(f.contains(k)) << k;
  EXPECT_FALSE(f.contains("alpha\r"));
  // Queries read CRLF lines the same way and print the keys without "\r".
  const auto r = amq_run("query " + q(file("lf.amq")), "delta\r\nbeta\r\n");
  EXPECT_EQ(r.status, 0) << describe(r);
  EXPECT_EQ(r.out, "delta\nbeta\n");
}

TEST_F(Cli, QueryIsLikeGrep) {
  std::vector<std::string> present, absent;
  for (int i = 0; i < 2000; ++i) present.push_back(numbered("in-", i));
  for (int i = 0; i < 20000; ++i) absent.push_back(numbered("out-", i));
  write(file("keys.txt"), join_lines(present));
  ASSERT_EQ(amq_run("build -t bloom -p 0.01 -o " + q(file("s.amq")) + " " + q(file("keys.txt"))).status, 0);
  const auto f = BloomFilter::load(read_file(file("s.amq")));

  // Interleaved present and absent keys, with repeats: output is in input order.
  std::vector<std::string> input;
  for (size_t i = 0; i < absent.size(); ++i) {
    input.push_back(absent[i]);
    if (i % 10 == 0) input.push_back(present[(i / 10) % present.size()]);
    if (i % 1000 == 0) input.push_back(present[0]);
  }
  std::vector<std::string> hits, misses;
  for (const auto& k : input) (f.contains(k) ? hits : misses).push_back(k);
  ASSERT_GT(hits.size(), 2000u);
  ASSERT_LT(hits.size(), 2000u + 600u);  // ~1% of the absent keys

  auto r = amq_run("query " + q(file("s.amq")), join_lines(input));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, join_lines(hits));
  r = amq_run("query -v " + q(file("s.amq")), join_lines(input));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, join_lines(misses));
  r = amq_run("query -c " + q(file("s.amq")), join_lines(input));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, std::to_string(hits.size()) + "\n");
  r = amq_run("query -v -c " + q(file("s.amq")), join_lines(input));
  EXPECT_EQ(r.out, std::to_string(misses.size()) + "\n");

  // Keys as arguments instead of stdin (stdin is then ignored).
  r = amq_run("query " + q(file("s.amq")) + " in-5 in-7 in-5", "in-9\n");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "in-5\nin-7\nin-5\n");
  EXPECT_EQ(r.err, "");

  // Exit status 1 when nothing is selected, as grep; -c still prints 0.
  std::string sure_absent;
  for (const auto& k : absent)
    if (!f.contains(k)) {
      sure_absent = k;
      break;
    }
  r = amq_run("query " + q(file("s.amq")) + " " + sure_absent);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  r = amq_run("query -c " + q(file("s.amq")) + " " + sure_absent);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "0\n");
  r = amq_run("query -v " + q(file("s.amq")) + " in-1 in-2");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  r = amq_run("query -v " + q(file("s.amq")) + " in-1 " + sure_absent);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, sure_absent + "\n");
  // No keys at all: nothing selected.
  r = amq_run("query " + q(file("s.amq")), "");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
}

TEST_F(Cli, U64AndHexKeys) {
  // Decimal u64 keys are the 64-bit integers (Guava's longFunnel encoding).
  const std::vector<uint64_t> nums = {0, 1, 42, 4294967296ULL, 18446744073709551615ULL, 9223372036854775808ULL};
  std::string text;
  for (uint64_t v : nums) text += std::to_string(v) + "\n";
  auto r = amq_run("build -t bloom --key-type u64 -o " + q(file("u.amq")), text);
  ASSERT_EQ(r.status, 0) << describe(r);
  const auto u = BloomFilter::load(read_file(file("u.amq")));
  for (uint64_t v : nums) EXPECT_TRUE(u.contains(v)) << v;
  auto lib = BloomFilter::create(nums.size(), 0.01);
  for (uint64_t v : nums) lib.insert(v);
  EXPECT_EQ(u, lib);
  r = amq_run("query --key-type u64 " + q(file("u.amq")), "42\n18446744073709551615\n");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "42\n18446744073709551615\n");
  // The file records its key type: a query reads u64 keys by default, and a
  // contradicting --key-type is an error naming the file and both types.
  r = amq_run("query " + q(file("u.amq")) + " 42");
  EXPECT_EQ(r.status, 0) << describe(r);
  EXPECT_EQ(r.out, "42\n");
  expect_error(amq_run("query --key-type str " + q(file("u.amq")) + " 42"), file("u.amq"), "holds u64 keys, not str");

  // Hex keys are their raw bytes; either case of digits.
  r = amq_run("build -t bloom --key-type hex -o " + q(file("h.amq")), "00ff0a\nDEADbeef\n\n");
  ASSERT_EQ(r.status, 0) << describe(r);
  const auto h = BloomFilter::load(read_file(file("h.amq")));
  EXPECT_TRUE(h.contains(std::string_view("\x00\xff\x0a", 3)));
  EXPECT_TRUE(h.contains(std::string_view("\xde\xad\xbe\xef", 4)));
  EXPECT_TRUE(h.contains(std::string_view()));
  r = amq_run("query --key-type hex " + q(file("h.amq")) + " deadbeef 00FF0A");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "deadbeef\n00FF0A\n");
}

TEST_F(Cli, GuavaFormatBuildQueryAddInfo) {
  std::vector<std::string> keys;
  for (int i = 0; i < 500; ++i) keys.push_back(numbered("guava-", i));
  write(file("keys.txt"), join_lines(keys));
  auto r = amq_run("build -t bloom --format guava -n 1000 -p 0.03 -o " + q(file("g.bin")) + " " + q(file("keys.txt")));
  ASSERT_EQ(r.status, 0) << describe(r);
  const auto bytes = read_file(file("g.bin"));
  ASSERT_TRUE(BloomFilter::looks_like_guava(bytes));
  auto lib = BloomFilter::create(1000, 0.03);
  for (const auto& k : keys) lib.insert(k);
  EXPECT_EQ(bytes, lib.to_guava());

  // query: auto-detected, and with --format guava; --format amq refuses it.
  for (const char* opt : {"", "--format guava "}) {
    r = amq_run(std::string("query ") + opt + q(file("g.bin")) + " guava-3 guava-499");
    EXPECT_EQ(r.status, 0) << describe(r);
    EXPECT_EQ(r.out, "guava-3\nguava-499\n");
  }
  expect_error(amq_run("query --format amq " + q(file("g.bin")) + " guava-3"), file("g.bin"), "not an amq file");

  // info
  r = amq_run("info " + q(file("g.bin")));
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("guava"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MURMUR128_MITZ_64"), std::string::npos) << r.out;

  // add keeps the Guava format, and equals the library adding the same keys.
  r = amq_run("add " + q(file("g.bin")), "late-1\nlate-2\r\n");
  ASSERT_EQ(r.status, 0) << describe(r);
  lib.insert("late-1");
  lib.insert("late-2");
  EXPECT_EQ(read_file(file("g.bin")), lib.to_guava());
  EXPECT_EQ(amq_run("query " + q(file("g.bin")) + " late-2").out, "late-2\n");
}

TEST_F(Cli, AddToAmqFileAndInfo) {
  ASSERT_EQ(amq_run("build -t bloom -n 10000 -p 0.01 -o " + q(file("s.amq")), "a\nb\n").status, 0);
  std::vector<std::string> more;
  for (int i = 0; i < 3000; ++i) more.push_back(numbered("more-", i));
  auto r = amq_run("add " + q(file("s.amq")), join_lines(more));
  ASSERT_EQ(r.status, 0) << describe(r);
  EXPECT_EQ(r.out, "");
  r = amq_run("add " + q(file("s.amq")) + " c d");
  ASSERT_EQ(r.status, 0) << describe(r);
  auto lib = BloomFilter::create(10000, 0.01);
  for (const char* k : {"a", "b"}) lib.insert(k);
  for (const auto& k : more) lib.insert(k);
  for (const char* k : {"c", "d"}) lib.insert(k);
  EXPECT_EQ(BloomFilter::load(read_file(file("s.amq"))), lib);
  EXPECT_EQ(amq_run("query -c " + q(file("s.amq")), join_lines(more)).out, "3000\n");

  r = amq_run("info " + q(file("s.amq")));
  ASSERT_EQ(r.status, 0) << describe(r);
  for (const char* word : {"bloom", "items", "bytes", "bits/key", "fpp"})
    EXPECT_NE(r.out.find(word), std::string::npos) << word << " missing from\n" << r.out;
}

TEST_F(Cli, InfoJson) {
  std::vector<std::string> keys;
  for (int i = 0; i < 5000; ++i) keys.push_back(numbered("k", i));
  ASSERT_EQ(amq_run("build -t bloom -p 0.01 -o " + q(file("s.amq")), join_lines(keys)).status, 0);
  ASSERT_EQ(amq_run("build -t bloom --format guava -p 0.01 -o " + q(file("g.bin")), join_lines(keys)).status, 0);
  const auto lib = BloomFilter::load(read_file(file("s.amq")));
  for (const std::string name : {"s.amq", "g.bin"}) {
    SCOPED_TRACE(name);
    const auto r = amq_run("info --json " + q(file(name)));
    ASSERT_EQ(r.status, 0) << describe(r);
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << "one object on one line: " << r.out;
    Json j;
    std::vector<std::string> dups;
    ASSERT_NO_THROW(j = parse_json(r.out, &dups)) << r.out;
    ASSERT_TRUE(j.is_object()) << r.out;
    EXPECT_TRUE(dups.empty()) << "duplicate keys in " << r.out;
    for (const char* key : {"kind", "params", "items", "bytes", "bits_per_key", "fpp_expected"})
      ASSERT_TRUE(j.contains(key)) << key << " missing from " << r.out;
    EXPECT_EQ(j["kind"], "bloom");
    EXPECT_TRUE(j["params"].is_object());
    EXPECT_TRUE(j["items"].is_number());
    // items is Guava's approximateElementCount: close to the 5000 keys.
    const double items = j["items"].get<double>(), bytes = static_cast<double>(fs::file_size(file(name)));
    EXPECT_NEAR(items, 5000, 100);
    EXPECT_EQ(j["bytes"].get<double>(), bytes);
    EXPECT_NEAR(j["bits_per_key"].get<double>(), 8.0 * bytes / items, 0.01);
    EXPECT_NEAR(j["fpp_expected"].get<double>(), lib.expected_fpp(), 1e-6);
    EXPECT_GT(j["fpp_expected"].get<double>(), 0.001);
    EXPECT_LT(j["fpp_expected"].get<double>(), 0.02);
  }
}

// ---- errors ---------------------------------------------------------------------------

TEST_F(Cli, BadFilesAreOneLineErrors) {
  write(file("keys.txt"), "x\ny\nz\n");
  ASSERT_EQ(amq_run("build -t bloom -o " + q(file("good.amq")) + " " + q(file("keys.txt"))).status, 0);
  ASSERT_EQ(amq_run("build -t bloom --format guava -o " + q(file("good.guava")) + " " + q(file("keys.txt"))).status, 0);
  const std::string good = slurp(file("good.amq"));
  const std::string guava = slurp(file("good.guava"));

  write(file("truncated.amq"), good.substr(0, good.size() - 3));
  write(file("header-only.amq"), good.substr(0, 10));
  std::string corrupt = good;
  corrupt[corrupt.size() / 2] ^= 0x10;
  write(file("corrupt.amq"), corrupt);
  write(file("text.txt"), "just some text\n");
  write(file("empty"), "");
  write(file("truncated.guava"), guava.substr(0, guava.size() - 1));
  std::string bad_strategy = guava;
  bad_strategy[0] = 7;
  write(file("strategy.guava"), bad_strategy);

  struct Case {
    std::string args, name, problem;
  };
  const std::vector<Case> cases = {
      {"query " + q(file("missing.amq")) + " x", file("missing.amq"), "No such file"},
      {"query " + q(file("truncated.amq")) + " x", file("truncated.amq"), "truncated"},
      {"query " + q(file("header-only.amq")) + " x", file("header-only.amq"), "truncated"},
      {"query " + q(file("corrupt.amq")) + " x", file("corrupt.amq"), "checksum"},
      {"query " + q(file("text.txt")) + " x", file("text.txt"), "not an amq file"},
      {"query " + q(file("empty")) + " x", file("empty"), "not an amq file"},
      {"query --format guava " + q(file("truncated.guava")) + " x", file("truncated.guava"), "truncated"},
      {"query --format guava " + q(file("strategy.guava")) + " x", file("strategy.guava"), "strategy"},
      {"query --format guava " + q(file("good.amq")) + " x", file("good.amq"), "Guava"},
      {"query " + q(file("truncated.guava")) + " x", file("truncated.guava"), "not an amq file or a Guava"},
      {"info " + q(file("corrupt.amq")), file("corrupt.amq"), "checksum"},
      {"info --json " + q(file("missing.amq")), file("missing.amq"), "No such file"},
      {"add " + q(file("truncated.amq")) + " k", file("truncated.amq"), "truncated"},
      {"build -t bloom -o " + q(file("x.amq")) + " " + q(file("missing.txt")), file("missing.txt"), "No such file"},
      {"build -t bloom -o " + q(file("no/such/dir/x.amq")) + " " + q(file("keys.txt")), file("no/such/dir/x.amq"),
       "No such file"},
      {"query " + q(dir.path().string()) + " x", dir.path().string(), "directory"},
  };
  const auto before = dir_listing(dir.path());
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    expect_error(amq_run(c.args), c.name, c.problem);
  }
  EXPECT_EQ(dir_listing(dir.path()), before) << "a failing command left a file behind";
  EXPECT_EQ(slurp(file("truncated.amq")), good.substr(0, good.size() - 3));
}

TEST_F(Cli, BadKeysAreOneLineErrorsAndLeaveNoFile) {
  std::string input;
  for (int i = 0; i < 5000; ++i) input += std::to_string(i) + "\n";
  std::string bad_middle = input + "12x\n" + input;
  write(file("bad.txt"), bad_middle);
  write(file("keys.txt"), input);
  const auto before = dir_listing(dir.path());

  struct Case {
    std::string args, input, name, problem;
  };
  const std::string out = q(file("out.amq"));
  const std::vector<Case> cases = {
      {"build -t bloom --key-type u64 -o " + out + " " + q(file("bad.txt")), "", file("bad.txt") + ":5001", "12x"},
      {"build -t bloom --key-type u64 -o " + out, bad_middle, "<stdin>:5001", "12x"},
      {"build -t bloom --key-type u64 -o " + out + " " + q(file("keys.txt")) + " -", "7\n-9223372036854775809\n",
       "<stdin>:2", "-9223372036854775809"},
      {"build -t bloom --key-type u64 -o " + out, "-\n", "<stdin>:1", "'-'"},
      {"build -t bloom --key-type u64 -o " + out, "18446744073709551616\n", "<stdin>:1", "18446744073709551616"},
      {"build -t bloom --key-type u64 -o " + out, "1\n\n2\n", "<stdin>:2", "''"},
      {"build -t bloom --key-type hex -o " + out, "00\nabc\n", "<stdin>:2", "odd number"},
      {"build -t bloom --key-type hex -o " + out, "zz\n", "<stdin>:1", "not a hex key"},
      {"build -t bloom --format guava --key-type u64 -o " + out, "1\n 2\n", "<stdin>:2", "' 2'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    expect_error(amq_run(c.args, c.input), c.name, c.problem);
    EXPECT_EQ(dir_listing(dir.path()), before) << "a failing build left a file behind";
  }
  // Options the kind cannot honour are refused, not ignored.
  for (const char* opt : {"--seed 5", "--growth 3", "--parquet", "-p 1.5", "-p 0", "--format parquet"}) {
    SCOPED_TRACE(opt);
    const auto r = amq_run("build -t bloom " + std::string(opt) + " -o " + out, "a\n");
    EXPECT_EQ(r.status, 2) << describe(r);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(dir_listing(dir.path()), before);
  }
  // A failing build does not touch an existing output file.
  ASSERT_EQ(amq_run("build -t bloom --key-type u64 -o " + out, input).status, 0);
  // Keys given as arguments are checked too.
  expect_error(amq_run("query --key-type u64 " + out + " 1 12x"), "12x", "not a 64-bit");
  const std::string built = slurp(file("out.amq"));
  expect_error(amq_run("build -t bloom --key-type u64 -o " + out + " " + q(file("bad.txt"))), file("bad.txt"), "12x");
  EXPECT_EQ(slurp(file("out.amq")), built);
}

ino_t inode(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

TEST_F(Cli, AddIsAtomic) {
  for (const char* format : {"amq", "guava"}) {
    SCOPED_TRACE(format);
    const std::string f = file(std::string("s.") + format);
    ASSERT_EQ(amq_run("build -t bloom --key-type u64 --format " + std::string(format) + " -n 1000 -o " + q(f),
                      "1\n2\n3\n")
                  .status,
              0);
    const std::string original = slurp(f);
    const auto before = dir_listing(dir.path());

    // A bad key in the middle of the input: an error, and the file is unchanged.
    expect_error(amq_run("add --key-type u64 " + q(f), "10\n11\nbad\n12\n"), "<stdin>:3", "bad");
    EXPECT_EQ(slurp(f), original);
    EXPECT_EQ(dir_listing(dir.path()), before);
    EXPECT_EQ(amq_run("query --key-type u64 " + q(f) + " 10 11").status, 1) << "keys before the bad one were added";

    // Success replaces the file (a new inode: written beside it and renamed over it).
    const ino_t old_inode = inode(f);
    const auto r = amq_run("add --key-type u64 " + q(f), "10\n11\n12\n");
    ASSERT_EQ(r.status, 0) << describe(r);
    EXPECT_NE(slurp(f), original);
    EXPECT_NE(inode(f), old_inode);
    EXPECT_EQ(dir_listing(dir.path()), before);
    EXPECT_EQ(amq_run("query --key-type u64 " + q(f) + " 10 11 12 1").out, "10\n11\n12\n1\n");
  }
  // A file the set cannot be read from: error naming it, nothing written.
  write(file("junk"), std::string(100, 'j'));
  const auto before = dir_listing(dir.path());
  expect_error(amq_run("add " + q(file("junk")) + " k"), file("junk"), "not an amq file");
  EXPECT_EQ(slurp(file("junk")), std::string(100, 'j'));
  EXPECT_EQ(dir_listing(dir.path()), before);
}

// ---- bench --------------------------------------------------------------------------

// Every row, in a smoke run: one build, one timed pass of each kind of lookup, 20,000
// absent keys (the false-positive rates are counts over exactly those).
TEST(CliBench, SyntheticJson) {
  const auto r = run(amq_cmd("bench --synthetic 20000 --json --min-time 0 --repeats 1 --passes 1 --absent 20000"));
  ASSERT_EQ(r.status, 0) << describe(r);
  Json j;
  ASSERT_NO_THROW(j = parse_json(r.out)) << r.out;
  ASSERT_TRUE(j.is_array());
  ASSERT_GE(j.size(), 1u);
  bool guava_row = false;
  for (const Json& row : j) {
    ASSERT_TRUE(row.is_object());
    for (const char* key : {"structure", "params", "n", "bytes", "bits_per_key", "fpp_target", "fpp_measured",
                            "build_ns_per_key", "lookup_pos_ns", "lookup_neg_ns", "batch_lookup_ns"})
      ASSERT_TRUE(row.contains(key)) << key << " missing in a row of " << r.out;
    EXPECT_TRUE(row["structure"].is_string());
    for (const char* key : {"n", "bytes", "bits_per_key", "fpp_target", "fpp_measured", "build_ns_per_key",
                            "lookup_pos_ns", "lookup_neg_ns", "batch_lookup_ns"})
      EXPECT_TRUE(row[key].is_number()) << key;
    // A batch slower than a loop of contains on the same keys (beyond 5%) is flagged.
    // The reference is the loop of contains storing its answers where it was measured
    // (every row with a batch of its own), else the single lookups.
    ASSERT_TRUE(row.contains("batch_inverted")) << r.out;
    ASSERT_TRUE(row.contains("loop_lookup_ns")) << r.out;
    const double batch = row["batch_lookup_ns"].get<double>(), loop = row["loop_lookup_ns"].get<double>();
    const double reference = loop > 0 ? loop : row["lookup_pos_ns"].get<double>();
    ASSERT_TRUE(row["batch_inverted"].is_boolean());
    const std::string structure = row["structure"].get<std::string>();
    EXPECT_EQ(row["batch_inverted"].get<bool>(), batch > 0 && reference > 0 && batch > 1.05 * reference) << structure;
    const double false_positives = row["fpp_measured"].get<double>() * 20000;
    EXPECT_NEAR(false_positives, std::round(false_positives), 1e-6) << structure << ": not a count over 20000 keys";
    if (structure == "BloomFilter (Guava)") {
      EXPECT_GT(loop, 0) << "a row with contains_many measures its loop of contains";
    }
    if (structure == "BloomFilter (Guava)") {
      guava_row = true;
      EXPECT_EQ(row["n"].get<double>(), 20000);
      EXPECT_EQ(row["fpp_target"].get<double>(), 0.01);
      EXPECT_GT(row["fpp_measured"].get<double>(), 0.003);
      EXPECT_LT(row["fpp_measured"].get<double>(), 0.02);
      EXPECT_NEAR(row["bits_per_key"].get<double>(), 8.0 * row["bytes"].get<double>() / 20000, 0.01);
    }
  }
  EXPECT_TRUE(guava_row) << r.out;
}

// amq bench runs amq-bench, whose families register themselves: --list names every one,
// in the table's order, and runs nothing.
TEST(CliBench, ListNamesEveryFamilyInTableOrder) {
  const auto r = run(amq_cmd("bench --list"));
  ASSERT_EQ(r.status, 0) << describe(r);
  EXPECT_EQ(r.out, "bloom\nbloom-family\ncuckoo\nexpandable\nstore\nredis\ngcs\nsuccinct\nbinary-fuse\nribbon\n");
  EXPECT_EQ(r.err, "");
}

TEST(CliBench, TextHeaderNamesTheMachineAndItsMemory) {
  const auto r = run(amq_cmd("bench --synthetic 2000 --only gcs --min-time 0 --repeats 1 --passes 2 --absent 5000"));
  ASSERT_EQ(r.status, 0) << describe(r);
  EXPECT_EQ(r.out.rfind("amq bench — ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(", best of 2 passes after a warm-up, in thread CPU time; builds: median of 1 in wall time"),
            std::string::npos)
      << r.out;
  // The memory line: three latencies, each a positive number of ns, growing with the
  // buffer from 256 KiB (the L2) to 64 MiB (past every LLC here) by at least 2x.
  const size_t at = r.out.find("\nmemory: a dependent random read takes ");
  ASSERT_NE(at, std::string::npos) << r.out;
  double ns[3];
  ASSERT_EQ(std::sscanf(r.out.c_str() + at, "\nmemory: a dependent random read takes %lf ns in 256 KiB, %lf ns in 8 "
                                            "MiB, %lf ns in 64 MiB",
                        &ns[0], &ns[1], &ns[2]),
            3)
      << r.out;
  EXPECT_GT(ns[0], 0.1);
  EXPECT_GT(ns[2], 2 * ns[0]);
  EXPECT_NE(r.out.find("GolombCodedSet"), std::string::npos) << r.out;
}

#endif  // AMQ_CLI

}  // namespace
}  // namespace amq
