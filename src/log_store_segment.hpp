// The log store's segment files: names, the 40-byte header, record locations, the open
// file of a segment, and the POSIX I/O helpers every part of the store uses.
//
// A segment is DIR/seg-<16 hex digits of its generation>.log: a header (magic,
// version, slot, CRC-32C, generation, and for a compaction output the generation it
// covers and its part i of n), then records (log_store_record.hpp). A record's
// location is 6 bits of segment slot and 30 bits of position / 8 (docs/format.md).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace amq::detail::logstore {

inline constexpr char kSegMagic[8] = {'A', 'M', 'Q', 'S', 'E', 'G', '\r', '\n'};
inline constexpr uint16_t kSegVersion = 1;
inline constexpr size_t kSegHeader = 40;
inline constexpr int kSlotCount = 64;  // 6 bits of a location
inline constexpr int kPosBits = 30;    // position / 8
inline constexpr uint64_t kMaxSegmentBytes = uint64_t{4} << 30;
inline constexpr uint64_t kPosLimit = uint64_t{8} << 30;  // (2^30 positions of 8 bytes)

inline uint64_t make_loc(uint32_t slot, uint64_t pos) { return (uint64_t{slot} << kPosBits) | (pos >> 3); }
inline uint32_t loc_slot(uint64_t loc) { return static_cast<uint32_t>(loc >> kPosBits); }
inline uint64_t loc_pos(uint64_t loc) { return (loc & ((uint64_t{1} << kPosBits) - 1)) << 3; }

// "seg-0000000000000001.log" for generation 1.
std::string seg_name(uint64_t gen);
// The generation of a segment file name; false for any other name.
bool parse_seg_name(const std::string& name, uint64_t& gen);

struct SegHeader {
  uint32_t slot = 0;
  uint64_t gen = 0;
  uint64_t covers = 0;  // > 0: compaction output replacing every segment with gen <= covers
  uint32_t part = 0, nparts = 0;
};

std::array<std::byte, kSegHeader> encode_seg_header(const SegHeader& h);
// Checks magic, CRC, version, slot range and compaction fields; throws amq::Error
// naming `path` (Errc::bad_magic, checksum_mismatch, unsupported_version, corrupt).
SegHeader decode_seg_header(const std::byte* p, const std::string& path);

// Throws amq::Error "path: what: strerror(err)" (Errc::not_found for ENOENT, else io).
[[noreturn]] void sys_fail(const std::string& path, const std::string& what, int err);
// Reads exactly n bytes at off; throws on an error or the end of the file.
void pread_full(int fd, void* buf, size_t n, uint64_t off, const std::string& path);
// Writes n bytes at off; returns 0 or the errno of the failure.
int pwrite_full(int fd, const void* buf, size_t n, uint64_t off);
// fsyncs a directory (after a rename, create or unlink in it).
void fsync_dir(const std::string& dir);

// An open segment: its header, descriptor, and the bytes of header + intact records.
struct Segment {
  SegHeader h;
  int fd = -1;
  std::string path;
  uint64_t length = 0;   // bytes of header + intact records
  uint64_t records = 0;
  Segment() = default;
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;
  ~Segment() {
    if (fd >= 0) ::close(fd);
  }
};
using SegPtr = std::shared_ptr<Segment>;

// A read-only map of a segment through its descriptor.
struct FdMap {
  const std::byte* data = nullptr;
  size_t size = 0;
  FdMap() = default;
  FdMap(const FdMap&) = delete;
  FdMap& operator=(const FdMap&) = delete;
  ~FdMap() {
    if (data) ::munmap(const_cast<std::byte*>(data), size);
  }
  void map(const Segment& s) {
    void* p = ::mmap(nullptr, s.length, PROT_READ, MAP_SHARED, s.fd, 0);
    if (p == MAP_FAILED) sys_fail(s.path, "cannot map", errno);
    data = static_cast<const std::byte*>(p);
    size = s.length;
  }
};

}  // namespace amq::detail::logstore
