#include <algorithm>
#include <utility>

#include "bench_table.hpp"

namespace amq::bench {

namespace {

// Filled by the families' static RegisterFamily objects before main runs (a function
// static, so it exists whichever file's objects are constructed first).
std::vector<Family>& registered() {
  static std::vector<Family> families;
  return families;
}

}  // namespace

RegisterFamily::RegisterFamily(std::string name, int order, FamilyFn run) {
  auto& all = registered();
  Family f{std::move(name), order, run};
  const auto at = std::upper_bound(all.begin(), all.end(), f, [](const Family& a, const Family& b) {
    return a.order != b.order ? a.order < b.order : a.name < b.name;
  });
  all.insert(at, std::move(f));
}

const std::vector<Family>& families() { return registered(); }

std::vector<std::string> family_names() {
  std::vector<std::string> names;
  for (const Family& f : families()) names.push_back(f.name);
  return names;
}

void run_all(const Options& options, const Sink& sink) {
  const Dataset d = load_dataset(options);
  for (const Family& f : families()) {
    if (!options.only.empty() && f.name.find(options.only) == std::string::npos) continue;
    f.run(options, d, sink);
  }
}

}  // namespace amq::bench
