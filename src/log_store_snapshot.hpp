// The log store's index snapshot, DIR/index.snap: the cuckoo index and the segments it
// describes, written by close() and loaded by open() when the segment files are exactly
// the ones it lists (docs/format.md, "Log store"; docs/decisions/0002 for its use as the
// durable mark). The file ends with an XXH3-64 of everything before it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace amq::detail::logstore {

inline constexpr char kSnapMagic[8] = {'A', 'M', 'Q', 'L', 'S', 'N', 'P', '\n'};
inline constexpr uint32_t kSnapVersion = 1;
inline constexpr const char* kSnapName = "index.snap";

// One segment as the snapshot saw it: generation + length identify its contents.
struct SnapSeg {
  uint64_t gen = 0;
  uint32_t slot = 0;
  uint64_t length = 0, records = 0;
};

// The header fields of a snapshot (everything but the index table).
struct SnapHeader {
  uint64_t seed = 0, live_keys = 0, live_bytes = 0;
  std::vector<SnapSeg> segs;
  uint32_t log2 = 0;
};

struct SnapInfo : SnapHeader {
  std::vector<uint64_t> table;
};

// The file's bytes. `table` is the index's raw table (LogIndex::raw()).
std::vector<std::byte> encode_snapshot(const SnapHeader& h, std::span<const uint64_t> table);

// The snapshot in `bytes`, or nullopt if it is damaged in any way (checksum, magic,
// version, a count that does not fit, a table size that does not match log2). The
// table's entries are not checked here: the store checks them against its segments.
std::optional<SnapInfo> decode_snapshot(std::span<const std::byte> bytes);

}  // namespace amq::detail::logstore
