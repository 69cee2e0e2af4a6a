// The table of kind rows, generated from amq/kinds.inc (each row is defined by its kind's
// adapter, src/any_<kind>.cpp), and the typed options' one parser.
#include "amq/registry.hpp"

#include <algorithm>
#include <string>

#include "amq/error.hpp"
#include "any_adapters.hpp"

namespace amq {
namespace {

const KindRow* const kRows[] = {
#define AMQ_KIND(id, value, name) &detail::kRow_##id,
#include "amq/kinds.inc"
#undef AMQ_KIND
};

// "a, b or c".
std::string list_text(std::span<const std::string_view> items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += i + 1 == items.size() ? " or " : ", ";
    out += items[i];
  }
  return out;
}

[[noreturn]] void bad_option(const OptionSpec& spec, const std::string& why) {
  throw Error(Errc::invalid_argument, "--" + std::string(spec.name) + ": " + why);
}

// "'TEXT' WHY" (built by appending: GCC 12 warns wrongly about a chain of + here).
[[noreturn]] void bad_value(const OptionSpec& spec, std::string_view text, std::string_view why) {
  std::string msg = "'";
  msg.append(text).append("' ").append(why);
  bad_option(spec, msg);
}

const char* type_text(const OptionValue& v) {
  switch (v.index()) {
    case 0: return "a flag";
    case 1: return "an integer";
    case 2: return "a number";
    default: return "text";
  }
}

}  // namespace

std::string option_range_text(const OptionSpec& spec) {
  switch (spec.type) {
    case OptionType::flag: return "a flag";
    case OptionType::integer:
      if (!spec.choices.empty()) return list_text(spec.choices);
      return "a whole number " + count_range_text(spec.int_min, spec.int_max);
    case OptionType::real:
      return "a number " + real_range_text(spec.real_min, spec.real_min_bound, spec.real_max, spec.real_max_bound);
    case OptionType::choice: return list_text(spec.choices);
    case OptionType::text: break;
  }
  return "text";
}

OptionValue parse_option_value(const OptionSpec& spec, std::string_view text) {
  const auto one_of = [&] {
    return std::find(spec.choices.begin(), spec.choices.end(), text) != spec.choices.end();
  };
  try {
    switch (spec.type) {
      case OptionType::flag:
        if (text.empty() || text == "1" || text == "true") return true;
        if (text == "0" || text == "false") return false;
        bad_value(spec, text, "is not a flag value (true or false)");
      case OptionType::integer: {
        const uint64_t v = parse_count(text, spec.int_min, spec.int_max);
        if (!spec.choices.empty() && !one_of())
          bad_value(spec, text, "is not one of " + list_text(spec.choices));
        return v;
      }
      case OptionType::real:
        return parse_real(text, spec.real_min, spec.real_min_bound, spec.real_max, spec.real_max_bound);
      case OptionType::choice:
        if (!one_of()) bad_value(spec, text, "is not one of " + list_text(spec.choices));
        return std::string(text);
      case OptionType::text: return std::string(text);
    }
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.rfind("--", 0) == 0) throw;
    bad_option(spec, msg);
  }
  bad_option(spec, "unknown option type");
}

std::string option_value_text(const OptionValue& value) {
  if (const bool* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const uint64_t* u = std::get_if<uint64_t>(&value)) return std::to_string(*u);
  if (const double* d = std::get_if<double>(&value)) return shortest_text(*d);
  return std::get<std::string>(value);
}

OptionValue check_option_value(const OptionSpec& spec, const OptionValue& value) {
  const bool is_text = std::holds_alternative<std::string>(value);
  const bool is_flag = std::holds_alternative<bool>(value);
  const bool numeric = !is_text && !is_flag;
  bool fits = is_text;
  switch (spec.type) {
    case OptionType::flag: fits = fits || is_flag; break;
    case OptionType::integer:
    case OptionType::real: fits = fits || numeric; break;
    case OptionType::choice:
    case OptionType::text: break;
  }
  if (!fits) bad_option(spec, std::string("takes ") + option_range_text(spec) + ", not " + type_text(value));
  return parse_option_value(spec, option_value_text(value));
}

const OptionSpec* KindRow::option(std::string_view option_name) const noexcept {
  for (const OptionSpec& s : options)
    if (s.name == option_name) return &s;
  return nullptr;
}

bool KindRow::writes_format(std::string_view format) const noexcept {
  return std::find(formats.begin(), formats.end(), format) != formats.end();
}

std::span<const KindRow* const> kind_rows() noexcept { return kRows; }

const KindRow& kind_row(Kind kind) {
  for (const KindRow* row : kRows)
    if (row->kind == kind) return *row;
  throw Error(Errc::unsupported, "structure kind " + std::to_string(static_cast<unsigned>(kind)) +
                                     " is not available in this build");
}

const KindRow* find_kind_row(std::string_view name) noexcept {
  for (const KindRow* row : kRows)
    if (row->name == name) return row;
  return nullptr;
}

OptionMap check_options(const KindRow& row, const OptionMap& given, bool load) {
  OptionMap out;
  for (const auto& [name, value] : given) {
    const OptionSpec* spec = row.option(name);
    if (!spec || (load && !spec->load))
      throw Error(Errc::invalid_argument, "option --" + name + " does not apply to " + std::string(row.name));
    out.emplace(name, check_option_value(*spec, value));
  }
  return out;
}

std::vector<KindAdvice> advise_kinds(const KindNeeds& needs) {
  if (needs.static_only && (needs.inserts || needs.deletes || needs.grows))
    throw Error(Errc::invalid_argument, "a static set takes no inserts, deletes or growth");
  if (needs.keys == 0) throw Error(Errc::invalid_argument, "advise: the number of keys must be at least 1");
  if (!(needs.fpp > 0 && needs.fpp < 1))
    throw Error(Errc::invalid_argument, "advise: the false-positive rate must be in (0, 1)");
  std::vector<KindAdvice> out;
  for (const KindRow* row : kRows) {
    const KindCaps& c = row->caps;
    if ((needs.inserts && !c.dynamic) || (needs.deletes && !c.erase) || (needs.grows && !c.grows) ||
        (needs.exact && !c.exact) || (needs.ordered && !c.ordered) || (needs.static_only && c.dynamic))
      continue;
    KindAdvice a{.row = row};
    try {
      a.bytes = row->estimate(SizeQuery{.keys = needs.keys, .fpp = needs.fpp, .key_bytes = needs.key_bytes});
    } catch (const Error&) {
      continue;  // the kind cannot reach this rate, or hold this many keys
    }
    if (a.bytes) a.bits_per_key = 8.0 * static_cast<double>(*a.bytes) / static_cast<double>(needs.keys);
    out.push_back(a);
  }
  std::stable_sort(out.begin(), out.end(), [](const KindAdvice& x, const KindAdvice& y) {
    if (x.bytes.has_value() != y.bytes.has_value()) return x.bytes.has_value();
    return x.bytes.value_or(0) < y.bytes.value_or(0);
  });
  return out;
}

}  // namespace amq
