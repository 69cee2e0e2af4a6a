#include "amq/format.hpp"

#include <array>
#include <cstring>
#include <string>

#include "amq/detail/byte_io.hpp"
#include "amq/error.hpp"
#include "amq/hash.hpp"

namespace amq {
namespace {

constexpr std::array<std::byte, 8> kMagic = {std::byte{'A'},  std::byte{'M'},  std::byte{'Q'},
                                             std::byte{'F'},  std::byte{'\r'}, std::byte{'\n'},
                                             std::byte{0x1a}, std::byte{'\n'}};

constexpr Kind kKinds[] = {
#define AMQ_KIND(id, value, name) Kind::id,
#include "amq/kinds.inc"
#undef AMQ_KIND
};

constexpr uint64_t pad8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

bool all_zero(std::span<const std::byte> b) {
  for (std::byte x : b)
    if (x != std::byte{0}) return false;
  return true;
}

}  // namespace

std::string_view kind_name(Kind kind) noexcept {
  switch (kind) {
#define AMQ_KIND(id, value, name) \
  case Kind::id:                  \
    return name;
#include "amq/kinds.inc"
#undef AMQ_KIND
  }
  return "unknown";
}

std::optional<Kind> kind_from_name(std::string_view name) noexcept {
  for (Kind k : kKinds)
    if (kind_name(k) == name) return k;
  return std::nullopt;
}

std::span<const Kind> all_kinds() noexcept { return kKinds; }

std::string_view key_type_name(KeyType type) noexcept {
  switch (type) {
    case KeyType::str: return "str";
    case KeyType::u64: return "u64";
    case KeyType::hex: return "hex";
    case KeyType::unknown: break;
  }
  return "unknown";
}

std::optional<KeyType> key_type_from_name(std::string_view name) noexcept {
  for (KeyType t : {KeyType::str, KeyType::u64, KeyType::hex})
    if (key_type_name(t) == name) return t;
  return std::nullopt;
}

KeyType container_key_type(std::span<const std::byte> head) noexcept {
  if (head.size() < 13 || !has_container_magic(head)) return KeyType::unknown;
  const auto type = static_cast<KeyType>(std::to_integer<uint8_t>(head[12]));
  return key_type_name(type) == "unknown" ? KeyType::unknown : type;
}

void set_container_key_type(std::span<std::byte> file, KeyType type) {
  if (file.size() < kContainerHeaderSize + kContainerTrailerSize || !has_container_magic(file))
    throw Error(Errc::invalid_argument, "set_container_key_type: not an amq container");
  file[12] = static_cast<std::byte>(type);
  const size_t trailer_at = file.size() - kContainerTrailerSize;
  detail::store_le64(file.data() + trailer_at, XXH3_64bits(file.data(), trailer_at));
}

bool has_container_magic(std::span<const std::byte> file) noexcept {
  return file.size() >= kMagic.size() && std::memcmp(file.data(), kMagic.data(), kMagic.size()) == 0;
}

std::optional<Kind> container_kind(std::span<const std::byte> head) noexcept {
  if (head.size() < 12 || !has_container_magic(head)) return std::nullopt;
  const uint16_t raw = static_cast<uint16_t>(std::to_integer<uint16_t>(head[10]) | std::to_integer<uint16_t>(head[11]) << 8);
  const Kind kind = static_cast<Kind>(raw);
  if (kind_name(kind) == "unknown") return std::nullopt;
  return kind;
}

Container parse_container(std::span<const std::byte> file, std::optional<Kind> expected, bool verify_checksum) {
  if (file.size() < kMagic.size() || !has_container_magic(file))
    throw Error(Errc::bad_magic, "not an amq file (bad magic)");
  detail::ByteReader r(file, "amq file header");
  r.skip(kMagic.size());
  const uint16_t version = r.u16();
  const uint16_t kind_raw = r.u16();
  const uint8_t key_type_raw = r.u8();
  const uint32_t reserved = static_cast<uint32_t>(r.u8()) | static_cast<uint32_t>(r.u16()) << 8;
  const uint64_t params_len = r.u64();
  const uint64_t payload_len = r.u64();
  if (version != kFormatVersion)
    throw Error(Errc::unsupported_version,
                "amq format version " + std::to_string(version) + " is not supported (this build reads version " +
                    std::to_string(kFormatVersion) + ")");
  const Kind kind = static_cast<Kind>(kind_raw);
  if (kind_name(kind) == "unknown")
    throw Error(Errc::corrupt, "unknown structure kind " + std::to_string(kind_raw));
  if (expected && *expected != kind)
    throw Error(Errc::wrong_kind, "file holds a " + std::string(kind_name(kind)) + ", not a " +
                                      std::string(kind_name(*expected)));
  const auto key_type = static_cast<KeyType>(key_type_raw);
  if (key_type_raw != 0 && key_type_name(key_type) == "unknown")
    throw Error(Errc::corrupt, "unknown key type " + std::to_string(key_type_raw));
  if (reserved != 0) throw Error(Errc::corrupt, "reserved header field is not zero");
  // Lengths are checked against the real size before anything is derived from them;
  // the bound on each keeps the sums below from overflowing.
  const uint64_t limit = file.size();
  if (params_len > limit || payload_len > limit)
    throw Error(Errc::truncated, "amq file truncated: header announces " +
                                     std::to_string(kContainerHeaderSize + params_len + payload_len +
                                                    kContainerTrailerSize) +
                                     " bytes, file has " + std::to_string(limit));
  const uint64_t total = kContainerHeaderSize + pad8(params_len) + pad8(payload_len) + kContainerTrailerSize;
  if (total > limit)
    throw Error(Errc::truncated, "amq file truncated: header announces " + std::to_string(total) +
                                     " bytes, file has " + std::to_string(limit));
  if (total < limit)
    throw Error(Errc::corrupt, "amq file has " + std::to_string(limit - total) + " trailing bytes");

  const size_t params_at = kContainerHeaderSize;
  const size_t payload_at = params_at + pad8(params_len);
  const size_t trailer_at = payload_at + pad8(payload_len);
  if (!all_zero(file.subspan(params_at + params_len, pad8(params_len) - params_len)) ||
      !all_zero(file.subspan(payload_at + payload_len, pad8(payload_len) - payload_len)))
    throw Error(Errc::corrupt, "non-zero padding in amq file");
  if (verify_checksum) {
    const uint64_t stored = detail::load_le64(file.data() + trailer_at);
    const uint64_t actual = XXH3_64bits(file.data(), trailer_at);
    if (stored != actual) throw Error(Errc::checksum_mismatch, "amq file checksum mismatch (file is corrupted)");
  }
  return Container{kind, version, key_type, file.subspan(params_at, params_len), file.subspan(payload_at, payload_len)};
}

size_t container_size(size_t params_len, size_t payload_len) noexcept {
  return kContainerHeaderSize + pad8(params_len) + pad8(payload_len) + kContainerTrailerSize;
}

void write_container_to(std::span<std::byte> out, Kind kind, std::span<const std::byte> params,
                        size_t payload_len, const std::function<void(std::span<std::byte>)>& fill_payload,
                        KeyType key_type) {
  if (out.size() != container_size(params.size(), payload_len))
    throw Error(Errc::invalid_argument, "write_container_to: the buffer is not the container's size");
  std::memset(out.data(), 0, kContainerHeaderSize + pad8(params.size()));
  std::memcpy(out.data(), kMagic.data(), kMagic.size());
  const uint16_t version = kFormatVersion, kind_raw = static_cast<uint16_t>(kind);
  std::memcpy(out.data() + 8, &version, 2);  // little-endian host (byte_io.hpp)
  std::memcpy(out.data() + 10, &kind_raw, 2);
  out[12] = static_cast<std::byte>(key_type);
  detail::store_le64(out.data() + 16, params.size());
  detail::store_le64(out.data() + 24, payload_len);
  if (!params.empty()) std::memcpy(out.data() + kContainerHeaderSize, params.data(), params.size());
  const size_t payload_at = kContainerHeaderSize + pad8(params.size()), trailer_at = payload_at + pad8(payload_len);
  fill_payload(out.subspan(payload_at, payload_len));
  std::memset(out.data() + payload_at + payload_len, 0, trailer_at - payload_at - payload_len);
  detail::store_le64(out.data() + trailer_at, XXH3_64bits(out.data(), trailer_at));
}

std::vector<std::byte> write_container(Kind kind, std::span<const std::byte> params,
                                       std::span<const std::byte> payload, KeyType key_type) {
  std::vector<std::byte> out(container_size(params.size(), payload.size()));
  write_container_to(out, kind, params, payload.size(), [&](std::span<std::byte> to) {
    if (!payload.empty()) std::memcpy(to.data(), payload.data(), payload.size());
  }, key_type);
  return out;
}

}  // namespace amq
