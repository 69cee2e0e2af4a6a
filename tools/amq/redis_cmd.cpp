// amq push | pull, and the --redis forms of build, query and info: a shared
// scalable Bloom filter kept in Redis (amq/redis_bloom_filter.hpp).
#include <fmt/core.h>

#include <memory>
#include <string>

#include "amq/detail/redis_client.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "amq/redis_bloom_filter.hpp"
#include "cli.hpp"
#include "json_out.hpp"

namespace amq::cli {
namespace {

void need_target(const RedisTarget& t) {
  if (t.url.empty()) throw Error(Errc::invalid_argument, "--redis URL is required");
  if (t.name.empty()) throw Error(Errc::invalid_argument, "--name NAME is required with --redis");
}

void add_target_options(CLI::App& cmd, RedisTarget& t) {
  cmd.add_option("--redis", t.url, "Redis server: redis://[user:password@]host:port[/db]")->required();
  cmd.add_option("--name", t.name, "filter name in Redis (its keys are amq:{NAME}:...)")->required();
}

}  // namespace

int redis_build(const RedisTarget& t, const RedisBuildOptions& o, const KeyList& keys) {
  need_target(t);
  if (o.kind != "scalable-bloom")
    throw Error(Errc::invalid_argument, "--redis builds a scalable-bloom (use -t scalable-bloom), not a " + o.kind);
  if (o.format != "amq") throw Error(Errc::invalid_argument, "--format does not apply with --redis");
  if (o.output != "-") throw Error(Errc::invalid_argument, "-o does not apply with --redis (use 'amq pull')");
  const auto views = keys.views();
  const bool explicit_params = o.capacity || o.fpp || o.growth || o.tightening || o.seed;
  std::optional<RedisBloomFilter> f;
  if (!explicit_params) {
    try {
      f.emplace(RedisBloomFilter::open(t.url, t.name));  // add to the filter as it is
    } catch (const Error& e) {
      if (e.code() != Errc::not_found) throw;
    }
  }
  if (!f) {
    RedisBloomFilter::Params p;
    p.initial_capacity = o.capacity.value_or(std::max<uint64_t>(views.size(), 1));
    p.fpp = o.fpp.value_or(0.01);
    if (o.growth) p.growth = *o.growth;
    if (o.tightening) p.tightening = *o.tightening;
    f.emplace(RedisBloomFilter::create(t.url, t.name, p, o.seed.value_or(0)));
  }
  const size_t added = f->insert_many(views);
  fmt::print(stderr, "amq: {} of {} keys were new in redis filter '{}'\n", added, views.size(), t.name);
  return 0;
}

int redis_query(const RedisTarget& t, const std::vector<std::string>& args, KeyType type, bool invert, bool count) {
  need_target(t);
  auto f = RedisBloomFilter::open(t.url, t.name);
  return run_query(args, type, invert, count, [&](std::span<const Bytes> keys, std::span<bool> hits) {
    f.contains_many(std::vector<Bytes>(keys.begin(), keys.end()), hits);
  });
}

int redis_info(const RedisTarget& t, bool json) {
  need_target(t);
  auto f = RedisBloomFilter::open(t.url, t.name);
  const RedisBloomInfo i = f.info();
  // The server without the credentials the URL may carry.
  const detail::RedisUrl u = detail::RedisUrl::parse(t.url);
  const std::string server = u.endpoint() + (u.db ? "/" + std::to_string(u.db) : std::string());
  std::vector<std::pair<std::string, std::string>> params{{"name", i.name}, {"server", server}};
  if (i.kind == Kind::scalable_bloom) {
    params.insert(params.end(), {{"initial_capacity", std::to_string(i.params.initial_capacity)},
                                 {"fpp", fmt::format("{:g}", i.params.fpp)},
                                 {"growth", fmt::format("{:g}", i.params.growth)},
                                 {"tightening", fmt::format("{:g}", i.params.tightening)},
                                 {"layout", std::to_string(i.params.layout)},
                                 {"seed", std::to_string(i.seed)},
                                 {"layers", std::to_string(i.layers.size())},
                                 {"capacity", std::to_string(i.capacity)}});
  } else {
    params.insert(params.end(), {{"hashes", std::to_string(i.layers[0].hashes)},
                                 {"strategy", i.strategy == GuavaStrategy::murmur128_mitz_64 ? "MURMUR128_MITZ_64"
                                                                                             : "MURMUR128_MITZ_32"}});
  }
  params.emplace_back("bits", std::to_string(i.bits));
  params.emplace_back("ttl_ms", std::to_string(i.ttl_ms));
  const uint64_t bytes = i.bits / 8;
  const double bpk = i.items ? 8.0 * static_cast<double>(bytes) / static_cast<double>(i.items) : 0.0;
  const bool exact = i.kind == Kind::scalable_bloom;
  const SetInfo info{.kind = i.kind,
                     .format = "redis",
                     .params = params,
                     .items = i.items,
                     .items_exact = exact,
                     .bytes = bytes,
                     .bits_per_key = bpk,
                     .fpp_expected = i.fpp_expected};
  if (json) {
    Json layers = Json::array();
    for (const auto& l : i.layers)
      layers.push_back({{"capacity", l.capacity}, {"items", l.items}, {"bits", l.bits}, {"hashes", l.hashes}});
    const Json extra = {{"layers", std::move(layers)}};
    print_info_json(info, &extra);
  } else {
    print_info_text(info);
  }
  return 0;
}

void add_push(CLI::App& app, int& status) {
  struct Opts {
    std::string file;
    RedisTarget t;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("push", "upload a bloom or scalable-bloom file to Redis (replaces NAME)");
  cmd->add_option("file", o->file, "set file (amq bloom or scalable-bloom, or a Guava Bloom filter stream)")
      ->required();
  add_target_options(*cmd, o->t);
  cmd->callback([o, &status] {
    const auto data = read_file(o->file);
    try {
      RedisBloomFilter::push(o->t.url, o->t.name, data);
    } catch (const Error& e) {
      throw Error(e.code(), o->file + ": " + e.what());
    }
    status = 0;
  });
}

void add_pull(CLI::App& app, int& status) {
  struct Opts {
    std::string out = "-";
    RedisTarget t;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("pull", "download a filter from Redis as the file it was pushed as");
  add_target_options(*cmd, o->t);
  cmd->add_option("-o,--output", o->out, "output file (default: stdout)");
  cmd->callback([o, &status] {
    write_output(o->out, RedisBloomFilter::pull(o->t.url, o->t.name));
    status = 0;
  });
}

}  // namespace amq::cli
