// The log store's record codec: one put or tombstone as it lies in a segment.
//
// A record is a 12-byte header (CRC-32C of the rest, type, a zero byte, key length,
// value length), the key, the value, and zero padding to a multiple of 8 bytes
// (docs/format.md, "Log store"). The CRC covers everything after itself, padding too.
// Parsing never reads past the `avail` bytes it is given; a record that fails any
// check is "not a record", and the callers decide whether that is a torn tail, damage
// to skip, or an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "amq/detail/crc32c.hpp"
#include "amq/hash.hpp"
#include "amq/log_store.hpp"

namespace amq::detail::logstore {

inline constexpr size_t kRecHeader = 12;
inline constexpr uint8_t kPut = 1;
inline constexpr uint8_t kDelete = 2;

// Bytes a record of these key and value lengths takes, padding included.
inline uint64_t record_size(size_t klen, size_t vlen) { return (kRecHeader + klen + vlen + 7) & ~uint64_t{7}; }

// The key and value lengths of the header at p (kRecHeader bytes readable, unchecked).
struct RecLengths {
  uint16_t klen = 0;
  uint32_t vlen = 0;
  uint64_t size() const { return record_size(klen, vlen); }
};
inline RecLengths record_lengths(const std::byte* p) {
  RecLengths l;
  std::memcpy(&l.klen, p + 6, 2);
  std::memcpy(&l.vlen, p + 8, 4);
  return l;
}

// A parsed record; key and value point into the caller's buffer.
struct RecView {
  uint8_t type = 0;
  Bytes key, value;
  uint64_t size = 0;
};

// Header fields only; false if implausible or longer than `avail`.
inline bool parse_header(const std::byte* p, size_t avail, RecView& r) {
  if (avail < kRecHeader) return false;
  const uint8_t type = static_cast<uint8_t>(p[4]);
  const uint8_t reserved = static_cast<uint8_t>(p[5]);
  const RecLengths l = record_lengths(p);
  if ((type != kPut && type != kDelete) || reserved != 0 || l.vlen > LogStore::kMaxValueSize) return false;
  if (type == kDelete && l.vlen != 0) return false;
  r.type = type;
  r.size = l.size();
  if (r.size > avail) return false;
  r.key = Bytes(p + kRecHeader, l.klen);
  r.value = Bytes(p + kRecHeader + l.klen, l.vlen);
  return true;
}

// True if the `size` bytes at p carry a matching CRC-32C.
inline bool crc_ok(const std::byte* p, uint64_t size) {
  uint32_t crc;
  std::memcpy(&crc, p, 4);
  return crc32c(p + 4, size - 4) == crc;
}

// The header and the CRC: true if a whole intact record starts at p.
inline bool parse_record(const std::byte* p, size_t avail, RecView& r) {
  return parse_header(p, avail, r) && crc_ok(p, r.size);
}

// Replaces buf with the record (padded, CRC set). The caller checks the key and value
// limits (LogStore::kMaxKeySize, kMaxValueSize).
void encode_record(std::vector<std::byte>& buf, uint8_t type, Bytes key, Bytes value);

inline bool same(Bytes a, Bytes b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

}  // namespace amq::detail::logstore
