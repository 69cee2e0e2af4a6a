// The kinds' own options as command-line flags, generated from the kind rows
// (amq/registry.hpp): one flag a name, whatever kinds take it, with help that states
// each kind's range and default, and values read by the option's spec.
#pragma once

#include <CLI/CLI.hpp>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "amq/registry.hpp"

namespace amq::cli {

class KindFlags {
 public:
  // `load`: only the options that apply when loading an outside format (query, info:
  // bip158's --siphash-key, ...); else every kind's build options.
  explicit KindFlags(bool load) : load_(load) {}
  KindFlags(const KindFlags&) = delete;
  KindFlags& operator=(const KindFlags&) = delete;

  // Adds the flags to `cmd`. A flag whose kinds all read it alike is checked as it is
  // parsed; one whose kinds differ (--fingerprint-bits: 4..32 for cuckoo, 1..32 for
  // binary-fuse) is checked by typed() once the kind is known.
  void add(CLI::App& cmd);
  // The flags given, read by `row`'s specs. Throws amq::Error(invalid_argument): "option
  // --NAME does not apply to KIND", or the spec's message for a bad value.
  OptionMap typed(const KindRow& row) const;
  // The flags given, as text, for load_set to check against the format's kind.
  void put_text(OptionMap& out) const;
  // The text of a flag given ("" for a flag without value), or null when not given.
  const std::string* given(std::string_view name) const;

 private:
  struct Flag {
    std::string name;
    std::string text;
    bool on = false;  // OptionType::flag
    bool is_flag = false;
    CLI::Option* option = nullptr;
  };
  bool load_;
  std::deque<Flag> flags_;  // stable addresses: CLI11 writes into them
};

// The help of one option name across the kinds that take it:
// "cuckoo, scalable-cuckoo: fingerprint bits f, a whole number in 4..32 (default: from --fpp); binary-fuse: ...".
std::string kind_option_help(std::string_view name, bool load);

}  // namespace amq::cli
