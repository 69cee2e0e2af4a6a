// amq store import | export | put | get | del | stats | compact | verify | gc — the
// persistent key-value log store (amq/log_store.hpp). Exit status: 0 done, 1 key absent
// (get, del) or damage found (verify), 2 any error (a store locked by another writer:
// "locked"). get, stats and export open the store read-only: they change no file and
// run while a writer is active. Whatever recovery drops is named in one warning line.
#include <fcntl.h>
#include <unistd.h>

#include <fmt/core.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "amq/error.hpp"
#include "amq/log_store.hpp"
#include "cli.hpp"
#include "numbers.hpp"

namespace amq::cli {
namespace {

struct StoreOpts {
  std::string db, file, out, key, value, value_file;
  uint64_t chunk = 64 * 1024;
  KeyType key_type = KeyType::str;
  bool skip_corrupt = false;
};

// Opens the store (read-only for the commands that only read) and prints one warning
// line when recovery dropped or skipped anything.
LogStore open_store(const StoreOpts& o, LogStoreOptions lo) {
  lo.skip_corrupt = o.skip_corrupt;
  auto db = LogStore::open(o.db, lo);
  const LogStoreRecovery& r = db.recovery();
  if (!r.clean()) fmt::print(stderr, "amq: warning: {}: {}\n", escape_text(o.db), escape_text(r.summary()));
  return db;
}

void add_skip_corrupt(CLI::App& cmd, StoreOpts& o) {
  cmd.add_flag("--skip-corrupt", o.skip_corrupt,
               "open a damaged store: drop damaged records (named in a warning) instead of failing");
}

// The whole of a file, or of standard input for "-".
std::string read_value_file(const std::string& path) {
  const bool in = path == "-";
  const int fd = in ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(errno == ENOENT ? Errc::not_found : Errc::io, path + ": cannot open: " + std::strerror(errno));
  std::string v;
  char buf[65536];
  for (;;) {
    const ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      if (!in) ::close(fd);
      throw Error(Errc::io, (in ? std::string("standard input") : path) + ": cannot read: " + std::strerror(err));
    }
    if (r == 0) break;
    v.append(buf, static_cast<size_t>(r));
    if (v.size() > LogStore::kMaxValueSize) {
      if (!in) ::close(fd);
      throw Error(Errc::too_large, (in ? std::string("standard input") : path) + ": value longer than 64 MiB");
    }
  }
  if (!in) ::close(fd);
  return v;
}

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

// One function per `amq store` subcommand; they share one StoreOpts, of which each
// subcommand fills its own fields.

// amq store import FILE DB [--chunk N]
void add_store_import(CLI::App& store, const std::shared_ptr<StoreOpts>& o, int& status) {
  auto* imp = store.add_subcommand("import", "store FILE in DB as chunks keyed by their SHA-1, and their order");
  imp->add_option("file", o->file, "file to import")->required();
  imp->add_option("db", o->db, "store directory (created if missing)")->required();
  imp->add_option("--chunk", o->chunk, "chunk size in bytes (1 .. 64 MiB)")
      ->transform(count_in(1, 64 << 20))
      ->default_val(64 * 1024);
  add_skip_corrupt(*imp, *o);
  imp->callback([o, &status] {
    auto db = open_store(*o, {});
    const auto t0 = std::chrono::steady_clock::now();
    const ImportResult r = store_import(db, o->file, static_cast<size_t>(o->chunk));
    db.close();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print(stderr, "amq: imported {} bytes: {} chunks, {} new, {:.1f} MB/s\n", r.bytes, r.chunks, r.new_chunks,
               s > 0 ? static_cast<double>(r.bytes) / 1e6 / s : 0.0);
    status = 0;
  });
}

// amq store export DB OUT
void add_store_export(CLI::App& store, const std::shared_ptr<StoreOpts>& o, int& status) {
  auto* exp = store.add_subcommand(
      "export", "write the imported file back to OUT, byte-identical (atomically; OUT - is standard output)");
  exp->add_option("db", o->db, "store directory")->required();
  exp->add_option("out", o->out, "output file, or - for standard output")->required();
  add_skip_corrupt(*exp, *o);
  exp->callback([o, &status] {
    auto db = open_store(*o, {.create_if_missing = false, .read_only = true});
    store_export(db, o->out);
    status = 0;
  });
}

// amq store put DB KEY (VALUE | - | --value-file FILE)
void add_store_put(CLI::App& store, const std::shared_ptr<StoreOpts>& o, int& status) {
  auto* put = store.add_subcommand(
      "put", "set KEY to VALUE (VALUE - reads standard input; --value-file FILE reads a file: any bytes, up to 64 MiB)");
  put->add_option("db", o->db, "store directory (created if missing)")->required();
  put->add_option("key", o->key, "key")->required();
  auto* value_opt = put->add_option("value", o->value, "value, or - to read it from standard input");
  put->add_option("--value-file", o->value_file, "read the value from FILE (- for standard input)")
      ->excludes(value_opt);
  add_key_type_option(*put, o->key_type);
  add_skip_corrupt(*put, *o);
  put->callback([o, value_opt, &status] {
    if (value_opt->count() == 0 && o->value_file.empty())
      throw CLI::RequiredError("a value (VALUE, - or --value-file FILE)");
    const std::string value =
        !o->value_file.empty() ? read_value_file(o->value_file) : (o->value == "-" ? read_value_file("-") : o->value);
    auto db = open_store(*o, {});
    db.put(decode_key(o->key, o->key_type), value);
    db.close();
    status = 0;
  });
}

// amq store get DB KEY
void add_store_get(CLI::App& store, const std::shared_ptr<StoreOpts>& o, int& status) {
  auto* get = store.add_subcommand("get", "print KEY's value (its exact bytes); exit 1 if absent");
  get->add_option("db", o->db, "store directory")->required();
  get->add_option("key", o->key, "key")->required();
  add_key_type_option(*get, o->key_type);
  add_skip_corrupt(*get, *o);
  get->callback([o, &status] {
    auto db = open_store(*o, {.create_if_missing = false, .read_only = true});
    std::string v;
    if (!db.get(decode_key(o->key, o->key_type), v)) {
      status = 1;
      return;
    }
    if (std::fwrite(v.data(), 1, v.size(), stdout) != v.size() || std::fflush(stdout) != 0)
      throw Error(Errc::io, "cannot write standard output");
    status = 0;
  });
}

// amq store del DB KEY
void add_store_del(CLI::App& store, const std::shared_ptr<StoreOpts>& o, int& status) {
  auto* del = store.add_subcommand("del", "remove KEY; exit 1 if it was absent");
  del->add_option("db", o->db, "store directory")->required();
  del->add_option("key", o->key, "key")->required();
  add_key_type_option(*del, o->key_type);
  add_skip_corrupt(*del, *o);
  del->callback([o, &status] {
    auto db = open_store(*o, {.create_if_missing = false});
    const bool had = db.erase(decode_key(o->key, o->key_type));
    db.close();
    status = had ? 0 : 1;
  });
}

// amq store stats DB
void add_store_stats(CLI::App& store, const std::shared_ptr<StoreOpts>& o, int& status) {
  auto* stats = store.add_subcommand("stats", "records, live keys, bytes, index bytes per key");
  stats->add_option("db", o->db, "store directory")->required();
  add_skip_corrupt(*stats, *o);
  stats->callback([o, &status] {
    auto db = open_store(*o, {.create_if_missing = false, .read_only = true});
    print_stats(db.stats());
    status = 0;
  });
}

// amq store compact DB
void add_store_compact(CLI::App& store, const std::shared_ptr<StoreOpts>& o, int& status) {
  auto* compact = store.add_subcommand("compact", "rewrite the live records, reclaiming dead ones' space");
  compact->add_option("db", o->db, "store directory")->required();
  add_skip_corrupt(*compact, *o);
  compact->callback([o, &status] {
    auto db = open_store(*o, {.create_if_missing = false});
    const auto before = db.stats();
    db.compact();
    const auto after = db.stats();
    db.close();
    fmt::print(stderr, "amq: compacted {} -> {} bytes ({} records -> {})\n", before.log_bytes, after.log_bytes,
               before.records, after.records);
    status = 0;
  });
}

// amq store verify DB
void add_store_verify(CLI::App& store, const std::shared_ptr<StoreOpts>& o, int& status) {
  auto* verify = store.add_subcommand(
      "verify", "check every record's CRC, the segments and the snapshot, changing nothing; exit 1 if damaged");
  verify->add_option("db", o->db, "store directory")->required();
  verify->callback([o, &status] {
    const LogStoreRecovery r = LogStore::verify(o->db);
    for (const auto& d : r.damage) fmt::print("{}: {}\n", escape_text(o->db), escape_text(d.describe()));
    if (r.clean()) {
      fmt::print("{}: ok\n", escape_text(o->db));
    } else {
      auto n = [](uint64_t v, const char* what) { return fmt::format("{} {}{}", v, what, v == 1 ? "" : "s"); };
      fmt::print("{}: damaged: {}, {} in {}{}\n", escape_text(o->db), n(r.dropped_bytes, "byte"),
                 n(r.dropped_records, "record"), n(r.segments_affected, "segment"),
                 r.acknowledged_lost ? " (including writes the last close made durable)" : "");
    }
    if (std::fflush(stdout) != 0) throw Error(Errc::io, "cannot write standard output");
    status = r.clean() ? 0 : 1;
  });
}

// amq store gc DB
void add_store_gc(CLI::App& store, const std::shared_ptr<StoreOpts>& o, int& status) {
  auto* gc = store.add_subcommand(
      "gc", "remove imported chunks no manifest refers to (left by an interrupted or replaced import), then compact");
  gc->add_option("db", o->db, "store directory")->required();
  add_skip_corrupt(*gc, *o);
  gc->callback([o, &status] {
    auto db = open_store(*o, {.create_if_missing = false});
    const auto before = db.stats();
    const GcResult r = store_gc(db);
    const auto after = db.stats();
    db.close();
    fmt::print(stderr, "amq: gc: removed {} unreferenced chunks ({} bytes); {} -> {} bytes\n", r.removed,
               r.removed_bytes, before.log_bytes, after.log_bytes);
    status = 0;
  });
}

}  // namespace

void add_store(CLI::App& app, int& status) {
  auto o = std::make_shared<StoreOpts>();
  auto* store = app.add_subcommand("store", "a persistent key-value store: log on disk, cuckoo index in memory");
  store->require_subcommand(1);
  add_store_import(*store, o, status);
  add_store_export(*store, o, status);
  add_store_put(*store, o, status);
  add_store_get(*store, o, status);
  add_store_del(*store, o, status);
  add_store_stats(*store, o, status);
  add_store_compact(*store, o, status);
  add_store_verify(*store, o, status);
  add_store_gc(*store, o, status);
}

}  // namespace amq::cli
