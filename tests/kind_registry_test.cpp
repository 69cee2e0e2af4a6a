// The kind registry (amq/registry.hpp): every Kind value has a complete row, and every
// row goes through build → serialize → load → query → info → save → open; the typed
// options are read by one parser; `amq build` offers every row. A kind added to
// amq/kinds.inc without its row does not link; one whose row is incomplete fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "amq/any_set.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "amq/registry.hpp"
#include "test_util.hpp"

namespace amq {
namespace {

std::vector<Bytes> views_of(const std::vector<std::string>& keys) {
  std::vector<Bytes> v;
  for (const auto& k : keys) v.push_back(as_bytes(k));
  return v;
}

std::string param(const SetInfo& i, const std::string& name) {
  for (const auto& [k, v] : i.params)
    if (k == name) return v;
  return "(absent)";
}

// Every value from 1 to the largest names a kind with a row of its own: a kind given an
// enum value but no row, or a gap in the numbering, fails here.
TEST(KindRegistry, EveryKindValueHasACompleteRow) {
  ASSERT_FALSE(all_kinds().empty());
  const auto largest = static_cast<uint16_t>(all_kinds().back());
  ASSERT_EQ(kind_rows().size(), largest);
  for (uint16_t v = 1; v <= largest; ++v) {
    const Kind kind = static_cast<Kind>(v);
    SCOPED_TRACE("kind value " + std::to_string(v));
    ASSERT_NE(kind_name(kind), "unknown");
    const KindRow& row = kind_row(kind);
    EXPECT_EQ(row.kind, kind);
    EXPECT_EQ(row.name, kind_name(kind));
    EXPECT_EQ(find_kind_row(row.name), &row);
    EXPECT_EQ(kind_from_name(row.name), kind);
    EXPECT_EQ(kind_rows()[v - 1], &row) << "kind_rows() is in Kind order";
    EXPECT_FALSE(row.summary.empty());
    EXPECT_FALSE(row.lookup_cost.empty());
    EXPECT_FALSE(row.bench_family.empty());
    ASSERT_FALSE(row.formats.empty());
    EXPECT_EQ(row.formats[0], "amq");
    EXPECT_NE(row.build, nullptr);
    EXPECT_NE(row.build_bytes, nullptr);
    EXPECT_NE(row.load, nullptr);
    EXPECT_NE(row.estimate, nullptr);
    EXPECT_EQ(row.caps.mappable, row.open != nullptr) << "a mappable kind opens by mapping, and only it";
    EXPECT_FALSE(row.caps.exact && row.caps.fills_past_capacity);
    for (const OptionSpec& spec : row.options) {
      SCOPED_TRACE("--" + std::string(spec.name));
      EXPECT_FALSE(spec.help.empty());
      EXPECT_EQ(row.option(spec.name), &spec);
      if (spec.type == OptionType::choice) { EXPECT_FALSE(spec.choices.empty()); }
      if (!spec.default_text.empty()) { EXPECT_NO_THROW((void)parse_option_value(spec, spec.default_text)); }
    }
  }
  EXPECT_THROW((void)kind_row(static_cast<Kind>(largest + 1)), Error);
  EXPECT_EQ(find_kind_row("nope"), nullptr);
}

// Each row, end to end, with its default options and with each option's default given.
TEST(KindRegistry, EveryRowBuildsLoadsQueriesDescribesAndOpens) {
  const auto keys = test::random_keys(3000, 29);
  const auto views = views_of(keys);
  test::TempDir dir;
  for (const KindRow* row : kind_rows()) {
    SCOPED_TRACE(std::string(row->name));
    BuildOptions o;
    o.fpp = 0.01;
    o.key_type = KeyType::str;
    auto set = build_set(row->kind, o, views);
    ASSERT_EQ(set->kind(), row->kind);
    EXPECT_EQ(set->is_dynamic(), row->caps.dynamic);
    EXPECT_EQ(set->supports_erase(), row->caps.erase);
    EXPECT_GT(build_bytes(row->kind, o, views), 0u);

    const std::vector<std::byte> file = set->serialize();
    auto loaded = load_set(file);
    ASSERT_EQ(loaded->kind(), row->kind);
    EXPECT_EQ(loaded->key_type(), KeyType::str);
    std::unique_ptr<bool[]> hits(new bool[views.size()]);
    EXPECT_EQ(loaded->contains_many(views, std::span<bool>(hits.get(), views.size())), views.size());
    for (Bytes k : views) ASSERT_TRUE(loaded->contains(k)) << "false negative";
    if (row->caps.exact) { EXPECT_FALSE(loaded->contains(as_bytes(std::string("\xff\xfe not a key", 13)))); }

    const SetInfo info = loaded->info();
    EXPECT_EQ(info.kind, row->kind);
    EXPECT_EQ(info.bytes, file.size());
    EXPECT_EQ(info.items_exact, row->caps.counts_exactly);
    // A count, or an estimate; a filter that counts its inserts may pass over a key it
    // seems to hold already (a false positive), so it is near, not equal.
    const double n = static_cast<double>(keys.size());
    if (row->caps.counts_exactly && !row->caps.dynamic) {
      EXPECT_EQ(info.items, keys.size());
    }
    EXPECT_NEAR(static_cast<double>(info.items), n, n * (row->caps.counts_exactly ? o.fpp : 0.1));
    if (row->caps.exact) { EXPECT_EQ(info.fpp_expected, 0.0); }
    EXPECT_EQ(param(info, "key_type"), "str");

    const std::string path = dir.file(std::string(row->name) + ".amq");
    set->write_to([&](std::span<const std::byte> bytes) { write_file_atomic(path, bytes); });
    EXPECT_EQ(read_file(path), file) << "write_to writes what serialize gives";
    auto opened = open_set(path);
    ASSERT_EQ(opened->kind(), row->kind);
    for (Bytes k : views) ASSERT_TRUE(opened->contains(k));
    if (row->caps.mappable) { EXPECT_EQ(param(opened->info(), "mapped"), "yes"); }
    EXPECT_EQ(opened->serialize(), file);

    // An option's default, given, builds what leaving it out builds.
    for (const OptionSpec& spec : row->options) {
      if (spec.default_text.empty() || spec.load) continue;
      SCOPED_TRACE("--" + std::string(spec.name) + " " + std::string(spec.default_text));
      BuildOptions with = o;
      with.extra.emplace(std::string(spec.name), parse_option_value(spec, spec.default_text));
      EXPECT_EQ(build_set(row->kind, with, views)->serialize(), file);
    }
  }
}

TEST(KindRegistry, OptionsAreTypedAndCheckedOnce) {
  const KindRow& cuckoo = *find_kind_row("cuckoo");
  const OptionSpec& bits = *cuckoo.option("fingerprint-bits");
  EXPECT_EQ(std::get<uint64_t>(parse_option_value(bits, "12")), 12u);
  EXPECT_EQ(std::get<uint64_t>(parse_option_value(bits, "1.2e1")), 12u) << "the CLI's count rules";
  const auto message = [](auto f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::invalid_argument);
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_EQ(message([&] { parse_option_value(bits, "40"); }),
            "--fingerprint-bits: '40' is out of range: expected a whole number in 4..32");
  EXPECT_EQ(message([&] { parse_option_value(bits, "0x10"); }), "--fingerprint-bits: '0x10' is not a number");
  EXPECT_EQ(message([&] { parse_option_value(*cuckoo.option("bucket-size"), "3"); }),
            "--bucket-size: '3' is not one of 2, 4 or 8");
  const KindRow& sbloom = *find_kind_row("scalable-bloom");
  EXPECT_EQ(std::get<double>(parse_option_value(*sbloom.option("growth"), "3.000000")), 3.0);
  EXPECT_EQ(message([&] { parse_option_value(*sbloom.option("tightening"), "1"); }),
            "--tightening: '1' is out of range: expected a number in (0, 1)");
  EXPECT_EQ(message([&] { parse_option_value(*find_kind_row("succinct")->option("tail-coding"), "sometimes"); }),
            "--tail-coding: 'sometimes' is not one of auto, always or never");
  const OptionSpec& parquet = *find_kind_row("blocked-bloom")->option("parquet");
  EXPECT_EQ(std::get<bool>(parse_option_value(parquet, "1")), true);
  EXPECT_EQ(std::get<bool>(parse_option_value(parquet, "false")), false);

  // check_options: the value's type becomes the spec's; text is parsed; the wrong type,
  // an option of another kind, or one that only applies when loading, is refused.
  const OptionMap typed = check_options(cuckoo, {{"fingerprint-bits", "8"}, {"bucket-size", uint64_t{2}}});
  EXPECT_EQ(std::get<uint64_t>(typed.at("fingerprint-bits")), 8u);
  EXPECT_EQ(std::get<uint64_t>(typed.at("bucket-size")), 2u);
  EXPECT_EQ(std::get<double>(check_options(sbloom, {{"growth", uint64_t{3}}}).at("growth")), 3.0);
  EXPECT_EQ(message([&] { check_options(cuckoo, {{"bucket-size", true}}); }),
            "--bucket-size: takes 2, 4 or 8, not a flag");
  EXPECT_EQ(message([&] { check_options(cuckoo, {{"bucket-size", 2.5}}); }), "--bucket-size: '2.5' is not a whole number");
  EXPECT_EQ(message([&] { check_options(cuckoo, {{"growth", "2"}}); }), "option --growth does not apply to cuckoo");
  const KindRow& gcs = *find_kind_row("gcs");
  EXPECT_NO_THROW(check_options(gcs, {{"golomb-p", "19"}}, true));
  EXPECT_EQ(message([&] { check_options(sbloom, {{"growth", "2"}}, true); }),
            "option --growth does not apply to scalable-bloom");

  // build_set reads the typed values and the text alike.
  const auto keys = test::random_keys(500, 3);
  const auto views = views_of(keys);
  BuildOptions as_text, as_value;
  as_text.extra = {{"fingerprint-bits", "16"}, {"bucket-size", "2"}};
  as_value.extra = {{"fingerprint-bits", uint64_t{16}}, {"bucket-size", uint64_t{2}}};
  const auto a = build_set(Kind::cuckoo, as_text, views), b = build_set(Kind::cuckoo, as_value, views);
  EXPECT_EQ(a->serialize(), b->serialize());
  EXPECT_EQ(param(a->info(), "fingerprint_bits"), "16");
  EXPECT_EQ(param(a->info(), "bucket_size"), "2");
  BuildOptions bad;
  bad.extra = {{"bucket-size", "3"}};
  EXPECT_EQ(message([&] { (void)build_bytes(Kind::cuckoo, bad, views); }), "--bucket-size: '3' is not one of 2, 4 or 8");
  bad = {};
  bad.format = "guava";
  EXPECT_EQ(message([&] { (void)build_set(Kind::cuckoo, bad, views); }),
            "format 'guava' is not available for cuckoo (choose: amq)");
}

// A row's estimate, given options, is the size of the file build_set writes with them.
TEST(KindRegistry, EstimatesFollowTheOptions) {
  const auto keys = test::random_keys(20000, 36);
  const auto views = views_of(keys);
  const std::pair<const char*, OptionMap> cases[] = {
      {"cuckoo", {{"fingerprint-bits", uint64_t{16}}, {"bucket-size", uint64_t{2}}}},
      {"scalable-cuckoo", {{"fingerprint-bits", uint64_t{14}}, {"bucket-size", uint64_t{8}}}},
      {"binary-fuse", {{"fingerprint-bits", uint64_t{16}}, {"arity", uint64_t{4}}}},
      {"scalable-bloom", {{"tightening", 0.8}}},
      {"bloom", {}},
  };
  for (const auto& [name, options] : cases) {
    SCOPED_TRACE(name);
    const KindRow& row = *find_kind_row(name);
    const OptionMap checked = check_options(row, options);
    const std::optional<uint64_t> est = row.estimate(SizeQuery{.keys = keys.size(), .fpp = 0.01, .options = checked});
    ASSERT_TRUE(est.has_value());
    BuildOptions o;
    o.fpp = 0.01;
    o.extra = options;
    const double real = static_cast<double>(build_set(row.kind, o, views)->serialize().size());
    EXPECT_NEAR(static_cast<double>(*est), real, real * 0.01) << "estimate " << *est << ", file " << real;
  }
}

#ifdef AMQ_CLI
// `amq build` offers every row as a -t choice and every option as a flag, and builds
// every kind.
TEST(KindRegistryCli, BuildOffersEveryRow) {
  const std::string amq = "'" + test::cli() + "'";
  const auto help = test::run(amq + " build --help");
  ASSERT_EQ(help.status, 0) << help.err;
  const size_t at = help.out.find("-t,--type TEXT:{");
  ASSERT_NE(at, std::string::npos) << help.out;
  const size_t open = help.out.find('{', at), close = help.out.find('}', at);
  std::vector<std::string> choices;
  for (size_t i = open + 1; i <= close;) {
    const size_t comma = std::min(help.out.find(',', i), close);
    choices.push_back(help.out.substr(i, comma - i));
    i = comma + 1;
  }
  std::vector<std::string> names;
  for (const KindRow* row : kind_rows()) names.emplace_back(row->name);
  EXPECT_EQ(choices, names);
  test::TempDir dir;
  for (const KindRow* row : kind_rows()) {
    SCOPED_TRACE(std::string(row->name));
    for (const OptionSpec& spec : row->options)
      EXPECT_NE(help.out.find("--" + std::string(spec.name) + " "), std::string::npos) << spec.name;
    const std::string file = dir.file(std::string(row->name) + ".amq");
    auto r = test::run(amq + " build -t " + std::string(row->name) + " -o '" + file + "'", "apple\nbanana\ncherry\n");
    ASSERT_EQ(r.status, 0) << r.err;
    r = test::run(amq + " info --json '" + file + "'");
    EXPECT_NE(r.out.find("\"kind\":\"" + std::string(row->name) + "\""), std::string::npos) << r.out;
    r = test::run(amq + " query -c '" + file + "' apple cherry");
    EXPECT_EQ(r.out, "2\n") << r.err;
  }
}

// Every row's bench family is one amq-bench runs (`amq bench --list`), so a new kind
// with no rows in the comparison table fails here.
TEST(KindRegistryCli, EveryRowHasItsBenchFamily) {
  const auto list = test::run("'" + test::cli() + "' bench --list");
  ASSERT_EQ(list.status, 0) << list.err;
  std::vector<std::string> families;
  for (size_t i = 0; i < list.out.size();) {
    const size_t nl = std::min(list.out.find('\n', i), list.out.size());
    if (nl > i) families.push_back(list.out.substr(i, nl - i));
    i = nl + 1;
  }
  for (const KindRow* row : kind_rows()) {
    SCOPED_TRACE(std::string(row->name));
    EXPECT_FALSE(row->bench_family.empty());
    EXPECT_NE(std::find(families.begin(), families.end(), std::string(row->bench_family)), families.end())
        << "bench family '" << row->bench_family << "' is not in: " << list.out;
  }
}
#endif

}  // namespace
}  // namespace amq
