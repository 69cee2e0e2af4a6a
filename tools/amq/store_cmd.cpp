// amq store import | export | put | get | del | stats | compact — the persistent
// key-value log store (amq/log_store.hpp). Exit status: 0 done, 1 key absent (get,
// del), 2 any error (a store locked by another writer: "locked").
#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "amq/error.hpp"
#include "amq/log_store.hpp"
#include "cli.hpp"
#include "numbers.hpp"

namespace amq::cli {
namespace {

struct StoreOpts {
  std::string db, file, out, key, value;
  uint64_t chunk = 64 * 1024;
  KeyType key_type = KeyType::str;
};

void print_stats(const LogStoreStats& s) {
  fmt::print("records          {}\n", s.records);
  fmt::print("live keys        {}\n", s.live_keys);
  fmt::print("log bytes        {}\n", s.log_bytes);
  fmt::print("live bytes       {}\n", s.live_bytes);
  fmt::print("dead bytes       {}\n", s.log_bytes >= s.live_bytes ? s.log_bytes - s.live_bytes : 0);
  fmt::print("segments         {}\n", s.segments);
  fmt::print("index bytes      {}\n", s.index_bytes);
  fmt::print("index bytes/key  {:.2f}\n", s.index_bytes_per_key);
  fmt::print("index buckets    {}\n", s.index_buckets);
  fmt::print("opened from      {}\n", s.from_snapshot ? "index snapshot" : "log scan");
}

}  // namespace

void add_store(CLI::App& app, int& status) {
  auto o = std::make_shared<StoreOpts>();
  auto* store = app.add_subcommand("store", "a persistent key-value store: log on disk, cuckoo index in memory");
  store->require_subcommand(1);

  auto* imp = store->add_subcommand("import", "store FILE in DB as chunks keyed by their SHA-1, and their order");
  imp->add_option("file", o->file, "file to import")->required();
  imp->add_option("db", o->db, "store directory (created if missing)")->required();
  imp->add_option("--chunk", o->chunk, "chunk size in bytes (1 .. 64 MiB)")
      ->transform(count_in(1, 64 << 20))
      ->default_val(64 * 1024);
  imp->callback([o, &status] {
    auto db = LogStore::open(o->db);
    const auto t0 = std::chrono::steady_clock::now();
    const ImportResult r = store_import(db, o->file, static_cast<size_t>(o->chunk));
    db.close();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print(stderr, "amq: imported {} bytes: {} chunks, {} new, {:.1f} MB/s\n", r.bytes, r.chunks, r.new_chunks,
               s > 0 ? static_cast<double>(r.bytes) / 1e6 / s : 0.0);
    status = 0;
  });

  auto* exp = store->add_subcommand(
      "export", "write the imported file back to OUT, byte-identical (atomically; OUT - is standard output)");
  exp->add_option("db", o->db, "store directory")->required();
  exp->add_option("out", o->out, "output file, or - for standard output")->required();
  exp->callback([o, &status] {
    auto db = LogStore::open(o->db, {.create_if_missing = false});
    store_export(db, o->out);
    status = 0;
  });

  auto* put = store->add_subcommand("put", "set KEY to VALUE");
  put->add_option("db", o->db, "store directory (created if missing)")->required();
  put->add_option("key", o->key, "key")->required();
  put->add_option("value", o->value, "value")->required();
  add_key_type_option(*put, o->key_type);
  put->callback([o, &status] {
    auto db = LogStore::open(o->db);
    db.put(decode_key(o->key, o->key_type), o->value);
    db.close();
    status = 0;
  });

  auto* get = store->add_subcommand("get", "print KEY's value (its exact bytes); exit 1 if absent");
  get->add_option("db", o->db, "store directory")->required();
  get->add_option("key", o->key, "key")->required();
  add_key_type_option(*get, o->key_type);
  get->callback([o, &status] {
    auto db = LogStore::open(o->db, {.create_if_missing = false});
    std::string v;
    if (!db.get(decode_key(o->key, o->key_type), v)) {
      status = 1;
      return;
    }
    if (std::fwrite(v.data(), 1, v.size(), stdout) != v.size() || std::fflush(stdout) != 0)
      throw Error(Errc::io, "cannot write standard output");
    status = 0;
  });

  auto* del = store->add_subcommand("del", "remove KEY; exit 1 if it was absent");
  del->add_option("db", o->db, "store directory")->required();
  del->add_option("key", o->key, "key")->required();
  add_key_type_option(*del, o->key_type);
  del->callback([o, &status] {
    auto db = LogStore::open(o->db, {.create_if_missing = false});
    const bool had = db.erase(decode_key(o->key, o->key_type));
    db.close();
    status = had ? 0 : 1;
  });

  auto* stats = store->add_subcommand("stats", "records, live keys, bytes, index bytes per key");
  stats->add_option("db", o->db, "store directory")->required();
  stats->callback([o, &status] {
    auto db = LogStore::open(o->db, {.create_if_missing = false});
    print_stats(db.stats());
    status = 0;
  });

  auto* compact = store->add_subcommand("compact", "rewrite the live records, reclaiming dead ones' space");
  compact->add_option("db", o->db, "store directory")->required();
  compact->callback([o, &status] {
    auto db = LogStore::open(o->db, {.create_if_missing = false});
    const auto before = db.stats();
    db.compact();
    const auto after = db.stats();
    db.close();
    fmt::print(stderr, "amq: compacted {} -> {} bytes ({} records -> {})\n", before.log_bytes, after.log_bytes,
               before.records, after.records);
    status = 0;
  });
}

}  // namespace amq::cli
