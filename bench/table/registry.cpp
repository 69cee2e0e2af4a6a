#include "bench_table.hpp"

namespace amq::bench {

namespace {

using Fn = void (*)(const Options&, const Dataset&, const Sink&);
const std::pair<const char*, Fn> benches[] = {
    {"bloom", bench_bloom},
    {"bloom-family", bench_bloom_family},
    {"cuckoo", bench_cuckoo},
    {"expandable", bench_expandable},
    {"store", bench_store},
    {"redis", bench_redis},
    {"gcs", bench_gcs},
    {"succinct", bench_succinct},
    {"binary-fuse", bench_binary_fuse},
    {"ribbon", bench_ribbon},
};

}  // namespace

std::vector<std::string> family_names() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : benches) names.emplace_back(name);
  return names;
}

void run_all(const Options& options, const Sink& sink) {
  const Dataset d = load_dataset(options);
  for (const auto& [name, fn] : benches) {
    if (!options.only.empty() && std::string(name).find(options.only) == std::string::npos) continue;
    fn(options, d, sink);
  }
}

}  // namespace amq::bench
