// amq advise: the kinds that do what a set needs, their size and lookup cost, and the
// command that builds the recommended one — from the kind rows' capabilities and size
// estimates (amq/registry.hpp).
#include <fmt/core.h>

#include <memory>
#include <string>
#include <vector>

#include "amq/error.hpp"
#include "amq/registry.hpp"
#include "cli.hpp"
#include "json_out.hpp"
#include "numbers.hpp"

namespace amq::cli {
namespace {

// `amq build` for the kind: -n where the kind is sized by it, -p where it has a rate.
std::string build_command(const KindRow& row, const KindNeeds& needs) {
  std::string cmd = "amq build -t " + std::string(row.name);
  if (row.caps.takes_capacity) cmd += fmt::format(" -n {}", needs.keys);
  if (!row.caps.exact) cmd += fmt::format(" -p {:g}", needs.fpp);
  return cmd + " -o set.amq KEYFILE";
}

std::vector<std::string> need_names(const KindNeeds& n) {
  std::vector<std::string> out;
  if (n.inserts) out.emplace_back("inserts");
  if (n.deletes) out.emplace_back("deletes");
  if (n.grows) out.emplace_back("grows");
  if (n.exact) out.emplace_back("exact");
  if (n.ordered) out.emplace_back("ordered");
  if (n.static_only) out.emplace_back("static");
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

// The advice as one JSON object.
void print_advice_json(const KindNeeds& needs, const std::vector<KindAdvice>& fits, const std::string& why,
                       const std::string& command) {
  const KindAdvice& best = fits.front();
  Json j = Json::object();
  j["keys"] = needs.keys;
  j["fpp"] = needs.fpp;
  Json names = Json::array();
  for (const auto& n : need_names(needs)) names.push_back(n);
  j["needs"] = std::move(names);
  Json kinds = Json::array();
  for (const KindAdvice& a : fits) {
    Json k = Json::object();
    k["kind"] = a.row->name;
    k["bytes"] = a.bytes ? Json(*a.bytes) : Json(nullptr);
    k["bits_per_key"] = a.bytes ? Json(a.bits_per_key) : Json(nullptr);
    k["lookup_cost"] = a.row->lookup_cost;
    k["recommended"] = &a == &best;
    kinds.push_back(std::move(k));
  }
  j["kinds"] = std::move(kinds);
  j["recommended"] = best.row->name;
  j["reason"] = why;
  j["command"] = command;
  fmt::print("{}\n", json_text(j));
}

// The advice as a table, the recommended kind starred, then its command.
void print_advice_table(const KindNeeds& needs, const std::vector<KindAdvice>& fits, const std::string& why,
                        const std::string& command) {
  const KindAdvice& best = fits.front();
  fmt::print("{} keys, fpp {:g}, needs: {}\n", needs.keys, needs.fpp, joined(need_names(needs)));
  size_t w = 4;
  for (const KindAdvice& a : fits) w = std::max(w, a.row->name.size());
  fmt::print("  {:<{}}  {:>14}  {:>8}  {}\n", "kind", w, "bytes", "bits/key", "lookup");
  for (const KindAdvice& a : fits)
    fmt::print("{} {:<{}}  {:>14}  {:>8}  {}\n", &a == &best ? '*' : ' ', a.row->name, w,
               a.bytes ? std::to_string(*a.bytes) : std::string("?"),
               a.bytes ? fmt::format("{:.2f}", a.bits_per_key) : std::string("?"), a.row->lookup_cost);
  fmt::print("recommended: {} ({})\n  {}\n", best.row->name, why, command);
}

}  // namespace

void add_advise(CLI::App& app, int& status) {
  struct Opts {
    KindNeeds needs;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "advise",
      "list the kinds that do what a set needs, smallest first, with their size and lookup cost, and the "
      "command that builds the recommended one (the smallest that fits)");
  cmd->add_option("-n,--capacity", o->needs.keys, "number of keys the set holds")
      ->required()
      ->transform(count_in(1));
  cmd->add_option("-p,--fpp", o->needs.fpp, "target false-positive rate, in (0, 1) (ignored by exact kinds)")
      ->transform(real_in(0, Bound::open, 1, Bound::open))
      ->default_val(0.01);
  auto* inserts = cmd->add_flag("--inserts", o->needs.inserts, "keys are added after the set is built");
  auto* deletes = cmd->add_flag("--deletes", o->needs.deletes, "keys are removed");
  auto* grows = cmd->add_flag("--grows", o->needs.grows, "more keys than -n may come, without a rebuild");
  cmd->add_flag("--exact", o->needs.exact, "no false positives");
  cmd->add_flag("--ordered", o->needs.ordered, "the keys can be listed, in order");
  cmd->add_flag("--static", o->needs.static_only,
                "the set is built once from all its keys and never changed: static kinds only")
      ->excludes(inserts)
      ->excludes(deletes)
      ->excludes(grows);
  cmd->add_option("--key-bytes", o->needs.key_bytes,
                  "average key length in bytes, for kinds whose size depends on the keys (succinct; without it "
                  "their size is not estimated)")
      ->transform(real_in(0, Bound::open, 1e9, Bound::closed));
  cmd->add_flag("--json", o->json, "one JSON object");
  cmd->callback([o, &status] {
    const KindNeeds& needs = o->needs;
    const std::vector<KindAdvice> fits = advise_kinds(needs);
    if (fits.empty())
      throw Error(Errc::invalid_argument, "no kind fits " + joined(need_names(needs)) + " for " +
                                              std::to_string(needs.keys) + " keys at fpp " +
                                              fmt::format("{:g}", needs.fpp));
    const KindAdvice& best = fits.front();
    const std::string command = build_command(*best.row, needs);
    const std::string why = best.bytes ? "the smallest that fits" : "its size depends on the keys: give --key-bytes to estimate it";
    if (o->json)
      print_advice_json(needs, fits, why, command);
    else
      print_advice_table(needs, fits, why, command);
    status = 0;
  });
}

}  // namespace amq::cli
