// amq/hash.hpp — keys and the hash functions amq structures are built on.
//
// Keys are byte strings (std::string_view, std::span<const std::byte>) or uint64_t.
// A uint64_t key is the same key as its 8 little-endian bytes (the encoding of Guava's
// longFunnel), so `insert(uint64_t{7})` and `insert(bytes_of_7)` agree everywhere.
// Every structure takes a `KeyView`, which converts implicitly from all three, and
// hashes it once per operation.
//
// Hashers are small value types with a stable `id` (written into files, so a file is
// never queried with another hash) and a seed:
//   amq::Xxh3Hasher   XXH3-64 with a seed — the default everywhere
//   amq::Xxh64Hasher  XXH64 with a seed — Parquet's split-block filter uses seed 0
// A custom hasher is any type with `static constexpr uint32_t id` (>= 1000 for user
// types), a `uint64_t seed` member and `uint64_t operator()(amq::Bytes) const`.
//
//   amq::Xxh3Hasher h{.seed = 42};
//   uint64_t x = h(amq::KeyView("hello").bytes());
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

namespace amq {

using Bytes = std::span<const std::byte>;

inline Bytes as_bytes(std::string_view s) noexcept {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}
inline std::string_view as_chars(Bytes b) noexcept {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

// A borrowed key: byte string or uint64_t (kept as its 8 little-endian bytes).
class KeyView {
 public:
  KeyView(std::string_view s) noexcept : ptr_(s.data()), size_(s.size()) {}
  KeyView(const std::string& s) noexcept : ptr_(s.data()), size_(s.size()) {}
  KeyView(const char* s) noexcept : KeyView(std::string_view(s)) {}
  KeyView(Bytes b) noexcept : ptr_(b.data()), size_(b.size()) {}
  KeyView(uint64_t v) noexcept : ptr_(nullptr), size_(8) { std::memcpy(u64_.data(), &v, 8); }

  Bytes bytes() const noexcept {
    const void* p = ptr_ ? ptr_ : static_cast<const void*>(u64_.data());
    return {static_cast<const std::byte*>(p), size_};
  }

 private:
  const void* ptr_;
  size_t size_;
  std::array<std::byte, 8> u64_{};
};

struct Hash128 {
  uint64_t low;
  uint64_t high;
  bool operator==(const Hash128&) const = default;
};

struct Xxh3Hasher {
  static constexpr uint32_t id = 1;
  uint64_t seed = 0;
  uint64_t operator()(Bytes b) const noexcept { return XXH3_64bits_withSeed(b.data(), b.size(), seed); }
  Hash128 hash128(Bytes b) const noexcept {
    const XXH128_hash_t h = XXH3_128bits_withSeed(b.data(), b.size(), seed);
    return {h.low64, h.high64};
  }
};

struct Xxh64Hasher {
  static constexpr uint32_t id = 2;
  uint64_t seed = 0;
  uint64_t operator()(Bytes b) const noexcept { return XXH64(b.data(), b.size(), seed); }
};

// MurmurHash3_x64_128 (Austin Appleby's public-domain algorithm), as Guava's
// Hashing.murmur3_128(seed) computes it: `low` is the first 8 bytes of Guava's
// HashCode.asBytes() read little-endian (HashCode.asLong()), `high` the next 8.
// Seeds >= 2^31 are Guava's negative int seeds, sign-extended as Guava does (the
// reference C code zero-extends them; for smaller seeds the two agree).
Hash128 murmur3_x64_128(Bytes data, uint32_t seed = 0) noexcept;

// "xxh3", "xxh64", "murmur3", or "custom".
std::string_view hasher_name(uint32_t id) noexcept;

// Lemire's multiply-shift reduction of a 64-bit hash into [0, n).
inline uint64_t reduce(uint64_t hash, uint64_t n) noexcept {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(hash) * n) >> 64);
}

}  // namespace amq
