// LogStore rows, db_bench style: 10^6 random 16-byte keys with 100-byte values —
// fillrandom, readrandom and fillsync (1000 ops, every write synced) in µs/op — beside
// LevelDB in the same run, then the index's bytes per key and the import speed of a
// 100 MB file. It writes ~250 MB to the temporary directory and takes ~30 s, so it
// runs only when asked for: `amq bench --only store`.
#include <fmt/core.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

#include "amq/log_store.hpp"
#include "bench_table.hpp"

#if AMQ_HAVE_LEVELDB
#include <leveldb/db.h>
#include <leveldb/write_batch.h>
#endif

namespace amq::bench {
namespace {

constexpr size_t kN = 1'000'000;
constexpr size_t kSyncOps = 1000;
constexpr size_t kValue = 100;

struct Data {
  std::vector<std::string> keys;    // fill order
  std::vector<uint32_t> read_order; // a permutation of the keys
  std::string values;               // random bytes, values are 100-byte windows of it
  std::string_view value(size_t i) const { return std::string_view(values).substr((i * 7919) % (values.size() - kValue), kValue); }
};

Data make_data() {
  Data d;
  std::mt19937_64 rng(301);
  std::vector<uint64_t> ids(kN);
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);
  for (uint64_t id : ids) d.keys.push_back(fmt::format("{:016}", id * 2654435761u % 10'000'000'000'000'000ull));
  d.read_order.resize(kN);
  std::iota(d.read_order.begin(), d.read_order.end(), 0);
  std::shuffle(d.read_order.begin(), d.read_order.end(), rng);
  d.values.resize(1 << 20);
  for (auto& c : d.values) c = static_cast<char>(rng());
  return d;
}

std::string temp_dir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "amq-bench-store-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  return tmpl;
}

double us_per_op(double ns, size_t ops) { return ns / 1000.0 / static_cast<double>(ops); }

}  // namespace

void bench_store(const Options& o, const Dataset&, const Sink& sink) {
  if (o.only.empty()) {
    sink(Row{.structure = "LogStore", .note = "skipped by default (~30 s, ~250 MB of temp files): amq bench --only store"});
    return;
  }
  const Data d = make_data();
  const std::string root = temp_dir();
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{root};

  // ---- LogStore ----
  {
    Row row{.structure = "LogStore", .n = kN};
    auto db = LogStore::open(root + "/logstore");
    const double fill = median_ns(1, [&] {
      for (size_t i = 0; i < kN; ++i) db.put(d.keys[i], d.value(i));
    });
    const auto before = db.stats();
    size_t found = 0;
    std::string v;
    const double read = median_ns(1, [&] {
      for (uint32_t i : d.read_order) found += db.get(d.keys[i], v);
    });
    const auto st = db.stats();
    const double reads_per_get = static_cast<double>(st.get_reads - before.get_reads) / static_cast<double>(st.gets - before.gets);
    db.close();
    auto sdb = LogStore::open(root + "/logstore-sync", {.durability = Durability::every_write});
    const double fsync = median_ns(1, [&] {
      for (size_t i = 0; i < kSyncOps; ++i) sdb.put(d.keys[i], d.value(i));
    });
    sdb.close();
    row.bytes = st.index_bytes;
    row.bits_per_key = 8.0 * st.index_bytes_per_key;
    row.build_ns_per_key = fill / kN;
    row.lookup_pos_ns = read / kN;
    row.params = "16-byte keys, 100-byte values, durability none";
    row.note = fmt::format(
        "fillrandom {:.2f} us/op, readrandom {:.2f} us/op ({} found, {:.3f} reads/get), fillsync {:.1f} us/op "
        "({} ops), index {:.2f} B/key",
        us_per_op(fill, kN), us_per_op(read, kN), found, reads_per_get, us_per_op(fsync, kSyncOps), kSyncOps,
        st.index_bytes_per_key);
    sink(row);
  }
#if AMQ_HAVE_LEVELDB
  {
    Row row{.structure = "LevelDB (peer)", .n = kN};
    leveldb::Options lo;
    lo.create_if_missing = true;
    leveldb::DB* raw = nullptr;
    leveldb::Status s = leveldb::DB::Open(lo, root + "/leveldb", &raw);
    if (!s.ok()) {
      sink(Row{.structure = "LevelDB (peer)", .note = "skipped: " + s.ToString()});
    } else {
      std::unique_ptr<leveldb::DB> db(raw);
      const leveldb::WriteOptions wo;
      const double fill = median_ns(1, [&] {
        for (size_t i = 0; i < kN; ++i) db->Put(wo, d.keys[i], leveldb::Slice(d.value(i).data(), kValue));
      });
      size_t found = 0;
      std::string v;
      const leveldb::ReadOptions ro;
      const double read = median_ns(1, [&] {
        for (uint32_t i : d.read_order) found += db->Get(ro, d.keys[i], &v).ok();
      });
      db.reset();
      leveldb::DB* sraw = nullptr;
      double fsync = 0;
      if (leveldb::DB::Open(lo, root + "/leveldb-sync", &sraw).ok()) {
        std::unique_ptr<leveldb::DB> sdb(sraw);
        leveldb::WriteOptions so;
        so.sync = true;
        fsync = median_ns(1, [&] {
          for (size_t i = 0; i < kSyncOps; ++i) sdb->Put(so, d.keys[i], leveldb::Slice(d.value(i).data(), kValue));
        });
      }
      row.build_ns_per_key = fill / kN;
      row.lookup_pos_ns = read / kN;
      row.params = "libleveldb defaults (Debian), sync=false";
      row.note = fmt::format("fillrandom {:.2f} us/op, readrandom {:.2f} us/op ({} found), fillsync {:.1f} us/op ({} ops)",
                             us_per_op(fill, kN), us_per_op(read, kN), found, us_per_op(fsync, kSyncOps), kSyncOps);
      sink(row);
    }
  }
#else
  sink(Row{.structure = "LevelDB (peer)", .note = "skipped: libleveldb-dev not installed"});
#endif
  // ---- import of a 100 MB file ----
  {
    const std::string file = root + "/import.bin";
    {
      std::ofstream f(file, std::ios::binary);
      std::string block(1 << 20, '\0');
      uint64_t x = 0x9E3779B97F4A7C15ULL;
      for (int mb = 0; mb < 100; ++mb) {
        for (size_t i = 0; i < block.size(); i += 8) {
          x ^= x << 13;
          x ^= x >> 7;
          x ^= x << 17;
          std::memcpy(block.data() + i, &x, 8);
        }
        f.write(block.data(), static_cast<std::streamsize>(block.size()));
      }
    }
    auto db = LogStore::open(root + "/import");
    ImportResult r;
    const double ns = median_ns(1, [&] { r = store_import(db, file, 64 * 1024); });
    db.close();
    Row row{.structure = "LogStore import", .n = r.chunks};
    row.params = "100 MiB file, 64 KiB chunks, SHA-1 keys";
    row.note = fmt::format("{:.0f} MB/s (including the final fdatasync)", static_cast<double>(r.bytes) / 1e6 / (ns / 1e9));
    sink(row);
  }
}

const RegisterFamily kFamily{"store", 50, bench_store};

}  // namespace amq::bench
