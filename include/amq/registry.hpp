// amq/registry.hpp — every structure kind as a row of data: what it can do, which
// options it takes, how to build, load, open and size it.
//
// The kinds are listed once, in amq/kinds.inc; each kind's adapter (src/any_<kind>.cpp)
// defines its row. AnySet (amq/any_set.hpp) dispatches through the rows, the CLI
// generates `amq build`'s -t choices, per-kind flags, their help and their validation
// from them, and `amq advise` picks a kind from their capabilities and size estimates.
//
//   for (const amq::KindRow& row : amq::kind_rows())
//     if (row.caps.erase) std::cout << row.name << ": " << row.summary << "\n";
//   const amq::KindRow* row = amq::find_kind_row("cuckoo");
//   amq::OptionValue bits = amq::parse_option_value(*row->option("fingerprint-bits"), "12");
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "amq/any_set.hpp"
#include "amq/format.hpp"
#include "amq/numbers.hpp"

namespace amq {

// The type of a kind-specific option, and of its OptionValue once checked: flag (bool,
// given without a value on the command line), integer (uint64_t), real (double), choice
// (std::string, one of `choices`), text (std::string, checked by the kind).
enum class OptionType { flag, integer, real, choice, text };

struct OptionSpec {
  std::string_view name{};  // the CLI's flag without "--"
  OptionType type = OptionType::flag;
  std::string_view help{};  // what it is, in a few words; the range and default are added from the fields below
  // integer: the closed range [int_min, int_max]; real: the range with its bounds.
  uint64_t int_min = 0, int_max = UINT64_MAX;
  double real_min = 0, real_max = 0;
  Bound real_min_bound = Bound::closed, real_max_bound = Bound::closed;
  // choice: the values allowed; integer: when not empty, the only values allowed within
  // the range (a bucket size of 2, 4 or 8).
  std::span<const std::string_view> choices{};
  // The value when the option is not given, as text that parse_option_value reads; empty
  // when the kind chooses it from other parameters, which `default_help` then says.
  std::string_view default_text{};
  std::string_view default_help{};
  // Also taken when loading the kind's outside formats (bip158's --siphash-key ...).
  bool load = false;
};

// The range or choices an option takes, as its messages and help state them: "a whole
// number in 4..32", "a number in (0, 1)", "2, 4 or 8", "auto, always or never", "text".
std::string option_range_text(const OptionSpec& spec);
// Reads `text` as a value of `spec` by the CLI's rules (amq/numbers.hpp): a flag takes
// "", "1", "true", "0" or "false". Throws amq::Error(invalid_argument)
// "--NAME: '...' is out of range: ..." naming the option and the rule broken.
OptionValue parse_option_value(const OptionSpec& spec, std::string_view text);
// `value` as the spec's type: text is parsed as above, a number of the other numeric type
// is converted when it is one the spec takes; then the range is checked. Throws as
// parse_option_value does, or when the value is of a type the spec cannot take.
OptionValue check_option_value(const OptionSpec& spec, const OptionValue& value);
// A value as text, as the command line would give it ("12", "0.7", "auto").
std::string option_value_text(const OptionValue& value);

// What a kind can do, for the CLI's choices and `amq advise`.
struct KindCaps {
  bool dynamic = false;         // takes inserts after it is built (AnySet::is_dynamic)
  bool erase = false;           // can erase keys (AnySet::supports_erase)
  bool counts_exactly = false;  // info().items is a count, not an estimate (SetInfo::items_exact)
  bool grows = false;           // takes keys without a capacity limit, keeping its false-positive bound
  bool fills_past_capacity = false;  // takes keys past its capacity, at a worse rate than asked for
  bool ordered = false;         // keeps its keys in order and can list them
  bool exact = false;           // no false positives (no --fpp)
  bool mappable = false;        // can answer from a memory-mapped file (KindRow::open)
  bool whole_image = false;     // is its own file image: write_to hands it over without a copy
  bool takes_capacity = true;   // --capacity applies
};

// What `amq advise` asks a kind's size estimate about.
struct SizeQuery {
  uint64_t keys = 0;        // n
  double fpp = 0.01;        // the target false-positive rate (ignored by exact kinds)
  double key_bytes = 0;     // average key length, for kinds whose size depends on it; 0: not known
  OptionMap options{};      // the kind's options, checked (check_options); empty: its defaults
};

struct KindRow {
  Kind kind{};
  std::string_view name{};     // kind_name(kind)
  std::string_view summary{};  // one line
  KindCaps caps{};
  std::span<const OptionSpec> options{};
  // The output formats build_set writes for it: "amq" first, then its outside formats.
  std::span<const std::string_view> formats{};
  std::unique_ptr<AnySet> (*build)(const BuildOptions&, std::span<const Bytes>) = nullptr;
  uint64_t (*build_bytes)(const BuildOptions&, std::span<const Bytes>) = nullptr;
  // Reads an amq container of this kind (the key type is the caller's to record).
  std::unique_ptr<AnySet> (*load)(std::span<const std::byte> file) = nullptr;
  // Maps an amq container file of this kind and answers from the mapping; null when the
  // kind is read into memory (caps.mappable says which).
  std::unique_ptr<AnySet> (*open)(const std::string& path) = nullptr;
  // The bytes of the structure (about its amq file's size) for these parameters and
  // options, computed without keys; nullopt when the kind cannot say without more
  // (succinct without SizeQuery::key_bytes). Throws amq::Error for parameters the kind
  // refuses (a rate it cannot reach).
  std::optional<uint64_t> (*estimate)(const SizeQuery&) = nullptr;
  // What a lookup costs, in a few words ("2 random cache lines").
  std::string_view lookup_cost{};
  // The family `amq bench` groups it in.
  std::string_view bench_family{};
  // The info() params whose value is a comma-separated list, one value a layer or level
  // (`amq info --json` writes them as arrays).
  std::span<const std::string_view> list_params{};
  // A remark on how a build honoured its options (a rate rounded to what the format can
  // store), or empty; may be null.
  std::string (*build_note)(const BuildOptions&) = nullptr;

  // The spec of option `name`, or null when the kind does not take it.
  const OptionSpec* option(std::string_view option_name) const noexcept;
  bool writes_format(std::string_view format) const noexcept;
};

// Every kind's row, in Kind order (amq/kinds.inc).
std::span<const KindRow* const> kind_rows() noexcept;
// The row of a kind of this build; throws amq::Error(unsupported) for a value that names
// no kind (a file's header is checked before it gets here).
const KindRow& kind_row(Kind kind);
// The row named `name` (kind_name), or null.
const KindRow* find_kind_row(std::string_view name) noexcept;

// `given` checked against `row`'s options, each value turned into its spec's type: an
// option the kind does not take throws amq::Error(invalid_argument) "option --NAME does
// not apply to KIND"; a value as check_option_value says. With `load`, only the options
// that apply when loading (OptionSpec::load) are taken.
OptionMap check_options(const KindRow& row, const OptionMap& given, bool load = false);

// What a set must do, for advise_kinds (`amq advise`).
struct KindNeeds {
  uint64_t keys = 0;       // n
  double fpp = 0.01;       // the false-positive rate to reach (exact kinds have none)
  double key_bytes = 0;    // average key length, for kinds whose size depends on it; 0: not known
  bool inserts = false;    // keys are added after the build (KindCaps::dynamic)
  bool deletes = false;    // keys are erased (KindCaps::erase)
  bool grows = false;      // more keys than `keys` may come, without a rebuild (KindCaps::grows)
  bool exact = false;      // no false positives
  bool ordered = false;    // the keys can be listed in order
  bool static_only = false;  // built once from all its keys, never changed: static kinds only
};

struct KindAdvice {
  const KindRow* row = nullptr;
  std::optional<uint64_t> bytes{};  // the row's estimate; nullopt when it cannot say (KindRow::estimate)
  double bits_per_key = 0;        // 8 * bytes / keys (0 when bytes is unknown)
};

// The kinds that do what `needs` asks and reach its rate for its number of keys (a kind
// whose estimate refuses the parameters is left out), smallest first, kinds of unknown
// size last, in Kind order among equals. The first is the one to recommend. Empty when
// no kind fits. Throws amq::Error(invalid_argument) for static_only with inserts,
// deletes or grows, for no keys, or for a rate outside (0, 1).
std::vector<KindAdvice> advise_kinds(const KindNeeds& needs);

}  // namespace amq
