// amq/format.hpp — the one container file format shared by every amq structure.
//
// Layout (all integers little-endian; docs/format.md is the full description):
//
//   offset  size  field
//   0       8     magic "AMQF\r\n\x1a\n"
//   8       2     format version (1)
//   10      2     structure kind (amq::Kind)
//   12      1     key type (amq::KeyType; 0 = not recorded)
//   13      3     reserved, zero
//   16      8     params length P
//   24      8     payload length L
//   32      P     params (structure-specific), then zero padding to a multiple of 8
//   ...     L     payload (structure-specific), then zero padding to a multiple of 8
//   end-8   8     XXH3-64 (seed 0) of every byte before it
//
// The payload starts at a multiple of 8 from the start of the file, so a memory-mapped
// file can be read in place. `parse_container` checks the magic, version, kind, that
// the lengths add up to exactly the file size (no allocation is ever sized by them),
// the zero padding, and the checksum, and throws amq::Error with a precise code.
//
// Guarantees and cost. A file that parses has the layout above and, when the
// checksum is verified, has not changed since it was written (up to XXH3-64
// collisions). The returned views point into the caller's bytes: nothing is copied.
// parse_container reads every byte once (the checksum); write_container builds the
// file in one buffer of its size, write_container_to in the caller's memory.
//
// Who uses it: each structure's serialize() and load() wrap their params and payload
// in this container, so users of the typed classes or of AnySet never call it. Call
// it directly to add a structure, or to read a file's kind and key type without
// loading it.
//
//   amq::detail::ByteWriter params;  params.u64(n);
//   auto file = amq::write_container(amq::Kind::bloom, params.buffer(), payload);
//   amq::Container c = amq::parse_container(file, amq::Kind::bloom);
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace amq {

// The structure kinds, one per line of amq/kinds.inc (the value is what a container's
// header records).
enum class Kind : uint16_t {
#define AMQ_KIND(id, value, name) id = value,
#include "amq/kinds.inc"
#undef AMQ_KIND
};

// What the keys of a set are, recorded in its container (header byte 12) so that the
// CLI reads a set's keys as they were given: `str` byte strings as they are (text
// lines), `u64` 64-bit integers (8 bytes, little-endian as everywhere in amq, except in
// an ordered kind's file: a succinct set keeps them big-endian so they sort
// numerically), `hex` byte strings written as hex digits. `unknown`: not recorded
// (files written before the field existed, outside formats); such a set is read as
// str unless told otherwise.
enum class KeyType : uint8_t { unknown = 0, str = 1, u64 = 2, hex = 3 };
// "str", "u64", "hex"; "unknown" for KeyType::unknown and values out of range.
std::string_view key_type_name(KeyType type) noexcept;
// The type of a name key_type_name gives (str, u64, hex), or nullopt.
std::optional<KeyType> key_type_from_name(std::string_view name) noexcept;

// "bloom", "blocked-bloom", ... (the names the CLI's -t takes); "unknown" otherwise.
std::string_view kind_name(Kind kind) noexcept;
std::optional<Kind> kind_from_name(std::string_view name) noexcept;
// Every kind this build knows, in numeric order.
std::span<const Kind> all_kinds() noexcept;

inline constexpr uint16_t kFormatVersion = 1;
inline constexpr size_t kContainerHeaderSize = 32;
inline constexpr size_t kContainerTrailerSize = 8;

struct Container {
  Kind kind;
  uint16_t version;
  KeyType key_type;                    // KeyType::unknown when not recorded
  std::span<const std::byte> params;   // exactly P bytes (padding excluded)
  std::span<const std::byte> payload;  // exactly L bytes, 8-aligned within the file
};

// True if `file` starts with the amq magic (it may still be invalid).
bool has_container_magic(std::span<const std::byte> file) noexcept;
// The kind a container's header names, from its first bytes (a file's start is
// enough), or nullopt without the magic or a known kind. Nothing else is checked.
std::optional<Kind> container_kind(std::span<const std::byte> head) noexcept;
// The key type a container's header records (byte 12), from its first bytes:
// KeyType::unknown without the magic, when not recorded, or when out of range (which
// parse_container rejects).
KeyType container_key_type(std::span<const std::byte> head) noexcept;
// Records `type` in a complete container file: sets header byte 12 and recomputes the
// checksum. Throws amq::Error(invalid_argument) if `file` is not a container.
void set_container_key_type(std::span<std::byte> file, KeyType type);

// Validates and splits a container. `expected`, when given, must match the kind.
// Throws amq::Error: bad_magic, unsupported_version, wrong_kind, truncated, corrupt (an
// unknown kind or key type, reserved bytes not zero, padding, trailing bytes),
// too_large or checksum_mismatch. With `verify_checksum` false the checksum is not
// recomputed (for very large memory-mapped files whose pages should stay cold).
Container parse_container(std::span<const std::byte> file, std::optional<Kind> expected = std::nullopt,
                          bool verify_checksum = true);

// Builds a complete container file, recording `key_type` in its header.
std::vector<std::byte> write_container(Kind kind, std::span<const std::byte> params,
                                       std::span<const std::byte> payload, KeyType key_type = KeyType::unknown);
// The size of a container file with params and payload of these lengths.
size_t container_size(size_t params_len, size_t payload_len) noexcept;
// Writes a container file into `out`, which must be exactly container_size(params.size(),
// payload_len) bytes: the header and params, then fill_payload(span of payload_len
// bytes) writes the payload in place, then the padding and checksum. For structures
// built straight into their final memory, with no second copy of a large payload.
void write_container_to(std::span<std::byte> out, Kind kind, std::span<const std::byte> params,
                        size_t payload_len, const std::function<void(std::span<std::byte>)>& fill_payload,
                        KeyType key_type = KeyType::unknown);

}  // namespace amq
