// amq push | pull, build --redis, and the filter that query, add and info --redis
// open: a shared scalable Bloom filter kept in Redis (amq/redis_bloom_filter.hpp),
// which those commands use through AnySet as they use a file.
#include <fmt/core.h>

#include <memory>
#include <string>

#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "amq/redis_bloom_filter.hpp"
#include "cli.hpp"

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

std::unique_ptr<AnySet> open_redis_target(const RedisTarget& t) {
  need_target(t);
  return open_redis_set(t.url, t.name);
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
    in_context(o->file, [&] { RedisBloomFilter::push(o->t.url, o->t.name, data); });
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
