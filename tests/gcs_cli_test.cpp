// The amq CLI with Golomb-coded sets: the amq container, raw BIP158 filters and HTTP
// Cache Digests.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "amq/format.hpp"
#include "amq/golomb_coded_set.hpp"
#include "test_util.hpp"

#ifdef AMQ_CLI
namespace {

using amq::test::run;
using amq::test::TempDir;

std::string amq_cmd() {
  std::string s(1, '\'');
  s.append(amq::test::cli());
  s.push_back('\'');
  return s;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

TEST(GcsCli, BuildQueryInfo) {
  TempDir dir;
  std::string keys, others;
  for (int i = 0; i < 5000; ++i) keys += "key-" + std::to_string(i) + "\n";
  for (int i = 0; i < 20000; ++i) others += "other-" + std::to_string(i) + "\n";
  write(dir.file("keys"), keys);
  const std::string set = dir.file("s.amq");
  auto r = run(amq_cmd() + " build -t gcs -p 0.001 -o '" + set + "' '" + dir.file("keys") + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run(amq_cmd() + " query '" + set + "'", keys);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, keys);  // every key, in order
  r = run(amq_cmd() + " query -c '" + set + "'", others);
  EXPECT_LT(std::stoi(r.out), 60);  // 20000 x 0.001 expected
  r = run(amq_cmd() + " query -v -c '" + set + "'", keys);
  EXPECT_EQ(r.out, "0\n");
  EXPECT_EQ(r.status, 1);
  r = run(amq_cmd() + " info --json '" + set + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"kind\":\"gcs\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"items\":5000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"range_per_key\":1000,"), std::string::npos) << r.out;
  r = run(amq_cmd() + " add '" + set + "' newkey");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("static"), std::string::npos) << r.err;
  // Corrupted file: a clear error, exit 2.
  std::string bytes = slurp(set);
  bytes[bytes.size() / 2] ^= 1;
  write(dir.file("bad.amq"), bytes);
  r = run(amq_cmd() + " query '" + dir.file("bad.amq") + "' key-1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("checksum"), std::string::npos) << r.err;
}

// The genesis block of testnet: one output script, key = the first 16 bytes of the block
// hash 000000000933ea01...43 in internal order; BIP158's vector gives the filter 019dfca8.
TEST(GcsCli, Bip158GenesisFilter) {
  TempDir dir;
  const std::string key = "43497fd7f826957108f4a30fd9cec3ae";
  const std::string script =
      "4104678afdb0fe5548271967f1a67130b7105cd6a828e03909a67962e0ea1f61deb649f6bc3f4cef38c4f35504e51ec112de5c38"
      "4df7ba0b8d578a4c702b6bf11d5fac";
  write(dir.file("elements"), script + "\n" + script + "\n");  // a repeat counts once
  const std::string out = dir.file("f.bip158");
  auto r = run(amq_cmd() + " build -t gcs --format bip158 --siphash-key " + key + " --key-type hex -o '" + out +
               "' '" + dir.file("elements") + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(out), std::string("\x01\x9d\xfc\xa8", 4));
  r = run(amq_cmd() + " query --format bip158 --siphash-key " + key + " --key-type hex '" + out + "' " + script +
          " 00ff");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, script + "\n");
  // Explicit P and M that are the defaults give the same bytes.
  r = run(amq_cmd() + " build -t gcs --format bip158 --siphash-key " + key +
          " --golomb-p 19 --golomb-m 784931 --key-type hex -o - '" + dir.file("elements") + "' | od -An -tx1");
  EXPECT_NE(r.out.find("01 9d fc a8"), std::string::npos) << r.out << r.err;
  // Other parameters: a different filter that still answers.
  r = run(amq_cmd() + " build -t gcs --format bip158 --siphash-key " + key + " --golomb-p 10 --golomb-m 1000 " +
          "--key-type hex -o '" + dir.file("g") + "' '" + dir.file("elements") + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run(amq_cmd() + " query --format bip158 --siphash-key " + key + " --golomb-p 10 --golomb-m 1000 " +
          "--key-type hex -c '" + dir.file("g") + "' " + script);
  EXPECT_EQ(r.out, "1\n");
  // Errors: no key, a bad key, bip158 options on another format.
  r = run(amq_cmd() + " build -t gcs --format bip158 --key-type hex -o '" + out + "' '" + dir.file("elements") + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--siphash-key"), std::string::npos) << r.err;
  r = run(amq_cmd() + " query --format bip158 --siphash-key 0011 --key-type hex '" + out + "' 00");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("32 hex digits"), std::string::npos) << r.err;
  r = run(amq_cmd() + " build -t gcs --siphash-key " + key + " -o '" + dir.file("x") + "' '" + dir.file("elements") + "'");
  EXPECT_EQ(r.status, 2);
  r = run(amq_cmd() + " info --format bip158 '" + out + "'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("bip158"), std::string::npos);
  // A truncated filter is refused.
  write(dir.file("short"), std::string("\x05\x9d", 2));
  r = run(amq_cmd() + " query --format bip158 --siphash-key " + key + " --key-type hex '" + dir.file("short") + "' 00");
  EXPECT_EQ(r.status, 2);
}

TEST(GcsCli, CacheDigest) {
  TempDir dir;
  std::string urls;
  for (int i = 0; i < 100; ++i) urls += "https://example.com/static/" + std::to_string(i) + ".js\n";
  urls += "https://example.com/app.css\t\"etag-1\"\n";
  write(dir.file("urls"), urls);
  const std::string out = dir.file("digest.txt");
  auto r = run(amq_cmd() + " build -t gcs --format cache-digest -p 0.0078125 -o '" + out + "' '" +
               dir.file("urls") + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string text = slurp(out);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_\n"),
            std::string::npos);
  const auto d = amq::CacheDigest::parse(amq::base64url_decode(text));
  EXPECT_EQ(d.log2_n(), 7u);  // 101 rounds to 128
  EXPECT_EQ(d.log2_p(), 7u);
  EXPECT_TRUE(d.contains("https://example.com/app.css", "\"etag-1\""));
  r = run(amq_cmd() + " query --format cache-digest '" + out + "'", urls);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, urls);
  r = run(amq_cmd() + " info --format cache-digest --json '" + out + "'");
  EXPECT_NE(r.out.find("\"log2_p\":7,"), std::string::npos) << r.out;

  // The draft's "AeLA": N = 1, P = 128, the single value 0x0b. A URL whose SHA-256
  // starts with the 7 bits 0001011 is in it; one starting otherwise is not.
  write(dir.file("aela"), "AeLA\n");
  std::string in_url, out_url;
  for (int i = 0; in_url.empty() || out_url.empty(); ++i) {
    const std::string u = "https://h2o.example/" + std::to_string(i);
    (amq::CacheDigest::hash_value(u, "", 7) == 0x0b ? in_url : out_url) = u;
  }
  r = run(amq_cmd() + " query --format cache-digest '" + dir.file("aela") + "' '" + in_url + "' '" + out_url + "'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, in_url + "\n");
  write(dir.file("bad"), "Ae*A\n");
  r = run(amq_cmd() + " query --format cache-digest '" + dir.file("bad") + "' x");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("base64url"), std::string::npos) << r.err;
}

// A file whose hasher amq does not have: one rule for query and info, an error naming
// the file. Hasher id 0 names no hasher: the file is corrupt, for query and info alike.
TEST(GcsCli, HasherTheCliCannotCompute) {
  TempDir dir;
  std::vector<std::string> keys = {"apple", "pear", "plum"};
  const auto file = amq::GolombCodedSet::build(keys).serialize();
  auto with_hasher = [&](uint32_t id) {
    const amq::Container c = amq::parse_container(file);
    std::vector<std::byte> params(c.params.begin(), c.params.end());
    std::memcpy(params.data(), &id, 4);
    const auto out = amq::write_container(amq::Kind::gcs, params, c.payload);
    return std::string(reinterpret_cast<const char*>(out.data()), out.size());
  };
  write(dir.file("user.amq"), with_hasher(1000));
  write(dir.file("zero.amq"), with_hasher(0));
  for (const std::string key : {" apple", ""}) {  // query, info
    const std::string cmd = key.empty() ? " info " : " query ";
    auto r = run(amq_cmd() + cmd + "'" + dir.file("user.amq") + "'" + key);
    EXPECT_EQ(r.status, 2) << cmd << r.out;
    EXPECT_TRUE(r.out.empty()) << cmd << r.out;
    EXPECT_EQ(r.err.rfind("amq: " + dir.file("user.amq") + ": ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("user-defined hasher (id 1000), which amq cannot compute"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("contains_hash"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    r = run(amq_cmd() + cmd + "'" + dir.file("zero.amq") + "'" + key);
    EXPECT_EQ(r.status, 2) << cmd << r.out;
    EXPECT_TRUE(r.out.empty()) << cmd << r.out;
    EXPECT_EQ(r.err.rfind("amq: " + dir.file("zero.amq") + ": ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("hasher id 0 names no hasher"), std::string::npos) << r.err;
  }
}

}  // namespace
#endif
