// Linked with amq::core alone (tests/CMakeLists.txt), as a program that wants a Bloom
// filter and nothing that needs libcrypto or hiredis: core's structures and its outside
// formats (Guava, Parquet, BIP158) work, and the HTTP Cache Digest, which is
// amq::formats', is refused with Errc::unsupported naming that component.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "amq/any_set.hpp"
#include "amq/bloom_filter.hpp"
#include "amq/error.hpp"

namespace {

using amq::BuildOptions;
using amq::Errc;
using amq::Kind;
using amq::LoadOptions;

template <class F>
void expect_error(Errc code, const std::string& fragment, F&& f) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing '" << fragment << "'";
  } catch (const amq::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

struct Keys {
  std::vector<std::string> strings;
  std::vector<amq::Bytes> views;
  explicit Keys(int n) {
    for (int i = 0; i < n; ++i) strings.push_back("https://example.com/" + std::to_string(i));
    for (const auto& s : strings) views.push_back(amq::as_bytes(s));
  }
};

TEST(CoreOnly, CoreFormatsBuildAndLoad) {
  const Keys keys(500);
  const struct {
    Kind kind;
    const char* format;
  } cases[] = {{Kind::bloom, "amq"}, {Kind::bloom, "guava"}, {Kind::blocked_bloom, "parquet"}, {Kind::gcs, "amq"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.format);
    BuildOptions o;
    o.format = c.format;
    const auto set = amq::build_set(c.kind, o, keys.views);
    const auto back = amq::load_set(set->serialize(), LoadOptions{.format = c.format, .extra = {}});
    EXPECT_EQ(back->info().format, c.format);
    for (amq::Bytes k : keys.views) ASSERT_TRUE(back->contains(k));
  }
  BuildOptions o;
  o.format = "bip158";
  o.extra = {{"siphash-key", "000102030405060708090a0b0c0d0e0f"}};
  const auto bip = amq::build_set(Kind::gcs, o, keys.views);
  const auto back = amq::load_set(bip->serialize(), LoadOptions{.format = "bip158", .extra = o.extra});
  EXPECT_EQ(back->info().format, "bip158");
  for (amq::Bytes k : keys.views) ASSERT_TRUE(back->contains(k));
}

TEST(CoreOnly, CacheDigestNamesItsComponent) {
  const Keys keys(10);
  BuildOptions o;
  o.format = "cache-digest";
  o.fpp = 1.0 / 128;
  const std::string component = "is in the amq::formats component, which this program does not link";
  expect_error(Errc::unsupported, component, [&] { amq::build_set(Kind::gcs, o, keys.views); });
  expect_error(Errc::unsupported, component, [&] { amq::build_bytes(Kind::gcs, o, keys.views); });
  o.max_bytes = uint64_t{1} << 30;
  expect_error(Errc::unsupported, component, [&] { amq::build_set(Kind::gcs, o, keys.views); });
  const std::string text = "AKA\n";  // a digest of no entries, as base64url text
  expect_error(Errc::unsupported, component,
               [&] { amq::load_set(amq::as_bytes(text), LoadOptions{.format = "cache-digest", .extra = {}}); });
  expect_error(Errc::unsupported, component, [&] { amq::load_set(amq::as_bytes(text), "cache-digest"); });
}

// Asking another kind for it is the same mistake as without amq::formats: the format is
// named among the gcs's and not offered to a bloom filter.
TEST(CoreOnly, FormatListsAreUnchanged) {
  const Keys keys(10);
  BuildOptions o;
  o.format = "nope";
  expect_error(Errc::invalid_argument, "format 'nope' is not available for gcs (choose: amq, bip158, cache-digest)",
               [&] { amq::build_set(Kind::gcs, o, keys.views); });
  o.format = "cache-digest";
  expect_error(Errc::invalid_argument, "format 'cache-digest' is not available for bloom (choose: amq, guava)",
               [&] { amq::build_set(Kind::bloom, o, keys.views); });
}

}  // namespace
