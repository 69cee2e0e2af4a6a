// The log store's index snapshot (log_store_snapshot.hpp): the codec, and the store's
// reading, checking and writing of DIR/index.snap.
#include "log_store_snapshot.hpp"

#include <cstring>

#include "amq/detail/byte_io.hpp"
#include "amq/detail/log_index.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "amq/hash.hpp"
#include "log_store_impl.hpp"

namespace amq {
namespace detail::logstore {

std::vector<std::byte> encode_snapshot(const SnapHeader& h, std::span<const uint64_t> table) {
  ByteWriter w;
  w.bytes(std::string_view(kSnapMagic, 8));
  w.u32(kSnapVersion);
  w.u32(0);
  w.u64(h.seed);
  w.u64(h.live_keys);
  w.u64(h.live_bytes);
  w.u32(static_cast<uint32_t>(h.segs.size()));
  w.u32(0);
  for (const SnapSeg& s : h.segs) {
    w.u64(s.gen);
    w.u32(s.slot);
    w.u32(0);
    w.u64(s.length);
    w.u64(s.records);
  }
  w.u32(h.log2);
  w.u32(0);
  w.u64(table.size());
  w.bytes(std::as_bytes(table));
  w.u64(XXH3_64bits(w.buffer().data(), w.size()));
  return w.take();
}

std::optional<SnapInfo> decode_snapshot(std::span<const std::byte> bytes) {
  try {
    if (bytes.size() < 8 + 8) return std::nullopt;
    const uint64_t stored = load_le64(bytes.data() + bytes.size() - 8);
    if (XXH3_64bits(bytes.data(), bytes.size() - 8) != stored) return std::nullopt;
    ByteReader r(bytes.first(bytes.size() - 8), "index snapshot");
    if (std::memcmp(r.bytes(8).data(), kSnapMagic, 8) != 0 || r.u32() != kSnapVersion) return std::nullopt;
    r.u32();
    SnapInfo info;
    info.seed = r.u64();
    info.live_keys = r.u64();
    info.live_bytes = r.u64();
    const uint32_t nseg = r.u32();
    r.u32();
    if (nseg > r.remaining() / 32) return std::nullopt;
    info.segs.resize(nseg);
    for (auto& sg : info.segs) {
      sg.gen = r.u64();
      sg.slot = r.u32();
      r.u32();
      sg.length = r.u64();
      sg.records = r.u64();
    }
    info.log2 = r.u32();
    r.u32();
    const uint64_t words = r.u64();
    if (info.log2 < LogIndex::kMinLog2 || info.log2 > LogIndex::kMaxLog2 ||
        words != (uint64_t{LogIndex::kSlots} << info.log2) || words * 8 != r.remaining())
      return std::nullopt;
    info.table.resize(words);
    std::memcpy(info.table.data(), r.bytes(words * 8).data(), words * 8);
    return info;
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace detail::logstore

using namespace detail::logstore;
using detail::LogIndex;

std::optional<SnapInfo> LogStore::Impl::read_snapshot() {
  const std::string path = file(kSnapName);
  std::vector<std::byte> bytes;
  try {
    bytes = read_file(path);
  } catch (const Error& e) {
    if (e.code() == Errc::not_found) return std::nullopt;
    throw;
  }
  std::optional<SnapInfo> info = decode_snapshot(bytes);
  if (!info) add_damage(LogStoreDamage::Kind::bad_snapshot, path, 0, 0, 0, false);
  return info;
}

bool LogStore::Impl::use_snapshot_index(const SnapInfo& info) {
  if (info.segs.size() != segs.size()) return false;
  for (size_t i = 0; i < segs.size(); ++i) {
    // Stale unless every segment is the very file the snapshot saw: segments only
    // grow by appending, so generation + length identify their contents.
    const SnapSeg& a = info.segs[i];
    if (a.gen != segs[i]->h.gen || a.slot != segs[i]->h.slot || a.length != segs[i]->length) return false;
  }
  try {
    LogIndex idx = LogIndex::from_raw(static_cast<int>(info.log2), info.table);
    if (idx.size() != info.live_keys) return false;
    for (uint64_t e : info.table) {
      if (e == 0) continue;
      const uint64_t loc = LogIndex::loc_of(e);
      const auto& s = slots[loc_slot(loc) % kSlotCount];
      if (loc_slot(loc) >= kSlotCount || !s || loc_pos(loc) < kSegHeader || loc_pos(loc) + kRecHeader > s->length)
        return false;
    }
    for (size_t i = 0; i < segs.size(); ++i) segs[i]->records = info.segs[i].records;
    index = std::move(idx);
  } catch (const Error&) {
    return false;
  }
  seed = info.seed;
  live_bytes = info.live_bytes;
  from_snapshot = true;
  return true;
}

void LogStore::Impl::write_snapshot() {
  SnapHeader h;
  h.seed = seed;
  h.live_keys = index.size();
  h.live_bytes = live_bytes;
  h.segs.reserve(segs.size());
  for (const auto& s : segs) h.segs.push_back({s->h.gen, s->h.slot, s->length, s->records});
  h.log2 = static_cast<uint32_t>(index.log2_buckets());
  write_file_atomic(file(kSnapName), encode_snapshot(h, index.raw()));
}

}  // namespace amq
