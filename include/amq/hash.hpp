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
//   amq::Xxh3Hasher   XXH3-64 with a seed — the default of every kind but BlockedBloomFilter
//   amq::Xxh64Hasher  XXH64 with a seed — Parquet's split-block filter uses seed 0
//   amq::Mix64Hasher  an 8-byte key (so every uint64_t key) through a two-multiply
//                     64-bit mixer, any other length through XXH3-64 — the default of
//                     BlockedBloomFilter's new files
// Id 5 is not a type: BinaryFuseFilter::key_hash, XXH3-64 except that an 8-byte key is
// its own integer value, for the binary fuse filter, which mixes every hash with its
// construction seed anyway.
// A custom hasher is any type with `static constexpr uint32_t id` (>= 1000 for user
// types), a `uint64_t seed` member and `uint64_t operator()(amq::Bytes) const`.
//
// Guarantees. A hasher gives the same value for a key on every platform: XXH3-64 and
// XXH64 as xxHash specifies them, over the key's bytes, with the seed. A kind records
// its hasher's id and seed in its file, so a file is never queried with another hash,
// and a changed hash function is a new id, never a silent change
// (docs/decisions/0006-hashing-contract-per-kind.md). KeyView is a view: it holds no
// copy and must not outlive the key it was made from.
//
// Mix64Hasher's 8-byte keys: h = splitmix64's output function of (k ^ seed), k the
// key's 8 bytes read little-endian (a uint64_t key is k itself): add 0x9E3779B97F4A7C15,
// then two xor-shift-multiply rounds and a final xor-shift (detail::splitmix64). It is a
// bijection of the 64-bit values, so distinct keys never collide, and it is the function
// splitmix64 applies to a counter, so sequential keys come out spread. Keys of every
// other length hash exactly as Xxh3Hasher does with the same seed; an 8-byte string and
// the uint64_t of the same bytes hash alike, as everywhere.
//
// Cost and choice. One pass over the key's bytes. XXH3 is the faster of the two byte
// hashes, so it is the default; choose Xxh64Hasher only to match a format that specifies
// XXH64 (Parquet's split-block Bloom filter). Mix64Hasher costs two multiplies for an
// 8-byte key where XXH3 also spends a rotate-xor round and a secret load, and is XXH3
// for other keys. The Guava-compatible BloomFilter hashes with Guava's murmur3 instead,
// as its file format requires.
//
//   amq::Xxh3Hasher h{.seed = 42};
//   uint64_t x = h(amq::KeyView("hello").bytes());
#pragma once

#include <array>
#include <bit>
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
  KeyView(uint64_t v) noexcept : ptr_(nullptr), size_(8), is_u64_(true) { std::memcpy(u64_.data(), &v, 8); }

  // A flag rather than a null ptr_ marks the u64 case: it is a constant where the
  // view is built inline, so a byte key's view compiles to its pointer alone.
  Bytes bytes() const noexcept {
    const void* p = is_u64_ ? static_cast<const void*>(u64_.data()) : ptr_;
    return {static_cast<const std::byte*>(p), size_};
  }

 private:
  const void* ptr_;
  size_t size_;
  bool is_u64_ = false;
  std::array<std::byte, 8> u64_;  // set only when is_u64_
};

struct Hash128 {
  uint64_t low;
  uint64_t high;
  bool operator==(const Hash128&) const = default;
};

namespace detail {
#if XXH_VERSION_NUMBER >= 800
// XXH3-64 of a key of 4 to 8 bytes (amq's uint64_t keys among them): xxHash's 4-to-8
// formula written out, because the library's final mix (XXH3_rrmxmx) is a plain static
// function that gcc leaves out of line, a call in every lookup.
[[gnu::always_inline]] inline uint64_t xxh3_64_4to8(const void* p, size_t len, uint64_t seed) noexcept {
  uint32_t lo, hi;
  std::memcpy(&lo, p, 4);
  std::memcpy(&hi, static_cast<const unsigned char*>(p) + len - 4, 4);
  seed ^= static_cast<uint64_t>(__builtin_bswap32(static_cast<uint32_t>(seed))) << 32;
  const uint64_t flip = XXH_readLE64(XXH3_kSecret + 8) ^ XXH_readLE64(XXH3_kSecret + 16);
  uint64_t h = (hi + (static_cast<uint64_t>(lo) << 32)) ^ (flip - seed);
  h ^= std::rotl(h, 49) ^ std::rotl(h, 24);
  h *= 0x9FB21C651E98DF25ULL;
  h ^= (h >> 35) + len;
  h *= 0x9FB21C651E98DF25ULL;
  return h ^ (h >> 28);
}
#endif
// XXH3-64 of a key of at most 16 bytes, inline. xxHash's public entry point stays out
// of line (its long-input paths are large), and a `flatten` wrapper around it is lost
// whenever the wrapper itself is inlined, so this calls the library's own short-input
// function, which XXH_INLINE_ALL makes visible and force-inlines (4 to 8 bytes: the
// function above). It is exactly what XXH3_64bits_withSeed does for len <= 16 (tested
// for every length).
[[gnu::always_inline]] inline uint64_t xxh3_64_short(const void* p, size_t len, uint64_t seed) noexcept {
#if XXH_VERSION_NUMBER >= 800
  if (len - 4 <= 4) return xxh3_64_4to8(p, len, seed);
  return XXH3_len_0to16_64b(static_cast<const xxh_u8*>(p), len, XXH3_kSecret, seed);
#else
  return XXH3_64bits_withSeed(p, len, seed);
#endif
}
inline uint64_t xxh3_64(Bytes b, uint64_t seed) noexcept {
  return b.size() <= 16 ? xxh3_64_short(b.data(), b.size(), seed) : XXH3_64bits_withSeed(b.data(), b.size(), seed);
}
}  // namespace detail

struct Xxh3Hasher {
  static constexpr uint32_t id = 1;
  uint64_t seed = 0;
  uint64_t operator()(Bytes b) const noexcept { return detail::xxh3_64(b, seed); }
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

namespace detail {
// splitmix64's output function (Steele, Lea, Flood): a bijective 64-bit mixer, for
// spreading small or sequential integers (CuckooTable's alternate-bucket offsets, the
// succinct set's tail sampling, Mix64Hasher).
inline constexpr uint64_t splitmix64(uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}
// The 8 bytes at p as a little-endian integer.
inline uint64_t load_le64(const void* p) noexcept {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}
}  // namespace detail

struct Mix64Hasher {
  static constexpr uint32_t id = 4;
  uint64_t seed = 0;
  // The mixer alone, for a key already read as its 64-bit value.
  static constexpr uint64_t mix(uint64_t key, uint64_t seed) noexcept { return detail::splitmix64(key ^ seed); }
  uint64_t operator()(Bytes b) const noexcept {
    return b.size() == 8 ? mix(detail::load_le64(b.data()), seed) : detail::xxh3_64(b, seed);
  }
};

// MurmurHash3_x64_128 (Austin Appleby's public-domain algorithm), as Guava's
// Hashing.murmur3_128(seed) computes it: `low` is the first 8 bytes of Guava's
// HashCode.asBytes() read little-endian (HashCode.asLong()), `high` the next 8.
// Seeds >= 2^31 are Guava's negative int seeds, sign-extended as Guava does (the
// reference C code zero-extends them; for smaller seeds the two agree).
inline Hash128 murmur3_x64_128(Bytes data, uint32_t seed = 0) noexcept;

namespace detail {
// Any length: 16-byte blocks, then the tail (src/murmur3.cpp).
Hash128 murmur3_x64_128_any(Bytes data, uint32_t seed) noexcept;

// The whole of murmur3_x64_128 for keys shorter than 16 bytes (no full block: the key
// is the tail), inline so that short keys cost no call and no byte loop.
inline uint64_t murmur3_fmix64(uint64_t k) noexcept {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}
inline constexpr uint64_t kMurmurC1 = 0x87c37b91114253d5ULL;
inline constexpr uint64_t kMurmurC2 = 0x4cf5ad432745937fULL;
inline uint64_t murmur3_mix_k1(uint64_t k1) noexcept { return std::rotl(k1 * kMurmurC1, 31) * kMurmurC2; }
inline uint64_t murmur3_mix_k2(uint64_t k2) noexcept { return std::rotl(k2 * kMurmurC2, 33) * kMurmurC1; }
// Mixes the tail words (rest = len % 16 bytes of them) in and finalises.
inline Hash128 murmur3_finish(uint64_t h1, uint64_t h2, uint64_t k1, uint64_t k2, size_t rest, size_t len) noexcept {
  if (rest > 8) h2 ^= murmur3_mix_k2(k2);
  if (rest > 0) h1 ^= murmur3_mix_k1(k1);
  h1 ^= len;
  h2 ^= len;
  h1 += h2;
  h2 += h1;
  h1 = murmur3_fmix64(h1);
  h2 = murmur3_fmix64(h2);
  h1 += h2;
  h2 += h1;
  return {h1, h2};
}
// Guava keeps the seed as a Java int and widens it with its sign; the reference C
// code zero-extends. They differ only for seeds >= 2^31, where amq follows Guava.
inline uint64_t murmur3_seed(uint32_t seed) noexcept {
  return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(seed)));
}
inline Hash128 murmur3_x64_128_short(Bytes data, uint32_t seed) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  const size_t len = data.size();
  auto load64 = [](const unsigned char* q) {
    uint64_t v;
    std::memcpy(&v, q, 8);
    return v;
  };
  auto load32 = [](const unsigned char* q) {
    uint32_t v;
    std::memcpy(&v, q, 4);
    return static_cast<uint64_t>(v);
  };
  // The tail words, little-endian, read with overlapping loads (never past the key).
  uint64_t k1 = 0;
  uint64_t k2 = 0;
  if (len >= 8) {
    k1 = load64(p);
    if (len > 8) k2 = load64(p + len - 8) >> (8 * (16 - len));
  } else if (len >= 4) {
    k1 = load32(p) | load32(p + len - 4) << (8 * (len - 4));
  } else if (len > 0) {
    k1 = uint64_t{p[0]} | uint64_t{p[len / 2]} << (8 * (len / 2)) | uint64_t{p[len - 1]} << (8 * (len - 1));
  }
  return murmur3_finish(murmur3_seed(seed), murmur3_seed(seed), k1, k2, len, len);
}
}  // namespace detail

// Short keys (the common case) are hashed inline, longer ones out of line.
inline Hash128 murmur3_x64_128(Bytes data, uint32_t seed) noexcept {
  return data.size() < 16 ? detail::murmur3_x64_128_short(data, seed) : detail::murmur3_x64_128_any(data, seed);
}

// "xxh3", "xxh64", "murmur3", "mix64", or "custom".
std::string_view hasher_name(uint32_t id) noexcept;

// Lemire's multiply-shift reduction of a 64-bit hash into [0, n).
inline uint64_t reduce(uint64_t hash, uint64_t n) noexcept {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(hash) * n) >> 64);
}

}  // namespace amq
