// The log store's parts that stand alone: the record codec, segment names and headers,
// record locations, the index snapshot codec, and the lock file. (The store itself, its
// recovery and compaction are tested through the public API in log_store_test.cpp.)
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "amq/detail/log_index.hpp"
#include "amq/error.hpp"
#include "log_store_lock.hpp"
#include "log_store_record.hpp"
#include "log_store_segment.hpp"
#include "log_store_snapshot.hpp"
#include "test_util.hpp"

namespace amq {
namespace {

using namespace detail::logstore;

std::vector<std::byte> record(uint8_t type, std::string_view key, std::string_view value) {
  std::vector<std::byte> buf;
  encode_record(buf, type, as_bytes(key), as_bytes(value));
  return buf;
}

// Sets the record's CRC to match its bytes (to test the checks behind the CRC).
void reseal_record(std::vector<std::byte>& r) {
  const uint32_t crc = detail::crc32c(r.data() + 4, r.size() - 4);
  std::memcpy(r.data(), &crc, 4);
}

// ---- record codec ------------------------------------------------------------------

TEST(LogStoreRecord, EncodeDecodeRoundTrip) {
  const std::string big(1000, 'v');
  for (std::string_view key : {"", "k", "seven77", "eight888", "a longer key of some bytes"}) {
    for (std::string_view value : {std::string_view(), std::string_view("x"), std::string_view(big)}) {
      const auto r = record(kPut, key, value);
      ASSERT_EQ(r.size(), record_size(key.size(), value.size()));
      ASSERT_EQ(r.size() % 8, 0u);
      ASSERT_GE(r.size(), kRecHeader + key.size() + value.size());
      ASSERT_LT(r.size(), kRecHeader + key.size() + value.size() + 8);
      RecView v;
      ASSERT_TRUE(parse_record(r.data(), r.size(), v)) << key << " / " << value.size();
      EXPECT_EQ(v.type, kPut);
      EXPECT_EQ(v.size, r.size());
      EXPECT_EQ(std::string(as_chars(v.key)), key);
      EXPECT_EQ(std::string(as_chars(v.value)), value);
      const RecLengths l = record_lengths(r.data());
      EXPECT_EQ(l.klen, key.size());
      EXPECT_EQ(l.vlen, value.size());
      EXPECT_EQ(l.size(), r.size());
      // Parsing stops at the record: more bytes after it change nothing.
      auto longer = r;
      longer.resize(r.size() + 64, std::byte{0x5a});
      ASSERT_TRUE(parse_record(longer.data(), longer.size(), v));
      EXPECT_EQ(v.size, r.size());
    }
    const auto d = record(kDelete, key, {});
    RecView v;
    ASSERT_TRUE(parse_record(d.data(), d.size(), v));
    EXPECT_EQ(v.type, kDelete);
    EXPECT_EQ(std::string(as_chars(v.key)), key);
    EXPECT_TRUE(v.value.empty());
  }
}

TEST(LogStoreRecord, CutRecordIsRejected) {
  const auto r = record(kPut, "key", "a value of some length");
  RecView v;
  for (size_t n = 0; n < r.size(); ++n) {
    EXPECT_FALSE(parse_header(r.data(), n, v)) << n;
    EXPECT_FALSE(parse_record(r.data(), n, v)) << n;
  }
}

TEST(LogStoreRecord, EveryFlippedBitIsRejected) {
  const auto good = record(kPut, "key", "value!");  // with padding bytes
  ASSERT_GT(good.size(), kRecHeader + 3 + 6);
  for (size_t bit = 0; bit < good.size() * 8; ++bit) {
    auto r = good;
    r[bit / 8] ^= std::byte{static_cast<unsigned char>(1u << (bit % 8))};
    RecView v;
    EXPECT_FALSE(parse_record(r.data(), r.size(), v)) << "bit " << bit;
  }
}

TEST(LogStoreRecord, ImplausibleHeadersAreRejectedBeforeTheCrc) {
  RecView v;
  auto check = [&](std::vector<std::byte> r, const char* what) {
    reseal_record(r);  // the CRC matches: only the header check can reject it
    EXPECT_FALSE(parse_header(r.data(), r.size(), v)) << what;
    EXPECT_FALSE(parse_record(r.data(), r.size(), v)) << what;
  };
  for (uint8_t type : {0, 3, 255}) {
    auto r = record(kPut, "key", "value");
    r[4] = std::byte{type};
    check(r, "unknown type");
  }
  auto reserved = record(kPut, "key", "value");
  reserved[5] = std::byte{1};
  check(reserved, "reserved byte set");

  auto tomb = record(kPut, "key", "value");
  tomb[4] = std::byte{kDelete};
  check(tomb, "tombstone with a value");

  auto huge = record(kPut, "key", "value");
  const uint32_t vlen = static_cast<uint32_t>(LogStore::kMaxValueSize + 1);
  std::memcpy(huge.data() + 8, &vlen, 4);
  check(huge, "value over the limit");

  auto overrun = record(kPut, "key", "value");
  const uint16_t klen = 200;
  std::memcpy(overrun.data() + 6, &klen, 2);
  check(overrun, "key length past the end");
}

TEST(LogStoreRecord, Same) {
  EXPECT_TRUE(same(as_bytes(std::string_view("")), Bytes()));
  EXPECT_TRUE(same(as_bytes(std::string_view("abc")), as_bytes(std::string_view("abc"))));
  EXPECT_FALSE(same(as_bytes(std::string_view("abc")), as_bytes(std::string_view("abd"))));
  EXPECT_FALSE(same(as_bytes(std::string_view("abc")), as_bytes(std::string_view("ab"))));
}

// ---- segment names, headers, locations ---------------------------------------------

TEST(LogStoreSegment, NamesRoundTripAndOthersAreRejected) {
  for (uint64_t gen : {uint64_t{1}, uint64_t{0xabcdef}, ~uint64_t{0}}) {
    const std::string name = seg_name(gen);
    EXPECT_EQ(name.size(), 24u);
    uint64_t back = 0;
    ASSERT_TRUE(parse_seg_name(name, back)) << name;
    EXPECT_EQ(back, gen);
  }
  EXPECT_EQ(seg_name(1), "seg-0000000000000001.log");
  uint64_t g;
  for (const char* other : {"seg-0000000000000001.log.tmp", "seg-0000000000000001.log.compacting",
                            "seg-000000000000000A.log", "seg-00000000000000001.log", "seg-000000000000001.log",
                            "seg-000000000000000g.log", "xeg-0000000000000001.log", "seg-0000000000000001.lag",
                            "index.snap", "LOCK", ""})
    EXPECT_FALSE(parse_seg_name(other, g)) << other;
}

TEST(LogStoreSegment, LocationsRoundTrip) {
  for (uint32_t slot : {0u, 1u, 63u})
    for (uint64_t pos : {uint64_t{40}, uint64_t{48}, kPosLimit - 8}) {
      const uint64_t loc = make_loc(slot, pos);
      EXPECT_EQ(loc_slot(loc), slot);
      EXPECT_EQ(loc_pos(loc), pos);
      EXPECT_LE(loc, detail::LogIndex::kLocMask);  // fits the index's 36 bits
    }
}

Errc decode_error(const std::array<std::byte, kSegHeader>& h) {
  try {
    decode_seg_header(h.data(), "dir/seg-x.log");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dir/seg-x.log: "), std::string::npos) << e.what();
    return e.code();
  }
  ADD_FAILURE() << "decoded";
  return Errc::invalid_argument;
}

TEST(LogStoreSegment, HeaderRoundTrip) {
  SegHeader h;
  h.slot = 63;
  h.gen = 0x123456789;
  h.covers = 0x100;
  h.part = 2;
  h.nparts = 3;
  const auto b = encode_seg_header(h);
  EXPECT_EQ(std::memcmp(b.data(), kSegMagic, 8), 0);
  const SegHeader back = decode_seg_header(b.data(), "p");
  EXPECT_EQ(back.slot, h.slot);
  EXPECT_EQ(back.gen, h.gen);
  EXPECT_EQ(back.covers, h.covers);
  EXPECT_EQ(back.part, h.part);
  EXPECT_EQ(back.nparts, h.nparts);
  const SegHeader plain = decode_seg_header(encode_seg_header({.slot = 0, .gen = 1}).data(), "p");
  EXPECT_EQ(plain.gen, 1u);
  EXPECT_EQ(plain.covers, 0u);
}

TEST(LogStoreSegment, EachHeaderDamageIsItsOwnError) {
  const SegHeader good{.slot = 5, .gen = 9};
  auto bad_magic = encode_seg_header(good);
  bad_magic[0] = std::byte{'X'};
  EXPECT_EQ(decode_error(bad_magic), Errc::bad_magic);
  for (size_t i = 8; i < kSegHeader; ++i) {
    auto flipped = encode_seg_header(good);
    flipped[i] ^= std::byte{0x10};
    EXPECT_EQ(decode_error(flipped), Errc::checksum_mismatch) << "byte " << i;
  }
  // Fields that pass the CRC but are wrong: the CRC is recomputed by encoding them.
  auto version2 = encode_seg_header(good);
  const uint16_t v2 = 2;
  std::memcpy(version2.data() + 8, &v2, 2);
  std::memset(version2.data() + 12, 0, 4);
  const uint32_t crc = detail::crc32c(version2.data(), version2.size());
  std::memcpy(version2.data() + 12, &crc, 4);
  EXPECT_EQ(decode_error(version2), Errc::unsupported_version);
  EXPECT_EQ(decode_error(encode_seg_header({.slot = kSlotCount, .gen = 9})), Errc::corrupt);
  EXPECT_EQ(decode_error(encode_seg_header({.slot = 1, .gen = 9, .covers = 4, .part = 0, .nparts = 0})), Errc::corrupt);
  EXPECT_EQ(decode_error(encode_seg_header({.slot = 1, .gen = 9, .covers = 4, .part = 2, .nparts = 2})), Errc::corrupt);
  EXPECT_EQ(decode_error(encode_seg_header({.slot = 1, .gen = 9, .covers = 9, .part = 0, .nparts = 1})), Errc::corrupt);
  EXPECT_NO_THROW(decode_seg_header(encode_seg_header({.slot = 1, .gen = 9, .covers = 8, .part = 0, .nparts = 1}).data(), "p"));
}

// ---- index snapshot ----------------------------------------------------------------

SnapHeader sample_header() {
  SnapHeader h;
  h.seed = 0x0123456789abcdef;
  h.live_keys = 3;
  h.live_bytes = 96;
  h.segs = {{.gen = 1, .slot = 0, .length = 4096, .records = 100}, {.gen = 7, .slot = 3, .length = 40, .records = 0}};
  h.log2 = detail::LogIndex::kMinLog2;
  return h;
}

std::vector<uint64_t> sample_table(uint32_t log2) {
  std::vector<uint64_t> t(uint64_t{detail::LogIndex::kSlots} << log2, 0);
  t[0] = 11;
  t[5] = 22;
  t.back() = 33;
  return t;
}

// Sets the trailing XXH3 to match the bytes before it.
void reseal_snapshot(std::vector<std::byte>& b) {
  const uint64_t sum = XXH3_64bits(b.data(), b.size() - 8);
  std::memcpy(b.data() + b.size() - 8, &sum, 8);
}

TEST(LogStoreSnapshot, EncodeDecodeRoundTrip) {
  const SnapHeader h = sample_header();
  const auto table = sample_table(h.log2);
  const auto bytes = encode_snapshot(h, table);
  EXPECT_EQ(std::memcmp(bytes.data(), kSnapMagic, 8), 0);
  EXPECT_EQ(bytes.size(), 8 + 8 + 24 + 8 + 32 * h.segs.size() + 8 + 8 + 8 * table.size() + 8);
  const auto info = decode_snapshot(bytes);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->seed, h.seed);
  EXPECT_EQ(info->live_keys, h.live_keys);
  EXPECT_EQ(info->live_bytes, h.live_bytes);
  EXPECT_EQ(info->log2, h.log2);
  EXPECT_EQ(info->table, table);
  ASSERT_EQ(info->segs.size(), h.segs.size());
  for (size_t i = 0; i < h.segs.size(); ++i) {
    EXPECT_EQ(info->segs[i].gen, h.segs[i].gen);
    EXPECT_EQ(info->segs[i].slot, h.segs[i].slot);
    EXPECT_EQ(info->segs[i].length, h.segs[i].length);
    EXPECT_EQ(info->segs[i].records, h.segs[i].records);
  }
}

TEST(LogStoreSnapshot, CutOrFlippedIsRejected) {
  const SnapHeader h = sample_header();
  const auto good = encode_snapshot(h, sample_table(h.log2));
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_FALSE(decode_snapshot(std::span(good).first(n))) << "cut at " << n;
  for (size_t i = 0; i < good.size(); ++i) {
    auto b = good;
    b[i] ^= std::byte{0x01};
    EXPECT_FALSE(decode_snapshot(b)) << "byte " << i;
  }
}

TEST(LogStoreSnapshot, BadFieldsBehindAGoodChecksumAreRejected) {
  const SnapHeader h = sample_header();
  const auto good = encode_snapshot(h, sample_table(h.log2));
  auto patched = [&](size_t at, uint64_t value, size_t width) {
    auto b = good;
    std::memcpy(b.data() + at, &value, width);
    reseal_snapshot(b);
    return decode_snapshot(b);
  };
  ASSERT_TRUE(patched(8, kSnapVersion, 4));  // the patching itself keeps a good file good
  EXPECT_FALSE(patched(0, 0x4141414141414141, 8)) << "magic";
  EXPECT_FALSE(patched(8, kSnapVersion + 1, 4)) << "version";
  EXPECT_FALSE(patched(40, 1000000, 4)) << "more segments than bytes";
  const size_t log2_at = 48 + 32 * h.segs.size();
  EXPECT_FALSE(patched(log2_at, detail::LogIndex::kMinLog2 - 1, 4)) << "log2 below the minimum";
  EXPECT_FALSE(patched(log2_at, detail::LogIndex::kMaxLog2 + 1, 4)) << "log2 above the maximum";
  EXPECT_FALSE(patched(log2_at, h.log2 + 1, 4)) << "log2 not matching the table";
  EXPECT_FALSE(patched(log2_at + 8, 63, 8)) << "word count not matching log2";
  // Trailing bytes (resealed) make the table size disagree with the word count.
  auto longer = good;
  longer.insert(longer.end() - 8, 8, std::byte{0});
  reseal_snapshot(longer);
  EXPECT_FALSE(decode_snapshot(longer));
}

// ---- the lock file ------------------------------------------------------------------

TEST(LogStoreLock, WriterExcludesWritersAndIsSeenByReaders) {
  test::TempDir dir;
  const std::string lock = dir.file(kLockName);
  EXPECT_FALSE(writer_active(lock));  // no file
  const int fd = lock_writer(lock, dir.path().string());
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(writer_active(lock));
  try {
    lock_writer(lock, dir.path().string());
    ADD_FAILURE() << "second writer got the lock";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::locked);
    EXPECT_NE(std::string(e.what()).find("open by another writer"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(writer_active(lock));  // the failed attempt left the first lock alone
  ::close(fd);
  EXPECT_FALSE(writer_active(lock));  // the file stays, unlocked
  const int again = lock_writer(lock, dir.path().string());
  EXPECT_GE(again, 0);
  ::close(again);
}

}  // namespace
}  // namespace amq
