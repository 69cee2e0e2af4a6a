// RedisBloomFilter rows: batched adds and lookups (one Lua script round trip per
// batch) from 1 and 4 clients, beside the seed's design — one GETBIT or SETBIT round
// trip per bit — on the same private redis-server, started on a free loopback port.
#include <fmt/core.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <thread>

#include "amq/detail/bloom_layers.hpp"
#include "amq/detail/redis_client.hpp"
#include "amq/error.hpp"
#include "amq/redis_bloom_filter.hpp"
#include "bench_table.hpp"
#include "redis_process.hpp"

namespace amq::bench {
namespace {

// A redis-server of our own, with no persistence, in a temporary directory removed at the end.
class Server {
 public:
  Server() : dir_(make_dir()), process_(dir_, test::free_port()) { process_.start(); }
  ~Server() {
    process_.stop();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(process_.port()); }

 private:
  static std::string make_dir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "amq-bench-redis-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw Error(Errc::io, "mkdtemp failed");
    return tmpl;
  }
  std::string dir_;
  test::RedisProcess process_;
};

double per_s(size_t n, double ns) { return ns > 0 ? static_cast<double>(n) * 1e9 / ns : 0; }

// Runs f(i) on `clients` threads at once, each with its own connection; wall time in ns.
template <class F>
double parallel_ns(int clients, F&& f) {
  std::vector<std::thread> t;
  const double a = now_ns();
  for (int i = 0; i < clients; ++i) t.emplace_back([&, i] { f(i); });
  for (auto& x : t) x.join();
  return now_ns() - a;
}

// Keys a second added and looked up (present keys).
struct Rates {
  double adds = 0, looks = 0;
};

// One RedisBloomFilter row: `clients` connections add and look up a slice of the keys
// each, in batches; `big` sizes layer 0 for 100x the keys.
Rates bench_batched(const Options& o, const Dataset& d, const Sink& sink, const std::string& url, int clients,
                    bool big) {
  const uint64_t n = d.keys.size();
  const std::span<const Bytes> keys(d.key_views), absent(d.absent_views);
  Row row{.structure = fmt::format("RedisBloomFilter {} client{}{}", clients, clients > 1 ? "s" : "",
                                   big ? " big" : ""),
          .fpp_target = o.fpp};
  const std::string name = fmt::format("bench{}{}", clients, big ? "big" : "");
  const detail::ScalableParams pp{.initial_capacity = big ? 100 * n : n, .fpp = o.fpp};
  std::vector<RedisBloomFilter> f;
  for (int i = 0; i < clients; ++i) f.push_back(RedisBloomFilter::create(url, name, pp));
  auto slice = [&](std::span<const Bytes> all, int i) {
    const size_t per = (all.size() + static_cast<size_t>(clients) - 1) / static_cast<size_t>(clients);
    const size_t from = std::min(all.size(), per * static_cast<size_t>(i));
    return all.subspan(from, std::min(per, all.size() - from));
  };
  const double add_ns = parallel_ns(clients, [&](int i) { f[static_cast<size_t>(i)].insert_many(slice(keys, i)); });
  std::vector<std::unique_ptr<bool[]>> hits;
  for (int i = 0; i < clients; ++i) hits.emplace_back(new bool[keys.size() + absent.size() + 1]);
  const double pos_ns = median_ns(o.repeats, [&] {
    parallel_ns(clients, [&](int i) {
      auto s = slice(keys, i);
      f[static_cast<size_t>(i)].contains_many(s, std::span<bool>(hits[static_cast<size_t>(i)].get(), s.size()));
    });
  });
  size_t fp = 0;
  const double neg_ns = median_ns(o.repeats, [&] {
    fp = 0;
    std::vector<size_t> fps(static_cast<size_t>(clients));
    parallel_ns(clients, [&](int i) {
      auto s = slice(absent, i);
      fps[static_cast<size_t>(i)] =
          f[static_cast<size_t>(i)].contains_many(s, std::span<bool>(hits[static_cast<size_t>(i)].get(), s.size()));
    });
    for (size_t x : fps) fp += x;
  });
  const auto info = f[0].info();
  row.params = fmt::format("layers={} batch={}", info.layers.size(), RedisOptions{}.batch);
  row.bytes = info.bits / 8;
  row.fpp_measured = absent.empty() ? 0 : static_cast<double>(fp) / static_cast<double>(absent.size());
  row.build_ns_per_key = add_ns / static_cast<double>(n);
  row.lookup_pos_ns = pos_ns / static_cast<double>(n);
  row.lookup_neg_ns = absent.empty() ? 0 : neg_ns / static_cast<double>(absent.size());
  row.batch_lookup_ns = row.lookup_pos_ns;
  const Rates r{per_s(n, add_ns), per_s(n, pos_ns)};
  row.note = fmt::format("add {:.0f} keys/s, lookup {:.0f} keys/s", r.adds, r.looks);
  finish_row(row, d);
  sink(row);
  f[0].destroy();
  return r;
}

// The seed's design: every bit is its own round trip — to add, GETBIT and, if it was 0,
// SETBIT (its BitArray.set); to look up, GETBIT until a 0 — on one bitmap sized like our
// layer 0. (The seed also reads its cursor and BITCOUNTs the bitmap on every add; that
// is left out, in its favour.) `batched`: the 1-client batched row's rates, to compare.
void bench_seed_design(const Options& o, const Dataset& d, const Sink& sink, const std::string& url,
                       const Rates& batched) {
  const uint64_t n = d.keys.size();
  const std::span<const Bytes> keys(d.key_views), absent(d.absent_views);
  Row row{.structure = "seed design (1 RTT/bit)", .fpp_target = o.fpp};
  const auto g = detail::layer_geometry(detail::ScalableParams{.initial_capacity = n, .fpp = o.fpp}, 0);
  const size_t sample = std::min<size_t>(n, 2000);
  detail::RedisClient c(url);
  const std::string key = "seed:bitmap";
  const Xxh3Hasher h{0};
  const double add_ns = median_ns(o.repeats, [&] {
    c.command(key, {"DEL", key});  // each run adds to an empty bitmap
    for (size_t i = 0; i < sample; ++i) {
      const auto pp = detail::probe_pair(h(keys[i]));
      for (uint32_t j = 0; j < g.hashes; ++j) {
        const std::string off = std::to_string(detail::probe_bit(pp, j, g.bits));
        if (c.command(key, {"GETBIT", key, off}).integer == 0) c.command(key, {"SETBIT", key, off, "1"});
      }
    }
  });
  auto lookup = [&](std::span<const Bytes> ks) {
    size_t found = 0;
    for (Bytes k : ks) {
      const auto pp = detail::probe_pair(h(k));
      bool all = true;
      for (uint32_t j = 0; j < g.hashes && all; ++j) {
        const std::string off = std::to_string(detail::probe_bit(pp, j, g.bits));
        all = c.command(key, {"GETBIT", key, off}).integer == 1;
      }
      found += all;
    }
    return found;
  };
  const double pos_ns = median_ns(o.repeats, [&] { g_sink = lookup(keys.subspan(0, sample)); });
  const double neg_ns =
      median_ns(o.repeats, [&] { g_sink = lookup(absent.subspan(0, std::min(sample, absent.size()))); });
  row.params = fmt::format("k={} bits={}, {} keys", g.hashes, g.bits, sample);
  row.bytes = g.bits / 8;
  row.build_ns_per_key = add_ns / static_cast<double>(sample);
  row.lookup_pos_ns = pos_ns / static_cast<double>(sample);
  row.lookup_neg_ns = neg_ns / static_cast<double>(std::min(sample, absent.size()));
  const double adds = per_s(sample, add_ns), looks = per_s(sample, pos_ns);
  row.note = fmt::format("add {:.0f} keys/s, lookup {:.0f} keys/s; batched 1 client is {:.0f}x / {:.0f}x faster",
                         adds, looks, adds > 0 ? batched.adds / adds : 0, looks > 0 ? batched.looks / looks : 0);
  row.n = sample;
  row.bits_per_key = 8.0 * static_cast<double>(row.bytes) / static_cast<double>(n);
  sink(row);
}

}  // namespace

void bench_redis(const Options& o, const Dataset& d, const Sink& sink) {
  if (test::redis_server_path().empty()) {
    sink(Row{.structure = "RedisBloomFilter", .note = "skipped: redis-server not installed (Debian redis-server)"});
    return;
  }
  try {
    Server server;
    Rates one_client;
    // The third row sizes layer 0 for 100x the keys: a layer far larger than what a
    // batch touches is read and written bit by bit with BITFIELD (the slower path).
    for (const auto& [clients, big] : {std::pair{1, false}, std::pair{4, false}, std::pair{1, true}}) {
      const Rates r = bench_batched(o, d, sink, server.url(), clients, big);
      if (clients == 1 && !big) one_client = r;
    }
    bench_seed_design(o, d, sink, server.url(), one_client);
  } catch (const std::exception& e) {  // amq::Error, or the server did not start
    sink(Row{.structure = "RedisBloomFilter", .note = std::string("failed: ") + e.what()});
  }
}

const RegisterFamily kFamily{"redis", 60, bench_redis};

}  // namespace amq::bench
