#include "amq/log_store.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
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

}  // namespace
}  // namespace amq
