#include "kind_flags.hpp"

#include <algorithm>

#include "amq/error.hpp"

namespace amq::cli {
namespace {

struct Use {
  const KindRow* row;
  const OptionSpec* spec;
};

// Every (kind, spec) that takes option `name`, in kind order.
std::vector<Use> uses_of(std::string_view name, bool load) {
  std::vector<Use> uses;
  for (const KindRow* row : kind_rows())
    if (const OptionSpec* spec = row->option(name); spec && (!load || spec->load)) uses.push_back({row, spec});
  return uses;
}

// The option names, in kind order, each once.
std::vector<std::string_view> option_names(bool load) {
  std::vector<std::string_view> names;
  for (const KindRow* row : kind_rows())
    for (const OptionSpec& spec : row->options)
      if ((!load || spec.load) && std::find(names.begin(), names.end(), spec.name) == names.end())
        names.push_back(spec.name);
  return names;
}

bool same_rule(const OptionSpec& a, const OptionSpec& b) {
  return a.type == b.type && option_range_text(a) == option_range_text(b);
}

bool same_help(const OptionSpec& a, const OptionSpec& b) {
  return same_rule(a, b) && a.help == b.help && a.default_text == b.default_text && a.default_help == b.default_help;
}

std::string spec_help(const OptionSpec& s) {
  std::string out(s.help);
  if (s.type == OptionType::choice) out += ", one of " + option_range_text(s);
  else if (s.type != OptionType::flag && s.type != OptionType::text) out += ", " + option_range_text(s);
  if (!s.default_text.empty()) out += " (default " + std::string(s.default_text) + ")";
  else if (!s.default_help.empty()) out += " (default: " + std::string(s.default_help) + ")";
  return out;
}

}  // namespace

std::string kind_option_help(std::string_view name, bool load) {
  const std::vector<Use> uses = uses_of(name, load);
  std::string out;
  for (size_t i = 0; i < uses.size();) {
    size_t j = i + 1;
    while (j < uses.size() && same_help(*uses[j].spec, *uses[i].spec)) ++j;
    if (!out.empty()) out += "; ";
    for (size_t k = i; k < j; ++k) out += std::string(k > i ? ", " : "") + std::string(uses[k].row->name);
    out += ": " + spec_help(*uses[i].spec);
    i = j;
  }
  return out;
}

void KindFlags::add(CLI::App& cmd) {
  for (std::string_view name : option_names(load_)) {
    const std::vector<Use> uses = uses_of(name, load_);
    Flag& f = flags_.emplace_back();
    f.name = std::string(name);
    f.is_flag = uses.front().spec->type == OptionType::flag;
    const std::string flag = "--" + f.name, help = kind_option_help(name, load_);
    if (f.is_flag) {
      f.option = cmd.add_flag(flag, f.on, help);
      continue;
    }
    f.option = cmd.add_option(flag, f.text, help);
    switch (uses.front().spec->type) {
      case OptionType::integer: f.option->type_name("UINT"); break;
      case OptionType::real: f.option->type_name("FLOAT"); break;
      default: f.option->type_name("TEXT"); break;
    }
    const bool one_rule = std::all_of(uses.begin(), uses.end(), [&](const Use& u) { return same_rule(*u.spec, *uses.front().spec); });
    if (!one_rule) continue;
    // Checked as it is parsed, as every other option is; the message without the
    // "--NAME: " that CLI11 adds itself.
    const OptionSpec* spec = uses.front().spec;
    f.option->transform(CLI::Validator(
        [spec](std::string& text) -> std::string {
          try {
            text = option_value_text(parse_option_value(*spec, text));
            return {};
          } catch (const Error& e) {
            const std::string msg = e.what(), prefix = "--" + std::string(spec->name) + ": ";
            return msg.rfind(prefix, 0) == 0 ? msg.substr(prefix.size()) : msg;
          }
        },
        ""));
  }
}

const std::string* KindFlags::given(std::string_view name) const {
  for (const Flag& f : flags_)
    if (f.name == name && f.option->count() > 0) return &f.text;
  return nullptr;
}

OptionMap KindFlags::typed(const KindRow& row) const {
  OptionMap out;
  for (const Flag& f : flags_) {
    if (f.option->count() == 0 || (f.is_flag && !f.on)) continue;
    const OptionSpec* spec = row.option(f.name);
    if (!spec || (load_ && !spec->load))
      throw Error(Errc::invalid_argument, "option --" + f.name + " does not apply to " + std::string(row.name));
    out.emplace(f.name, f.is_flag ? OptionValue(true) : parse_option_value(*spec, f.text));
  }
  return out;
}

void KindFlags::put_text(OptionMap& out) const {
  for (const Flag& f : flags_)
    if (f.option->count() > 0 && (!f.is_flag || f.on)) out.emplace(f.name, f.is_flag ? OptionValue(true) : OptionValue(f.text));
}

}  // namespace amq::cli
