#include "amq/log_store.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <thread>

#include "amq/detail/crc32c.hpp"
#include "amq/detail/log_index.hpp"
#include "amq/error.hpp"
#include "test_util.hpp"

namespace amq {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

std::vector<fs::path> segment_files(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("seg-", 0) == 0) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::map<std::string, std::string> contents(const LogStore& db) {
  std::map<std::string, std::string> m;
  db.for_each([&](Bytes k, Bytes v) {
    EXPECT_TRUE(m.emplace(std::string(as_chars(k)), std::string(as_chars(v))).second) << "key twice in for_each";
  });
  return m;
}

// "k<i>" (built with += : GCC 12 warns falsely on "k" + std::string)
std::string kname(uint64_t i) {
  std::string s = "k";
  s += std::to_string(i);
  return s;
}

std::string random_value(std::mt19937_64& rng, size_t max_len) {
  std::string v(rng() % (max_len + 1), '\0');
  for (auto& c : v) c = static_cast<char>(rng());
  return v;
}

TEST(Crc32c, CheckValueAndImplementationsAgree) {
  EXPECT_EQ(detail::crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(detail::crc32c_extend_portable(0, "123456789", 9), 0xE3069283u);
  EXPECT_EQ(detail::crc32c("", 0), 0u);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 500; ++i) {
    std::string s = random_value(rng, 300);
    const uint32_t a = detail::crc32c(s.data(), s.size());
    ASSERT_EQ(a, detail::crc32c_extend_portable(0, s.data(), s.size()));
    const size_t cut = s.empty() ? 0 : rng() % s.size();
    ASSERT_EQ(detail::crc32c_extend(detail::crc32c(s.data(), cut), s.data() + cut, s.size() - cut), a);
  }
  // 32 bytes of zeros: RFC 3720 B.4 test vector.
  const std::string zeros(32, '\0');
  EXPECT_EQ(detail::crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
}

TEST(LogIndex, FindsEverythingAcrossDoublingsWithoutTheLog) {
  detail::LogIndex idx(0);
  std::mt19937_64 rng(3);
  const size_t n = 200'000;
  std::vector<std::pair<uint32_t, uint64_t>> items;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t fp = detail::LogIndex::fingerprint(rng());
    const uint64_t loc = i + 1;
    idx.insert(fp, loc);
    items.emplace_back(fp, loc);
  }
  EXPECT_GT(idx.grows(), 5u);
  EXPECT_EQ(idx.size(), n);
  for (const auto& [fp, loc] : items) {
    const uint64_t want = loc;
    ASSERT_NE(idx.find(fp, [&](uint64_t e) { return detail::LogIndex::loc_of(e) == want; }), nullptr);
  }
  // Erase half, the rest stays findable.
  for (size_t i = 0; i < n; i += 2) {
    const uint64_t want = items[i].second;
    uint64_t* s = idx.find(items[i].first, [&](uint64_t e) { return detail::LogIndex::loc_of(e) == want; });
    ASSERT_NE(s, nullptr);
    idx.erase(s);
  }
  EXPECT_EQ(idx.size(), n / 2);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t want = items[i].second;
    const bool found = idx.find(items[i].first, [&](uint64_t e) { return detail::LogIndex::loc_of(e) == want; });
    ASSERT_EQ(found, i % 2 == 1);
  }
  // Raw round trip, and a slot moved to a wrong bucket is rejected.
  std::vector<uint64_t> raw(idx.raw().begin(), idx.raw().end());
  EXPECT_EQ(detail::LogIndex::from_raw(idx.log2_buckets(), raw).size(), n / 2);
  EXPECT_THROW(detail::LogIndex::from_raw(idx.log2_buckets() + 1, raw), Error);
}

TEST(LogIndex, ReachesHighLoadBeforeDoubling) {
  // A million keys fill 2^18 buckets * 4 slots to 95%: no doubling past that, grown
  // from the minimum or presized, so the index stays under 10 bytes per key.
  for (uint64_t expected : {uint64_t{0}, uint64_t{1'000'000}}) {
    detail::LogIndex idx(expected);
    std::mt19937_64 rng(11 + expected);
    for (uint64_t i = 0; i < 1'000'000; ++i) idx.insert(detail::LogIndex::fingerprint(rng()), i + 1);
    EXPECT_EQ(idx.bucket_count(), uint64_t{1} << 18);
    EXPECT_LE(static_cast<double>(idx.bytes()) / 1e6, 10.0);
    if (expected) {
      EXPECT_EQ(idx.grows(), 0u);
    }
  }
}

TEST(LogStore, PutGetEraseOverwrite) {
  TempDir t;
  auto db = LogStore::open(t.file("db"));
  EXPECT_EQ(db.size(), 0u);
  EXPECT_FALSE(db.get("a"));
  db.put("a", "1");
  db.put("b", "");
  db.put("", "empty key");
  EXPECT_EQ(db.get("a"), "1");
  EXPECT_EQ(db.get("b"), "");
  EXPECT_EQ(db.get(""), "empty key");
  EXPECT_TRUE(db.contains("b"));
  EXPECT_FALSE(db.contains("c"));
  EXPECT_EQ(db.size(), 3u);
  db.put("a", "2");
  EXPECT_EQ(db.get("a"), "2");
  EXPECT_EQ(db.size(), 3u);
  EXPECT_TRUE(db.erase("a"));
  EXPECT_FALSE(db.erase("a"));
  EXPECT_FALSE(db.get("a"));
  EXPECT_EQ(db.size(), 2u);
  db.put(uint64_t{42}, "u64");
  EXPECT_EQ(db.get(uint64_t{42}), "u64");
  // Size limits.
  const std::string big_key(LogStore::kMaxKeySize, 'k');
  db.put(big_key, "v");
  EXPECT_EQ(db.get(big_key), "v");
  try {
    db.put(std::string(LogStore::kMaxKeySize + 1, 'k'), "v");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::too_large);
  }
  const std::string big_value(LogStore::kMaxValueSize, 'v');
  db.put("big", big_value);
  EXPECT_EQ(db.get("big")->size(), big_value.size());
  EXPECT_THROW(db.put("big", std::string(LogStore::kMaxValueSize + 1, 'v')), Error);
  db.close();
  EXPECT_THROW(db.get("a"), Error);
  auto again = LogStore::open(t.file("db"));
  EXPECT_EQ(again.get("b"), "");
  EXPECT_EQ(again.get(big_key), "v");
  EXPECT_EQ(again.get("big")->size(), big_value.size());
  EXPECT_FALSE(again.get("a"));
  EXPECT_EQ(again.size(), 5u);
}

TEST(LogStore, OverwriteUpdatesInPlace) {
  TempDir t;
  auto db = LogStore::open(t.path().string());
  for (int i = 0; i < 20000; ++i) db.put("same", std::to_string(i));
  const auto st = db.stats();
  EXPECT_EQ(st.live_keys, 1u);
  EXPECT_EQ(st.index_grows, 0u);
  EXPECT_EQ(st.records, 20000u);
  EXPECT_EQ(db.get("same"), "19999");
  EXPECT_LT(st.live_bytes, 64u);
}

TEST(LogStore, SecondWriterIsLockedOut) {
  TempDir t;
  auto db = LogStore::open(t.path().string());
  try {
    auto other = LogStore::open(t.path().string());
    FAIL() << "second open succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::locked);
    EXPECT_NE(std::string(e.what()).find("LOCK"), std::string::npos);
  }
  // Another process too.
  const pid_t pid = fork();
  if (pid == 0) {
    int code = 3;
    try {
      auto other = LogStore::open(t.path().string());
      code = 0;
    } catch (const Error& e) {
      code = e.code() == Errc::locked ? 1 : 2;
    }
    _exit(code);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 1);
  db.close();
  EXPECT_NO_THROW(LogStore::open(t.path().string()));
}

TEST(LogStore, MissingDirWithoutCreate) {
  TempDir t;
  try {
    LogStore::open(t.file("nope"), {.create_if_missing = false});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found);
  }
  EXPECT_THROW(LogStore::open(t.path().string(), {.segment_bytes = 10}), Error);
}

TEST(LogStore, ReadsPerGetIsAboutOne) {
  TempDir t;
  auto db = LogStore::open(t.path().string());
  const auto keys = test::random_keys(100'000, 5, 16);
  for (const auto& k : keys) db.put(k, k + k);
  const auto before = db.stats();
  for (const auto& k : keys) ASSERT_EQ(db.get(k), k + k);
  const auto absent = test::random_keys(100'000, 6, 16);
  size_t hits = 0;
  for (const auto& k : absent) hits += db.get(k).has_value() && !db.contains(k);
  EXPECT_EQ(hits, 0u);
  const auto st = db.stats();
  const double per_get = static_cast<double>(st.get_reads - before.get_reads) / static_cast<double>(st.gets - before.gets);
  // 100k positive gets cost 1 read each; absent ones almost never read.
  EXPECT_GE(per_get, 0.45);
  EXPECT_LE(per_get, 0.55);
  EXPECT_LE(st.index_bytes_per_key, 12.0);
}

TEST(LogStore, SnapshotUsedWhenFreshIgnoredWhenStale) {
  TempDir t;
  const std::string dir = t.path().string();
  {
    auto db = LogStore::open(dir);
    for (int i = 0; i < 1000; ++i) db.put(std::to_string(i), std::string(i % 50, 'x'));
    for (int i = 0; i < 1000; i += 3) db.erase(std::to_string(i));
  }
  std::map<std::string, std::string> want;
  {
    auto db = LogStore::open(dir);
    EXPECT_TRUE(db.stats().from_snapshot);
    want = contents(db);
    EXPECT_EQ(want.size(), 666u);
    // Written without a snapshot on close: the old one is now stale.
    db.put("new", "v");
    want["new"] = "v";
  }
  {
    auto db = LogStore::open(dir, {.use_snapshot = false});
    EXPECT_FALSE(db.stats().from_snapshot);
    db.put("newer", "w");
    want["newer"] = "w";
    db.close();  // no snapshot written: index.snap is the one from before "newer"
  }
  {
    auto db = LogStore::open(dir);
    EXPECT_FALSE(db.stats().from_snapshot);
    EXPECT_EQ(contents(db), want);
  }
  // A damaged snapshot is ignored.
  {
    std::fstream f(t.file("index.snap"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x5a');
  }
  auto db = LogStore::open(dir);
  EXPECT_FALSE(db.stats().from_snapshot);
  EXPECT_EQ(contents(db), want);
  EXPECT_EQ(db.stats().live_keys, want.size());
}

TEST(LogStore, PropertyAgainstStdMapWithReopens) {
  TempDir t;
  const std::string dir = t.path().string();
  std::mt19937_64 rng(2024);
  std::map<std::string, std::string> ref;
  std::vector<std::string> universe = test::random_keys(3000, 77, 12);
  for (int round = 0; round < 12; ++round) {
    LogStoreOptions o;
    o.segment_bytes = 64 << 10;
    o.use_snapshot = round % 3 != 0;
    o.durability = round % 4 == 1 ? Durability::group_commit : Durability::none;
    o.group_commit_ms = 2;
    auto db = LogStore::open(dir, o);
    ASSERT_EQ(db.size(), ref.size()) << "round " << round;
    for (int op = 0; op < 6000; ++op) {
      const std::string& k = universe[rng() % universe.size()];
      switch (rng() % 8) {
        case 0:
        case 1: {
          const bool had = ref.erase(k) > 0;
          ASSERT_EQ(db.erase(k), had);
          break;
        }
        case 2: {
          auto it = ref.find(k);
          auto got = db.get(k);
          ASSERT_EQ(got.has_value(), it != ref.end());
          if (got) {
        ASSERT_EQ(*got, it->second);
      }
          break;
        }
        default: {
          std::string v = random_value(rng, 120);
          db.put(k, v);
          ref[k] = v;
        }
      }
    }
    if (round % 2 == 1) db.compact();
    ASSERT_EQ(contents(db), ref) << "round " << round;
    if (round % 5 == 4) continue;  // destructor closes
    db.close();
  }
  auto db = LogStore::open(dir);
  EXPECT_EQ(contents(db), ref);
  for (const auto& k : universe) ASSERT_EQ(db.contains(k), ref.count(k) > 0);
}

TEST(LogStore, CompactionReclaimsSpaceAndKeepsData) {
  TempDir t;
  const std::string dir = t.path().string();
  auto db = LogStore::open(dir, {.segment_bytes = 64 << 10});
  std::map<std::string, std::string> ref;
  for (int r = 0; r < 10; ++r)
    for (int i = 0; i < 2000; ++i) {
      const std::string k = "key" + std::to_string(i);
      const std::string v = std::to_string(r * 100000 + i);
      db.put(k, v);
      ref[k] = v;
    }
  for (int i = 0; i < 2000; i += 2) {
    db.erase("key" + std::to_string(i));
    ref.erase("key" + std::to_string(i));
  }
  const auto before = db.stats();
  EXPECT_GT(before.segments, 5u);
  db.compact();
  const auto after = db.stats();
  EXPECT_LT(after.log_bytes, before.log_bytes / 8);
  EXPECT_EQ(after.live_keys, 1000u);
  EXPECT_EQ(after.records, 1000u);
  EXPECT_EQ(contents(db), ref);
  uint64_t on_disk = 0;
  for (const auto& p : segment_files(dir)) on_disk += fs::file_size(p);
  EXPECT_EQ(on_disk, after.log_bytes);
  db.close();
  auto again = LogStore::open(dir, {.use_snapshot = false});
  EXPECT_EQ(contents(again), ref);
}

TEST(LogStore, ReadsAndWritesDuringCompaction) {
  TempDir t;
  const std::string dir = t.path().string();
  auto db = LogStore::open(dir, {.segment_bytes = 256 << 10});
  const int n = 20000;
  for (int r = 0; r < 3; ++r)
    for (int i = 0; i < n; ++i) db.put(kname(i), std::string(40, static_cast<char>('a' + r)));
  std::atomic<bool> done{false};
  std::atomic<int> compactions{0};
  std::thread compactor([&] {
    for (int i = 0; i < 3; ++i) {
      db.compact();
      ++compactions;
    }
    done = true;
  });
  // Meanwhile: overwrite keys, erase some, and read everything back.
  std::map<std::string, std::string> ref;
  for (int i = 0; i < n; ++i) ref[kname(i)] = std::string(40, 'c');
  std::mt19937_64 rng(5);
  size_t ops = 0;
  while (!done || ops < 20000) {
    const std::string k = kname(rng() % n);
    if (rng() % 3 == 0) {
      const std::string v = std::to_string(ops);
      db.put(k, v);
      ref[k] = v;
    } else if (rng() % 10 == 0) {
      db.erase(k);
      ref.erase(k);
    } else {
      auto got = db.get(k);
      auto it = ref.find(k);
      ASSERT_EQ(got.has_value(), it != ref.end()) << k;
      if (got) {
        ASSERT_EQ(*got, it->second);
      }
    }
    ++ops;
  }
  compactor.join();
  EXPECT_EQ(compactions.load(), 3);
  EXPECT_EQ(contents(db), ref);
  db.close();
  auto again = LogStore::open(dir, {.use_snapshot = false});
  EXPECT_EQ(contents(again), ref);
}

TEST(LogStore, ForEachIsASnapshotAndMayWrite) {
  TempDir t;
  auto db = LogStore::open(t.path().string());
  for (int i = 0; i < 500; ++i) db.put(kname(i), std::to_string(i));
  size_t seen = 0;
  db.for_each([&](Bytes k, Bytes v) {
    const std::string key(as_chars(k));
    ASSERT_EQ(key[0], 'k');  // never one of the keys written below
    ASSERT_EQ(db.get(key), std::string(as_chars(v)));
    db.erase(key);
    db.put("new" + key, v);
    if (++seen == 250) db.compact();  // files deleted under the iteration
  });
  EXPECT_EQ(seen, 500u);
  EXPECT_EQ(db.size(), 500u);
  for (int i = 0; i < 500; ++i) ASSERT_EQ(db.get("new" + kname(i)), std::to_string(i));
}

TEST(LogStore, ConcurrentReadersWriterFlusherCompactor) {
  TempDir t;
  auto db = LogStore::open(t.path().string(), {.durability = Durability::group_commit, .group_commit_ms = 1,
                                               .segment_bytes = 128 << 10});
  const int n = 2000;
  // Every value starts with its key: a reader can tell a torn or misdirected read.
  auto value_of = [](const std::string& k, uint64_t version) { return k + "=" + std::to_string(version); };
  for (int i = 0; i < n; ++i) db.put(kname(i), value_of(kname(i), 0));
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> bad{0}, reads{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r)
    readers.emplace_back([&, r] {
      std::mt19937_64 rng(r);
      std::string v;
      while (!stop) {
        const std::string k = kname(rng() % n);
        if (db.get(k, v) && v.rfind(k + "=", 0) != 0) ++bad;
        ++reads;
      }
    });
  std::thread compactor([&] {
    for (int i = 0; i < 3 && !stop; ++i) db.compact();
  });
  std::map<std::string, std::string> ref;
  for (int i = 0; i < n; ++i) ref[kname(i)] = value_of(kname(i), 0);
  std::mt19937_64 rng(42);
  for (uint64_t op = 1; op <= 30000; ++op) {
    const std::string k = kname(rng() % n);
    if (rng() % 8 == 0) {
      db.erase(k);
      ref.erase(k);
    } else {
      db.put(k, value_of(k, op));
      ref[k] = value_of(k, op);
    }
  }
  compactor.join();
  stop = true;
  for (auto& th : readers) th.join();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_GT(reads.load(), 0u);
  EXPECT_EQ(contents(db), ref);
  db.close();
  auto again = LogStore::open(t.path().string(), {.use_snapshot = false});
  EXPECT_EQ(contents(again), ref);
}

// The files of a compaction interrupted after its outputs were renamed (inputs still
// there), or before all of them were: both open to the same contents.
TEST(LogStore, InterruptedCompactionRecovers) {
  TempDir t;
  const fs::path dir = t.path() / "db";
  const fs::path saved = t.path() / "saved";
  std::map<std::string, std::string> ref;
  {
    auto db = LogStore::open(dir.string(), {.segment_bytes = 64 << 10});
    for (int r = 0; r < 3; ++r)
      for (int i = 0; i < 3000; ++i) {
        const std::string k = std::to_string(i), v = std::string(30, 'a') + std::to_string(r);
        db.put(k, v);
        ref[k] = v;
      }
    for (int i = 0; i < 3000; i += 7) {
      db.erase(std::to_string(i));
      ref.erase(std::to_string(i));
    }
    db.sync();
    fs::create_directories(saved);
    for (const auto& p : segment_files(dir)) fs::copy_file(p, saved / p.filename());
    db.compact();
    db.close();
  }
  fs::remove(dir / "index.snap");
  const auto outputs = segment_files(dir);
  ASSERT_GE(outputs.size(), 3u);  // at least two compaction parts and the active segment
  // Inputs back beside the complete outputs: they are deleted at open.
  for (const auto& p : segment_files(saved)) fs::copy_file(p, dir / p.filename(), fs::copy_options::overwrite_existing);
  {
    auto db = LogStore::open(dir.string());
    EXPECT_EQ(contents(db), ref);
    db.close();
  }
  EXPECT_EQ(segment_files(dir).size(), outputs.size());
  // Only the first part renamed: the partial output is dropped, the inputs are used.
  fs::remove(dir / "index.snap");
  for (size_t i = 1; i < outputs.size(); ++i) fs::remove(outputs[i]);
  for (const auto& p : segment_files(saved)) fs::copy_file(p, dir / p.filename(), fs::copy_options::overwrite_existing);
  std::ofstream(dir / (outputs[1].filename().string() + ".compacting")) << "junk";
  {
    auto db = LogStore::open(dir.string());
    EXPECT_EQ(contents(db), ref);
  }
  for (const auto& p : fs::directory_iterator(dir))
    EXPECT_EQ(p.path().string().find(".compacting"), std::string::npos);
}

TEST(LogStore, TooManySegmentsIsFull) {
  TempDir t;
  auto db = LogStore::open(t.path().string(), {.segment_bytes = 64 << 10});
  const std::string v(2000, 'v');
  try {
    for (int i = 0; i < 100000; ++i) db.put(std::to_string(i % 20), v);
    FAIL() << "never filled";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::full);
  }
  EXPECT_EQ(db.stats().segments, 62u);
  // Nothing acknowledged is lost, the store still opens, and compaction (of a store
  // of mostly overwritten keys) makes room again.
  const size_t n = db.size();
  db.close();
  auto again = LogStore::open(t.path().string(), {.segment_bytes = 64 << 10});
  EXPECT_EQ(again.size(), n);
  EXPECT_THROW(again.put("more", v), Error);
  EXPECT_EQ(n, 20u);
  again.compact();  // 40 KB of live data: one output segment
  EXPECT_EQ(again.stats().segments, 2u);
  again.put("more", v);
  EXPECT_EQ(again.size(), n + 1);
}

// ---- damage ------------------------------------------------------------------

std::vector<uint64_t> record_offsets(const std::string& segment) {
  // Parses the framing (header 40 bytes; record = 12-byte header, key, value, pad to 8).
  std::ifstream f(segment, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(f)), {});
  std::vector<uint64_t> out;
  for (uint64_t pos = 40; pos + 12 <= s.size();) {
    out.push_back(pos);
    uint16_t klen;
    uint32_t vlen;
    std::memcpy(&klen, s.data() + pos + 6, 2);
    std::memcpy(&vlen, s.data() + pos + 8, 4);
    pos += (12 + klen + vlen + 7) / 8 * 8;
  }
  return out;
}

TEST(LogStore, TruncatedAtEveryOffsetOfTheLastRecord) {
  TempDir t;
  const fs::path dir = t.path() / "db";
  {
    auto db = LogStore::open(dir.string());
    for (int i = 0; i < 50; ++i) db.put("key" + std::to_string(i), "value" + std::to_string(i));
    db.put("last", std::string(100, 'L'));
  }
  const auto segs = segment_files(dir);
  ASSERT_EQ(segs.size(), 1u);
  const auto offs = record_offsets(segs[0].string());
  ASSERT_EQ(offs.size(), 51u);
  const uint64_t start = offs.back(), end = fs::file_size(segs[0]);
  for (uint64_t cut = start; cut < end; ++cut) {
    const fs::path copy = t.path() / "copy";
    fs::remove_all(copy);
    fs::create_directories(copy);
    fs::copy_file(segs[0], copy / segs[0].filename());
    fs::resize_file(copy / segs[0].filename(), cut);
    auto db = LogStore::open(copy.string());
    ASSERT_EQ(db.size(), 50u) << "cut at " << cut;
    ASSERT_FALSE(db.contains("last"));
    ASSERT_EQ(db.get("key49"), "value49");
    EXPECT_EQ(db.stats().truncated_bytes, cut - start);
    db.put("after", "x");  // appends where the torn record was
    db.close();
    auto again = LogStore::open(copy.string(), {.use_snapshot = false});
    ASSERT_EQ(again.size(), 51u);
    ASSERT_EQ(again.get("after"), "x");
  }
}

TEST(LogStore, BitFlipInAMiddleRecordIsCaught) {
  TempDir t;
  const fs::path dir = t.path() / "db";
  std::map<std::string, std::string> ref;
  {
    auto db = LogStore::open(dir.string());
    for (int i = 0; i < 40; ++i) {
      db.put("key" + std::to_string(i), std::string(20 + i, 'a' + i % 26));
      ref["key" + std::to_string(i)] = std::string(20 + i, 'a' + i % 26);
    }
  }
  const auto seg = segment_files(dir)[0];
  const auto offs = record_offsets(seg.string());
  const uint64_t victim = offs[20], victim_end = offs[21];
  std::ifstream f(seg, std::ios::binary);
  const std::string orig((std::istreambuf_iterator<char>(f)), {});
  std::mt19937_64 rng(9);
  for (uint64_t byte = victim; byte < victim_end; ++byte) {
    for (int bit : {0, static_cast<int>(rng() % 8)}) {
      std::string bad = orig;
      bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
      const fs::path copy = t.path() / "copy";
      fs::remove_all(copy);
      fs::create_directories(copy);
      std::ofstream(copy / seg.filename(), std::ios::binary) << bad;
      try {
        LogStore::open(copy.string());
        FAIL() << "flip at " << byte << " bit " << bit << " opened";
      } catch (const Error& e) {
        ASSERT_TRUE(e.code() == Errc::checksum_mismatch) << e.what();
      }
      auto db = LogStore::open(copy.string(), {.skip_corrupt = true});
      auto want = ref;
      want.erase("key20");
      ASSERT_EQ(contents(db), want) << "flip at " << byte;
      EXPECT_EQ(db.stats().skipped_bytes, victim_end - victim);
    }
  }
}

TEST(LogStore, GetDetectsDamageAfterOpen) {
  TempDir t;
  auto db = LogStore::open(t.path().string());
  db.put("a", std::string(64, 'a'));
  db.put("b", "bbb");
  db.sync();
  const auto seg = segment_files(t.path())[0];
  {
    std::fstream f(seg, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40 + 12 + 1 + 10);  // inside a's value
    f.put('X');
  }
  try {
    db.get("a");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::checksum_mismatch);
  }
  EXPECT_EQ(db.get("b"), "bbb");
}

TEST(LogStore, HeaderDamageIsAnError) {
  TempDir t;
  {
    auto db = LogStore::open(t.path().string());
    db.put("a", "1");
  }
  const auto seg = segment_files(t.path())[0];
  {
    std::fstream f(seg, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.put('\x7f');
  }
  fs::remove(t.path() / "index.snap");
  try {
    LogStore::open(t.path().string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::checksum_mismatch);
  }
}

TEST(LogStore, ImportExportRoundTrip) {
  TempDir t;
  std::mt19937_64 rng(1);
  auto check = [&](const std::string& data, size_t chunk, uint64_t want_new) {
    const std::string in = t.file("in"), out = t.file("out"), dbdir = t.file("db" + std::to_string(rng()));
    std::ofstream(in, std::ios::binary) << data;
    {
      auto db = LogStore::open(dbdir);
      const auto r = store_import(db, in, chunk);
      EXPECT_EQ(r.bytes, data.size());
      EXPECT_EQ(r.chunks, (data.size() + chunk - 1) / chunk);
      if (want_new != ~uint64_t{0}) {
        EXPECT_EQ(r.new_chunks, want_new);
      }
    }
    auto db = LogStore::open(dbdir);
    EXPECT_EQ(store_export(db, out), data.size());
    std::ifstream f(out, std::ios::binary);
    const std::string back((std::istreambuf_iterator<char>(f)), {});
    EXPECT_TRUE(back == data) << data.size() << " bytes, chunk " << chunk;
  };
  check("", 4096, 0);
  std::string r1(4096 * 5, '\0');
  for (auto& c : r1) c = static_cast<char>(rng());
  check(r1, 4096, 5);
  check(r1 + "tail", 4096, 6);
  std::string rep;
  for (int i = 0; i < 10; ++i) rep += r1.substr(0, 4096);
  check(rep + "x", 4096, 2);  // ten identical chunks stored once
  check(r1.substr(0, 1), 1, 1);
}


// ---- recovery reports, read-only opens, verify, gc ------------------------------

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

void spit(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary | std::ios::trunc) << s; }

// Every file of the directory: name -> contents (and its modification time).
std::map<std::string, std::pair<std::string, fs::file_time_type>> dir_state(const fs::path& dir) {
  std::map<std::string, std::pair<std::string, fs::file_time_type>> m;
  for (const auto& e : fs::directory_iterator(dir))
    m[e.path().filename().string()] = {slurp(e.path()), fs::last_write_time(e.path())};
  return m;
}

// The reproduction: k old, k new, gone x, del gone (the tombstone is last).
void put_resurrection_case(const std::string& dir, bool snapshot = true) {
  auto db = LogStore::open(dir, {.use_snapshot = snapshot});
  db.put("k", "old");
  db.put("k", "new");
  db.put("gone", "x");
  db.erase("gone");
}

TEST(LogStoreRecovery, TornTailIsDroppedAndReported) {
  TempDir t;
  const fs::path dir = t.path() / "db";
  put_resurrection_case(dir.string(), false);
  const fs::path seg = segment_files(dir)[0];
  const uint64_t size = fs::file_size(seg);
  fs::resize_file(seg, size - 1);  // no index.snap: indistinguishable from a torn write
  auto db = LogStore::open(dir.string());
  const LogStoreRecovery& r = db.recovery();
  ASSERT_EQ(r.damage.size(), 1u);
  EXPECT_EQ(r.damage[0].kind, LogStoreDamage::Kind::torn_tail);
  EXPECT_EQ(r.damage[0].file, seg.string());
  EXPECT_EQ(r.damage[0].offset, size - 16);
  EXPECT_EQ(r.damage[0].bytes, 15u);
  EXPECT_EQ(r.damage[0].records, 1u);
  EXPECT_EQ(r.dropped_bytes, 15u);
  EXPECT_EQ(r.dropped_records, 1u);
  EXPECT_EQ(r.segments_affected, 1u);
  EXPECT_FALSE(r.acknowledged_lost);
  EXPECT_EQ(db.stats().truncated_bytes, 15u);
  EXPECT_NE(r.summary().find("dropped 15 bytes (1 record) in 1 segment"), std::string::npos) << r.summary();
  // The writer cut it: reported once.
  db.close();
  EXPECT_TRUE(LogStore::open(dir.string()).recovery().clean());
}

TEST(LogStoreRecovery, AcknowledgedTombstoneLostIsDamageNotATornWrite) {
  // Cut by one byte, and cut exactly at the tombstone's start (a clean record boundary):
  // the snapshot recorded the length the last close made durable.
  for (const uint64_t cut : {1, 16}) {
    TempDir t;
    const fs::path dir = t.path() / "db";
    put_resurrection_case(dir.string());
    const fs::path seg = segment_files(dir)[0];
    const uint64_t size = fs::file_size(seg);
    fs::resize_file(seg, size - cut);
    const auto before = dir_state(dir);
    EXPECT_EQ(test::code_of([&] { LogStore::open(dir.string()); }), Errc::corrupt) << cut;
    EXPECT_EQ(test::code_of([&] { LogStore::open(dir.string(), {.read_only = true}); }), Errc::corrupt) << cut;
    EXPECT_TRUE(dir_state(dir) == before) << "a failed open changed a file";
    auto db = LogStore::open(dir.string(), {.skip_corrupt = true, .read_only = true});
    const LogStoreRecovery& r = db.recovery();
    ASSERT_EQ(r.damage.size(), 1u) << cut;
    EXPECT_EQ(r.damage[0].kind, LogStoreDamage::Kind::lost_acknowledged);
    EXPECT_EQ(r.damage[0].offset, size - 16);
    EXPECT_EQ(r.damage[0].bytes, 16u);
    EXPECT_EQ(r.damage[0].records, 1u);
    EXPECT_TRUE(r.acknowledged_lost);
    EXPECT_EQ(db.get("gone"), "x");  // served only with the loss reported
    EXPECT_EQ(db.get("k"), "new");
    db.close();
    EXPECT_TRUE(dir_state(dir) == before) << "a read-only open changed a file";
    // A writer with skip_corrupt repairs; the next open is clean.
    {
      auto w = LogStore::open(dir.string(), {.skip_corrupt = true});
      EXPECT_TRUE(w.recovery().acknowledged_lost);
    }
    EXPECT_TRUE(LogStore::open(dir.string()).recovery().clean());
  }
}

TEST(LogStoreRecovery, MissingSegmentIsDetected) {
  TempDir t;
  const fs::path dir = t.path() / "db";
  {
    auto db = LogStore::open(dir.string(), {.segment_bytes = 64 << 10});
    for (int i = 0; i < 400; ++i) db.put(kname(i), std::string(500, 'v'));
  }
  const auto segs = segment_files(dir);
  ASSERT_GE(segs.size(), 3u);
  const uint64_t records = record_offsets(segs[1].string()).size();
  fs::remove(segs[1]);
  EXPECT_EQ(test::code_of([&] { LogStore::open(dir.string()); }), Errc::corrupt);
  auto db = LogStore::open(dir.string(), {.skip_corrupt = true, .read_only = true});
  ASSERT_EQ(db.recovery().damage.size(), 1u);
  EXPECT_EQ(db.recovery().damage[0].kind, LogStoreDamage::Kind::lost_acknowledged);
  EXPECT_EQ(db.recovery().damage[0].file, segs[1].string());
  EXPECT_EQ(db.recovery().damage[0].records, records);
  EXPECT_EQ(db.size(), 400u - records);
}

TEST(LogStoreRecovery, FlippedBitInTheLastRecord) {
  for (const bool snapshot : {false, true}) {
    TempDir t;
    const fs::path dir = t.path() / "db";
    put_resurrection_case(dir.string(), snapshot);
    const fs::path seg = segment_files(dir)[0];
    std::string bytes = slurp(seg);
    bytes[bytes.size() - 3] ^= 1;  // in the tombstone's key
    spit(seg, bytes);
    if (snapshot) {
      // The snapshot's index (lengths unchanged) never reads the tombstone: the answers
      // stay right, and verify finds the damage below the durable length.
      auto db = LogStore::open(dir.string(), {.read_only = true});
      EXPECT_FALSE(db.get("gone"));
      EXPECT_EQ(db.get("k"), "new");
      const LogStoreRecovery v = LogStore::verify(dir.string());
      ASSERT_EQ(v.damage.size(), 1u);
      EXPECT_EQ(v.damage[0].kind, LogStoreDamage::Kind::lost_acknowledged);
      continue;
    }
    auto db = LogStore::open(dir.string(), {.read_only = true});
    ASSERT_EQ(db.recovery().damage.size(), 1u);
    EXPECT_EQ(db.recovery().damage[0].kind, LogStoreDamage::Kind::torn_tail);
    EXPECT_EQ(db.recovery().damage[0].records, 1u);
    EXPECT_EQ(slurp(seg), bytes) << "read-only open cut the file";
  }
}

TEST(LogStoreRecovery, GetNeverReadsDamageAsAbsent) {
  TempDir t;
  const fs::path dir = t.path() / "db";
  {
    auto db = LogStore::open(dir.string());
    db.put("a", "1");
    db.put("b", "2");
  }
  // The key length of a's record: the snapshot still matches the lengths, so the
  // index is loaded and points at the damaged record.
  const fs::path seg = segment_files(dir)[0];
  std::string bytes = slurp(seg);
  bytes[40 + 6] = 2;
  spit(seg, bytes);
  auto db = LogStore::open(dir.string(), {.read_only = true});
  EXPECT_TRUE(db.stats().from_snapshot);
  EXPECT_EQ(test::code_of([&] { db.get("a"); }), Errc::checksum_mismatch);
  EXPECT_EQ(test::code_of([&] { db.contains("a"); }), Errc::checksum_mismatch);
  EXPECT_EQ(db.get("b"), "2");
}

TEST(LogStoreReadOnly, ChangesNoFileAndRefusesWrites) {
  TempDir t;
  const fs::path dir = t.path() / "db";
  {
    auto db = LogStore::open(dir.string(), {.use_snapshot = false});
    for (int i = 0; i < 100; ++i) db.put(kname(i), std::to_string(i));
    db.erase("k7");
    db.put("last", "L");
  }
  const fs::path seg = segment_files(dir)[0];
  fs::resize_file(seg, fs::file_size(seg) - 3);                     // a torn tail
  spit(dir / (seg.filename().string() + ".tmp"), "leftover");       // a writer would delete it
  const auto before = dir_state(dir);
  {
    auto db = LogStore::open(dir.string(), {.read_only = true});
    EXPECT_EQ(db.recovery().damage.size(), 1u);
    EXPECT_EQ(db.get("k5"), "5");
    EXPECT_FALSE(db.get("k7"));
    EXPECT_FALSE(db.get("last"));  // the torn record
    EXPECT_EQ(db.size(), 99u);
    EXPECT_EQ(contents(db).size(), 99u);
    EXPECT_EQ(db.stats().live_keys, 99u);
    EXPECT_EQ(test::code_of([&] { db.put("x", "y"); }), Errc::invalid_argument);
    EXPECT_EQ(test::code_of([&] { db.erase("k5"); }), Errc::invalid_argument);
    EXPECT_EQ(test::code_of([&] { db.compact(); }), Errc::invalid_argument);
    EXPECT_EQ(test::code_of([&] { db.sync(); }), Errc::invalid_argument);
  }
  EXPECT_TRUE(dir_state(dir) == before);
  EXPECT_EQ(test::code_of([&] { LogStore::open(t.file("nope"), {.read_only = true}); }), Errc::not_found);
  EXPECT_FALSE(fs::exists(t.file("nope")));
}

TEST(LogStoreReadOnly, RunsWhileAWriterIsActive) {
  TempDir t;
  const std::string dir = t.file("db");
  auto w = LogStore::open(dir, {.segment_bytes = 64 << 10});
  for (int i = 0; i < 1000; ++i) w.put(kname(i), std::to_string(i));
  {
    auto r = LogStore::open(dir, {.read_only = true});
    EXPECT_TRUE(r.recovery().clean());
    EXPECT_EQ(r.size(), 1000u);
    w.put("later", "x");
    EXPECT_FALSE(r.get("later"));  // the prefix present at open
    EXPECT_EQ(r.get("k999"), "999");
  }
  // A write in flight (a partial record at the end) is not damage while the writer is
  // active; the same bytes with no writer are a torn tail, reported.
  w.sync();
  const fs::path active = segment_files(dir).back();
  {
    std::ofstream f(active, std::ios::binary | std::ios::app);
    f << std::string("\x12\x34\x56\x78\x01\x00\x05\x00", 8);
  }
  {
    auto r = LogStore::open(dir, {.read_only = true});
    EXPECT_TRUE(r.recovery().clean()) << r.recovery().summary();
    EXPECT_EQ(r.get("later"), "x");
  }
  EXPECT_TRUE(LogStore::verify(dir).clean());
  // Readers and verify during puts and compactions: every key of the first 1000 is
  // always there with its value.
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    std::mt19937_64 rng(3);
    for (int round = 0; round < 6; ++round) {
      for (int i = 0; i < 300; ++i) w.put("tmp" + std::to_string(rng() % 500), std::string(rng() % 400, 't'));
      w.compact();
    }
    stop = true;
  });
  int opens = 0;
  std::string failure;
  try {
    while (failure.empty() && (!stop || opens < 3)) {
      auto r = LogStore::open(dir, {.read_only = true});
      if (!r.recovery().clean()) failure = "open reported " + r.recovery().summary();
      for (int i = 0; i < 1000; i += 37)
        if (r.get(kname(i)) != std::to_string(i)) failure = "wrong value of " + kname(i);
      const LogStoreRecovery v = LogStore::verify(dir);
      if (!v.clean()) failure = "verify reported " + v.summary();
      ++opens;
    }
  } catch (const Error& e) {
    failure = e.what();
  }
  writer.join();
  ASSERT_EQ(failure, "") << "after " << opens << " opens";
  w.close();
  std::printf("%d read-only opens during the writer's compactions\n", opens);
  EXPECT_TRUE(LogStore::verify(dir).clean());
}

TEST(LogStoreReadOnly, VerifyReportsDamageAndChangesNothing) {
  TempDir t;
  const fs::path dir = t.path() / "db";
  {
    auto db = LogStore::open(dir.string());
    for (int i = 0; i < 40; ++i) db.put(kname(i), std::string(30, 'a'));
  }
  EXPECT_TRUE(LogStore::verify(dir.string()).clean());
  const fs::path seg = segment_files(dir)[0];
  const auto offs = record_offsets(seg.string());
  std::string bytes = slurp(seg);
  bytes[offs[10] + 20] ^= 0x40;
  spit(seg, bytes);
  std::string snap = slurp(dir / "index.snap");
  snap[30] ^= 1;
  spit(dir / "index.snap", snap);
  const auto before = dir_state(dir);
  const LogStoreRecovery r = LogStore::verify(dir.string());
  EXPECT_TRUE(dir_state(dir) == before);
  ASSERT_EQ(r.damage.size(), 2u);
  EXPECT_EQ(r.damage[0].kind, LogStoreDamage::Kind::bad_snapshot);
  EXPECT_EQ(r.damage[1].kind, LogStoreDamage::Kind::corrupt);
  EXPECT_EQ(r.damage[1].file, seg.string());
  EXPECT_EQ(r.damage[1].offset, offs[10]);
  EXPECT_EQ(r.damage[1].bytes, offs[11] - offs[10]);
  EXPECT_EQ(r.damage[1].records, 1u);
  EXPECT_EQ(r.segments_affected, 1u);
  // A damaged segment header: with skip_corrupt the segment is ignored and reported.
  bytes[20] ^= 1;
  spit(seg, bytes);
  const LogStoreRecovery h = LogStore::verify(dir.string());
  ASSERT_FALSE(h.clean());
  EXPECT_EQ(h.damage.back().kind, LogStoreDamage::Kind::bad_segment);
  auto db = LogStore::open(dir.string(), {.skip_corrupt = true, .read_only = true});
  EXPECT_EQ(db.size(), 0u);
}

TEST(LogStore, CompactWithNothingDeadDoesNothing) {
  TempDir t;
  const fs::path dir = t.path() / "db";
  auto db = LogStore::open(dir.string());
  db.put("k", "v");
  const auto before = dir_state(dir);
  db.compact();
  EXPECT_TRUE(dir_state(dir) == before);
  EXPECT_EQ(db.stats().log_bytes, 56u);
  db.put("k", "w");  // one dead record now
  db.compact();
  EXPECT_EQ(db.stats().records, 1u);
  EXPECT_EQ(db.get("k"), "w");
  const auto after = db.stats().log_bytes;
  db.compact();
  EXPECT_EQ(db.stats().log_bytes, after);
}

TEST(LogStore, CompactionDropsDamageThatOpenSkipped) {
  TempDir t;
  const fs::path dir = t.path() / "db";
  {
    auto db = LogStore::open(dir.string(), {.use_snapshot = false});
    for (int i = 0; i < 30; ++i) db.put(kname(i), std::string(40, 'x'));
  }
  const fs::path seg = segment_files(dir)[0];
  const auto offs = record_offsets(seg.string());
  std::string bytes = slurp(seg);
  bytes[offs[5] + 14] ^= 4;
  spit(seg, bytes);
  {
    auto db = LogStore::open(dir.string(), {.skip_corrupt = true});
    ASSERT_EQ(db.recovery().damage.size(), 1u);
    db.compact();  // was: "damaged record ... found while compacting"
    EXPECT_EQ(db.size(), 29u);
  }
  EXPECT_TRUE(LogStore::verify(dir.string()).clean());
  auto db = LogStore::open(dir.string());
  EXPECT_EQ(db.size(), 29u);
  EXPECT_FALSE(db.get("k5"));
  EXPECT_EQ(db.get("k6"), std::string(40, 'x'));
}

TEST(LogStore, GcRemovesChunksNoManifestRefersTo) {
  TempDir t;
  std::mt19937_64 rng(5);
  auto file_of = [&](size_t n) {
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>(rng());
    return s;
  };
  const std::string a = file_of(40 * 1024), b = file_of(24 * 1024) + a.substr(0, 8 * 1024);
  spit(t.file("a"), a);
  spit(t.file("b"), b);
  auto db = LogStore::open(t.file("db"));
  store_import(db, t.file("a"), 8 * 1024);   // 5 chunks
  store_import(db, t.file("b"), 8 * 1024);   // 4 chunks, one shared with a: a's other 4 are orphans
  db.put(std::string(20, 'x'), "a 20-byte key put by hand");  // not a chunk: kept
  const uint64_t before = db.stats().log_bytes;
  const GcResult r = store_gc(db);
  EXPECT_EQ(r.removed, 4u);
  EXPECT_EQ(r.removed_bytes, 32u * 1024);
  EXPECT_LT(db.stats().log_bytes, before - 32 * 1024);
  EXPECT_EQ(db.size(), 4u + 1 + 1);
  EXPECT_EQ(db.get(std::string(20, 'x')), "a 20-byte key put by hand");
  store_export(db, t.file("out"));
  EXPECT_TRUE(slurp(t.file("out")) == b);
  EXPECT_EQ(store_gc(db).removed, 0u);
  // With no manifest (an import killed before writing it), every chunk is an orphan.
  db.erase(kManifestKey);
  EXPECT_EQ(store_gc(db).removed, 4u);
  EXPECT_EQ(db.size(), 1u);
}

// ---- the store fuzz: random damage, then every key read back ---------------------

struct RecordAt {
  std::string file;
  uint64_t offset = 0, size = 0;
};

// The newest record of every key, from the undamaged segment files.
std::map<std::string, RecordAt> newest_records(const fs::path& dir) {
  std::map<std::string, RecordAt> m;
  for (const auto& seg : segment_files(dir)) {
    const std::string s = slurp(seg);
    for (uint64_t pos = 40; pos + 12 <= s.size();) {
      uint16_t klen;
      uint32_t vlen;
      std::memcpy(&klen, s.data() + pos + 6, 2);
      std::memcpy(&vlen, s.data() + pos + 8, 4);
      const uint64_t size = (12 + klen + vlen + 7) / 8 * 8;
      m[s.substr(pos + 12, klen)] = {seg.string(), pos, size};
      pos += size;
    }
  }
  return m;
}

TEST(LogStoreFuzz, RandomDamageIsNeverServedSilently) {
  TempDir t;
  const fs::path base = t.path() / "base";
  std::map<std::string, std::optional<std::string>> ref;  // every key ever written
  {
    std::mt19937_64 rng(2026);
    auto db = LogStore::open(base.string(), {.segment_bytes = 64 << 10});
    for (int op = 0; op < 1600; ++op) {
      const std::string k = kname(rng() % 300);
      if (rng() % 5 == 0) {
        db.erase(k);
        if (ref.count(k)) ref[k] = std::nullopt;
      } else {
        const std::string v = random_value(rng, 600);
        db.put(k, v);
        ref[k] = v;
      }
      if (op == 900) db.compact();
    }
  }
  const auto newest = newest_records(base);
  ASSERT_GE(segment_files(base).size(), 4u);
  enum { exact, reported_by_get, reported_lost, undetectable_boundary_cut, silent, kOutcomes };
  const char* names[] = {"exact", "reported-by-get", "reported-lost", "undetectable (no index.snap, cut at a record boundary)",
                         "silently-stale-or-resurrected"};
  uint64_t count[kOutcomes] = {};
  int trials = 0, noop = 0, refused = 0, verified = 0, unreadable = 0, undetectable_trials = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    const fs::path dir = t.path() / "trial";
    fs::remove_all(dir);
    fs::copy(base, dir);
    // One trial in four without the snapshot (deleted): the scan alone must tell.
    const bool with_snap = seed % 4 != 0;
    if (!with_snap) fs::remove(dir / "index.snap");
    auto segs = segment_files(dir);
    const bool hit_snap = with_snap && rng() % 5 == 0;
    const fs::path target = hit_snap ? dir / "index.snap" : segs[rng() % segs.size()];
    const std::string orig = slurp(target);
    std::string bad = orig;
    const int how = static_cast<int>(rng() % 3);
    bool boundary_cut = false;
    if (how == 0) {
      // Half the cuts at a record boundary: a log that is intact, only shorter.
      const auto offs = hit_snap ? std::vector<uint64_t>{} : record_offsets(target.string());
      bad.resize(offs.empty() || rng() % 2 ? rng() % bad.size() : offs[rng() % offs.size()]);
      boundary_cut = !hit_snap && (bad.size() == 40 || std::find(offs.begin(), offs.end(), bad.size()) != offs.end());
    } else if (how == 1) {
      for (int n = 1 + static_cast<int>(rng() % 3); n > 0; --n) bad[rng() % bad.size()] ^= static_cast<char>(1 << (rng() % 8));
    } else {
      const size_t at = rng() % bad.size(), len = std::min<size_t>(1 + rng() % 64, bad.size() - at);
      const bool zeros = rng() % 2;
      for (size_t i = at; i < at + len; ++i) bad[i] = zeros ? '\0' : static_cast<char>(rng());
    }
    if (bad == orig) {
      ++noop;
      continue;
    }
    spit(target, bad);
    ++trials;
    const auto files_before = dir_state(dir);
    // Verify finds every change.
    const LogStoreRecovery v = LogStore::verify(dir.string());
    const bool undetectable = !with_snap && boundary_cut;
    if (undetectable) ++undetectable_trials;
    if (!v.clean()) ++verified;
    else if (!undetectable) ADD_FAILURE() << "seed " << seed << ": verify found nothing (" << target.filename() << ", how " << how << ")";
    try {
      LogStore::open(dir.string(), {.read_only = true});
    } catch (const Error&) {
      ++refused;
    }
    // Then what skip_corrupt serves, key by key, in a read-only open and (one trial in
    // three) in a writer that repairs.
    for (const bool writer : {false, true}) {
      if (writer && seed % 3 != 0) continue;
      std::optional<LogStore> db;
      try {
        db.emplace(LogStore::open(dir.string(), {.skip_corrupt = true, .read_only = !writer}));
      } catch (const Error& e) {
        ++unreadable;  // the error reports the damage
        continue;
      }
      const LogStoreRecovery& rep = db->recovery();
      for (const auto& [k, want] : ref) {
        std::optional<std::string> got;
        try {
          got = db->get(k);
        } catch (const Error&) {
          ++count[reported_by_get];
          continue;
        }
        if (got == want) {
          ++count[exact];
          continue;
        }
        const auto at = newest.find(k);
        const bool covered = at != newest.end() && std::any_of(rep.damage.begin(), rep.damage.end(), [&](const LogStoreDamage& d) {
                               return fs::path(d.file).filename() == fs::path(at->second.file).filename() &&
                                      d.offset < at->second.offset + at->second.size &&
                                      (d.to_end || at->second.offset < d.offset + d.bytes);
                             });
        if (covered) ++count[reported_lost];
        else if (undetectable) ++count[undetectable_boundary_cut];
        else {
          ++count[silent];
          ADD_FAILURE() << "seed " << seed << ": key " << k << " served silently wrong (" << target.filename() << ", how "
                        << how << ", " << (writer ? "writer" : "read-only") << "): " << rep.summary();
        }
      }
      if (!writer) {
        db.reset();
        ASSERT_TRUE(dir_state(dir) == files_before) << "seed " << seed << ": a read-only open changed a file";
      }
    }
  }
  std::printf("store fuzz: %d damaged stores (%d no-op damages skipped; %d cut at a record boundary with no index.snap),\n"
              "  %d refused by a default open, %d flagged by verify, %d unreadable even with skip_corrupt; keys read:\n",
              trials, noop, undetectable_trials, refused, verified, unreadable);
  for (int i = 0; i < kOutcomes; ++i) std::printf("  %-56s %llu\n", names[i], static_cast<unsigned long long>(count[i]));
  EXPECT_EQ(count[silent], 0u);
  EXPECT_GE(verified, trials - undetectable_trials);
  EXPECT_GT(count[reported_lost] + count[reported_by_get], 0u);
}

}  // namespace
}  // namespace amq
