// amq/golomb_coded_set.hpp — Golomb-coded sets: the most compact static approximate
// set amq has, and the outside formats built on the same coding (BIP158 block filters,
// HTTP Cache Digests).
//
// A Golomb-coded set (GCS) hashes each key to a value in [0, N·M) — M is about 1/ε —
// sorts the values, drops repeats, and writes the gaps between neighbours with a
// Golomb code. The gaps are close to geometric with mean M, for which Golomb coding
// with divisor ≈ 0.69·M is within 0.03 bits of the entropy: the payload is about
// log2(1/ε) + 1.47 bits per key, against 1.44·log2(1/ε) for a Bloom filter.
//
// Guarantees
//  * No false negatives: contains(k) is true for every key the set was built from.
//  * False-positive rate at most about 1/M = ε for an absent key (N keys in a range of
//    N·M values: 1 - (1 - 1/(N·M))^N < 1/M).
//  * Static: built once from all its keys, then read-only. Concurrent const calls are
//    safe.
//  * Loading validates the container, the index and every bucket's bounds before the
//    first query; a damaged or hostile file is an amq::Error, never a crash.
//  * Hash: XXH3-64 with a seed by default (hasher id 1; docs/decisions/0006); the range
//    reduction is Lemire's multiply-shift (amq::reduce), so values sorted by hash are
//    sorted by value. Sets of user-computed hashes (ids >= 1000) are queried with
//    contains_hash().
//
// Memory
//  * Payload: Rice coding (the default; divisor 2^c, c chosen for the shortest expected
//    code) or general Golomb with the optimal divisor (~0.07 bits/key shorter). At
//    ε = 1/256: 9.54 + 0.14 = 9.68 bits/key (Rice), 9.44 + 0.23 = 9.67 (Golomb).
//  * Index: the hash range is cut into buckets of W = k·M values (k = 128 with Rice, 80
//    with Golomb); each bucket's bit offset is kept (a 64-bit offset every 32 buckets
//    plus a 16- or 32-bit offset per bucket: 0.14 bits/key with Rice, 0.23 with Golomb).
//  * Byte layout (Rice with divisor 128 and M <= 256, the default among them): the same
//    codes with each code's first unary bit and its value's low 7 bits as one byte,
//    buckets padded to a byte (+0.03 bits/key). docs/format.md has every byte.
//
// Complexity
//  * contains(): O(k) worst case within one bucket, in practice a constant number of
//    steps: the byte layout compares a 48-code window around the expected code at once
//    (AVX2, or 8 bytes at a time in 64-bit words elsewhere) and checks candidates with
//    ranks (docs/decisions/0012); other Rice widths enter their bucket near the target
//    and skip codes in groups (0011). Golomb-coded sets decode code by code, a few times
//    slower: choose Golomb only when the last 0.07 bits/key matter more than speed.
//  * contains_many(): a batch is answered in the caller's order with index entries and
//    bucket lines prefetched ahead; a dense batch of a set decoded code by code (Golomb
//    coding) is sorted and each bucket searched once.
//  * build(): O(n log n) for the sort, O(n) to code.
//  * The query kernels are chosen once per set, when it is built or loaded, for this
//    CPU (amq/detail/dispatch.hpp); every kernel gives the same answers.
//
// Choose it over a Bloom or cuckoo filter when the set is built once and size matters
// most (files sent over a network, cookies, block filters): it takes ~16% fewer bits than
// a BloomFilter at 1/256, is a few times slower to query (`amq bench` prints the ratio on
// your machine) and cannot take inserts.
//
//   std::vector<std::string> keys = {"apple", "banana"};
//   auto s = amq::GolombCodedSet::build(keys, {.fpp = 1.0 / 256});
//   bool maybe = s.contains("apple");                   // true
//   auto file = s.serialize();                          // amq container (Kind::gcs)
//   auto again = amq::GolombCodedSet::load(file);
//
// The outside formats (all byte-exact, tested against their published vectors):
//   golomb_encode/golomb_decode  any sorted list with any of the three gap rules
//   Bip158Filter                 BIP158 basic block filters (SipHash-2-4, P = 19, M = 784931)
//   CacheDigest                  draft-ietf-httpbis-cache-digest-02 digests (SHA-256, base64url)
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "amq/detail/huge_pages.hpp"
#include "amq/hash.hpp"

namespace amq {

// ---- the gap coding, on its own ---------------------------------------------------

enum class GapRule {
  // d = v - previous (the first against 0); equal values give zero gaps (BIP158).
  keep_duplicates,
  // As keep_duplicates, but zero gaps are skipped (the seed's worked example).
  skip_duplicates,
  // d = v - previous - 1, the previous starting at -1; repeats skipped (Cache Digests).
  minus_one,
};

struct GolombCoding {
  uint64_t divisor = 64;    // Golomb divisor; a power of two is Rice coding
  bool unary_ones = true;   // quotient as 1s ended by a 0; false: 0s ended by a 1
  GapRule gaps = GapRule::skip_duplicates;
};

struct BitString {
  std::vector<std::byte> bytes;  // MSB-first, the last byte zero-padded
  uint64_t bits = 0;             // meaningful bits
  uint64_t count = 0;            // values coded (after skipping repeats)
  std::string to_string() const; // "0110..." of the meaningful bits
};

// Codes `sorted` (ascending; throws Errc::invalid_argument otherwise).
BitString golomb_encode(std::span<const uint64_t> sorted, const GolombCoding& coding);
// Decodes `count` values from bits [bit_begin, bit_end) of `data`; with no count,
// decodes until no complete code is left (the remaining bits must then be zero).
// Throws Errc::truncated or Errc::corrupt on malformed input.
std::vector<uint64_t> golomb_decode(std::span<const std::byte> data, uint64_t bit_begin, uint64_t bit_end,
                                    std::optional<uint64_t> count, const GolombCoding& coding);

// The divisor that minimises the expected code length of geometric gaps of mean m
// (m >= 1): the smallest d with (1 - 1/m)^d <= 1/2, about 0.69·m.
uint64_t optimal_golomb_divisor(double mean_gap) noexcept;
// The Rice parameter (log2 of the divisor) with the shortest expected code for gaps of
// mean m: BIP158's P = 19 for M = 784931 = 1.497·2^19.
unsigned optimal_rice_bits(double mean_gap) noexcept;
// Expected bits per code for geometric gaps of mean m under `divisor`.
double expected_golomb_bits(double mean_gap, uint64_t divisor) noexcept;

// ---- amq's own Golomb-coded set ------------------------------------------------------

class GolombCodedSet;
namespace detail {
struct GcsTestPeer;
namespace gcs {
struct Access;
struct Kernels;
}  // namespace gcs
}  // namespace detail

enum class GcsCoding : uint8_t { golomb = 0, rice = 1 };
struct GcsOptions {
  double fpp = 1.0 / 256;                  // ε, in (0, 0.5]; the range per key M = round(1/ε)
  GcsCoding coding = GcsCoding::rice;     // Rice: the fast queries (see above)
  uint64_t seed = 0;                       // hash seed
};

class GolombCodedSet {
 public:
  using Coding = GcsCoding;
  using Options = GcsOptions;
  // Keys per index bucket, on average: 128 with Rice coding (the fast queries; codes ~0.07
  // bits longer), 80 with Golomb coding, so both stay <= 9.7 bits/key at ε = 1/256.
  static constexpr uint64_t kGolombBucketKeys = 80;
  static constexpr uint64_t kRiceBucketKeys = 128;
  static constexpr uint64_t kSuperblockBuckets = 32;

  GolombCodedSet();  // empty, M = 256

  // Builds from keys (anything KeyView accepts), hashed with `hasher` (Xxh3Hasher or
  // Xxh64Hasher are remembered and used by contains(); a custom hasher's sets are
  // queried with contains_hash(hasher(key))). Repeated keys count once.
  template <class Keys, class Hasher = Xxh3Hasher>
  static GolombCodedSet build(const Keys& keys, const Options& options = {}, Hasher hasher = {}) {
    hasher.seed = options.seed;
    std::vector<uint64_t> hashes;
    hashes.reserve(std::size(keys));
    for (const auto& k : keys) hashes.push_back(hasher(KeyView(k).bytes()));
    return from_hashes(std::move(hashes), options, Hasher::id);
  }
  // Builds from 64-bit key hashes (any order, repeats allowed).
  static GolombCodedSet from_hashes(std::vector<uint64_t> hashes, const Options& options,
                                    uint32_t hasher_id = Xxh3Hasher::id);

  // True if the key may be in the set. Throws Errc::unsupported for a set built with a
  // custom hasher (use contains_hash).
  bool contains(KeyView key) const { return contains_hash(hash_key(key)); }
  bool contains_hash(uint64_t hash) const noexcept { return contains_value(reduce(hash, range_)); }
  // Whether `value` (in [0, range())) is one of the coded values.
  bool contains_value(uint64_t value) const noexcept { return value < range_ && query_(*this, value); }

  // out[i] = contains(keys[i]); returns how many are true. A batch is answered in order,
  // prefetched; when a query decodes its bucket code by code (sorts_batch), a dense
  // batch is sorted and answered in one merge pass over its buckets instead.
  template <class Keys>
  size_t contains_many(const Keys& keys, std::span<bool> out) const {
    std::vector<uint64_t> hashes;
    hashes.reserve(std::size(keys));
    for (const auto& k : keys) hashes.push_back(hash_key(KeyView(k)));
    return contains_many_hashes(hashes, out);
  }
  size_t contains_many_hashes(std::span<const uint64_t> hashes, std::span<bool> out) const;
  // True when contains_many answers a batch of this many queries sorted: Golomb coding
  // or a Rice width without the group search, and at least 8 queries a bucket.
  bool sorts_batch(size_t queries) const noexcept;

  // Every coded value, ascending.
  std::vector<uint64_t> decode_all() const;

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = uint64_t;
    using difference_type = std::ptrdiff_t;
    using pointer = const uint64_t*;
    using reference = uint64_t;
    const_iterator() = default;
    uint64_t operator*() const noexcept { return value_; }
    const_iterator& operator++() noexcept;
    const_iterator operator++(int) noexcept {
      auto t = *this;
      ++*this;
      return t;
    }
    bool operator==(const const_iterator& o) const noexcept { return bucket_ == o.bucket_ && at_ == o.at_; }

   private:
    friend class GolombCodedSet;
    const GolombCodedSet* set_ = nullptr;
    uint64_t bucket_ = 0, value_ = 0;
    size_t at_ = 0;                 // index of the current value in its bucket
    std::vector<uint64_t> values_;  // the current bucket, decoded
    void load_bucket() noexcept;    // from bucket_ on, the first bucket with values (or end)
  };
  // The coded values, ascending (decoded on the fly).
  const_iterator begin() const noexcept;
  const_iterator end() const noexcept;

  uint64_t size() const noexcept { return values_; }      // distinct coded values
  uint64_t key_count() const noexcept { return keys_; }   // distinct key hashes given
  uint64_t range() const noexcept { return range_; }      // N·M
  uint64_t range_per_key() const noexcept { return m_; }  // M
  uint64_t divisor() const noexcept { return divisor_; }
  Coding coding() const noexcept { return coding_; }
  uint64_t seed() const noexcept { return seed_; }
  uint32_t hasher_id() const noexcept { return hasher_id_; }
  uint64_t stream_bits() const noexcept { return stream_bits_; }
  uint64_t bucket_count() const noexcept { return buckets_; }
  uint64_t bucket_width() const noexcept { return width_; }
  unsigned offset_width() const noexcept { return wide_ ? 32 : 16; }
  // Whether the buckets use the byte layout (Rice with divisor 128 and M <= 256).
  bool byte_layout() const noexcept { return byte_layout_; }
  // Bytes of the coded stream plus the index (what a query needs in memory).
  uint64_t size_in_bytes() const noexcept;
  // The false-positive rate to expect: 1 - (1 - 1/range)^N.
  double expected_fpp() const noexcept;

  bool operator==(const GolombCodedSet& o) const noexcept;

  // The amq container (Kind::gcs); load() checks every bucket decodes exactly.
  std::vector<std::byte> serialize() const;
  static GolombCodedSet load(std::span<const std::byte> file);

 private:
  struct Raw {};
  explicit GolombCodedSet(Raw) {}
  // Inline for the default hasher, so that a key's view (an integer key's above all)
  // folds into the hash as in the other filters (docs/decisions/0009).
  uint64_t hash_key(KeyView key) const {
    if (hasher_id_ == Xxh3Hasher::id) [[likely]]
      return Xxh3Hasher{seed_}(key.bytes());
    return hash_key_other(key);
  }
  uint64_t hash_key_other(KeyView key) const;  // XXH64, or throws for a custom hasher
  uint64_t bucket_offset(uint64_t b) const noexcept {
    const uint64_t base = super_[b / kSuperblockBuckets];
    return base + (wide_ ? rel32_[b] : rel16_[b]);
  }
  // v / width_ without a division (v < range_).
  uint64_t bucket_of(uint64_t v) const noexcept {
    if (width_shift_ != 0) return v >> width_shift_;  // W = 2^s (the default ε = 1/256)
    uint64_t b = static_cast<uint64_t>((static_cast<unsigned __int128>(v) * width_inverse_) >> 64);
    b += v - b * width_ >= width_;
    return b;
  }
  // The bucket scans (src/gcs/internal.hpp).
  template <class F>
  void scan_bucket(uint64_t b, F&& f) const noexcept;
  template <bool GapBytes = false, class F>
  uint64_t scan_bytes(uint64_t b, F&& f) const noexcept;
  void encode(std::span<const uint64_t> values);  // the stream and index (build)
  void build_index(const std::vector<uint64_t>& bucket_offsets);
  void set_stream(std::span<const std::byte> bytes);
  void prepare_queries();  // the derived query constants below, then select_kernels()
  void select_kernels() noexcept;
  uint16_t read_params(std::span<const std::byte> params);  // load; returns the layout
  void read_payload(std::span<const std::byte> payload);
  void validate(bool gap_bytes = false) const;  // gap_bytes: a file of layout 1
  void validate_split(uint64_t b, uint64_t limit, std::span<const std::byte> bytes, uint64_t& count) const;
  void convert_gap_bytes();                      // layout 1 -> 2 (load)
  uint64_t validate_bytes(uint64_t b, uint64_t limit, std::span<const std::byte> bytes, bool gap_bytes) const;
  friend struct detail::gcs::Access;  // the query kernels (src/gcs/)
  friend struct detail::GcsTestPeer;  // tests: run every kernel variant (src/gcs/test_peer.hpp)

  uint64_t keys_ = 0, values_ = 0, m_ = 256, range_ = 256, divisor_ = 128, width_ = 0, buckets_ = 1;
  uint64_t stream_bits_ = 0, seed_ = 0;
  uint32_t hasher_id_ = Xxh3Hasher::id;
  Coding coding_ = Coding::rice;
  bool wide_ = false;
  bool byte_layout_ = false;  // Rice, divisor 128, M <= 256: a byte per code (see above)
  unsigned rem_bits_ = 0;  // c
  uint64_t cutoff_ = 0;    // u
  // 32 zero guard bytes, the stream, 288 zero guard bytes; huge pages when large.
  std::vector<std::byte, detail::HugePageAllocator<std::byte>> stream_;
  std::vector<uint64_t> super_;    // bit offset of every 32nd bucket
  std::vector<uint16_t> rel16_;    // bucket offset - its superblock's (buckets + 1 entries)
  std::vector<uint32_t> rel32_;
  // Derived at build/load: floor((2^64 - 1) / W); the Rice group size G (codes whose
  // remainders fill at most 56 bits).
  uint64_t width_inverse_ = 0;
  unsigned width_shift_ = 0;  // s when W = 2^s (s >= 1), else 0
  unsigned group_ = 0;
  uint32_t block_inverse_ = 0;  // 2^32 / (16·M): t -> the 16-code block expected to hold t
  uint64_t mean_bucket_bits_ = 0;  // stream bits / buckets: where a bucket probably starts
  // The kernels chosen for this set's layout and this CPU (src/gcs/internal.hpp), and
  // among them the single-query kernel for its width: one call, no dispatch.
  const detail::gcs::Kernels* kernels_ = nullptr;
  using QueryFn = bool (*)(const GolombCodedSet&, uint64_t) noexcept;
  QueryFn query_ = nullptr;
};

// ---- BIP158 basic block filters ----------------------------------------------------

struct Bip158Params {
  uint64_t k0 = 0, k1 = 0;  // SipHash key: bytes 0-7 and 8-15, little-endian
  unsigned p = 19;          // Rice parameter (1..62)
  uint64_t m = 784931;      // range per element: values in [0, N·M)
  // k0/k1 from 16 key bytes — for a block filter, the first 16 bytes of the block hash
  // in its internal (not the displayed, reversed) byte order.
  static Bip158Params from_key(std::span<const std::byte> key16, unsigned p = 19, uint64_t m = 784931);
  // From 32 hex digits (the CLI's --siphash-key).
  static Bip158Params from_hex_key(std::string_view hex, unsigned p = 19, uint64_t m = 784931);
};

class Bip158Filter {
 public:
  // The filter of the distinct elements (repeats count once): CompactSize N, then the
  // Golomb-Rice coded sorted hashes, zero-padded to a byte.
  static std::vector<std::byte> build(std::span<const Bytes> elements, const Bip158Params& params);
  // Parses and fully decodes a filter; throws amq::Error (truncated, corrupt) for
  // anything but exactly N codes followed by at most 7 zero padding bits.
  static Bip158Filter parse(std::span<const std::byte> filter, const Bip158Params& params);

  // SipHash-2-4 of the element, reduced into [0, N·M).
  uint64_t hash_element(Bytes element) const noexcept;
  bool contains(Bytes element) const noexcept;
  // Sorts the queries' hashes and merges them with the filter's (BIP158's MatchAny).
  size_t contains_many(std::span<const Bytes> elements, std::span<bool> out) const;
  bool match_any(std::span<const Bytes> elements) const;

  uint64_t size() const noexcept { return n_; }
  const Bip158Params& params() const noexcept { return params_; }
  const std::vector<uint64_t>& values() const noexcept { return values_; }  // ascending
  std::span<const std::byte> bytes() const noexcept { return bytes_; }

 private:
  Bip158Params params_;
  uint64_t n_ = 0;
  std::vector<uint64_t> values_;
  std::vector<std::byte> bytes_;
};

// Bitcoin's CompactSize (1, 3, 5 or 9 bytes); read_compact_size rejects non-canonical
// encodings and advances `pos`.
void write_compact_size(std::vector<std::byte>& out, uint64_t v);
uint64_t read_compact_size(std::span<const std::byte> data, size_t& pos);

// ---- HTTP Cache Digests (draft-ietf-httpbis-cache-digest-02) --------------------------
// CacheDigest and base64url_* are in the amq::formats component (libamq_formats, which
// needs libcrypto), not in amq::core.

class CacheDigest {
 public:
  struct Entry {
    std::string_view url;
    std::string_view etag;  // with its quotes (and W/), or empty when not validated
  };
  // N = the number of distinct entries rounded to the nearest power of two (a tie, as 3
  // or 6, goes up; at least 1, at most 2^31), P = 2^log2_p (log2_p <= 31).
  static std::vector<std::byte> build(std::span<const Entry> entries, unsigned log2_p);
  // log2(P) for a target false-positive rate: round(log2(1/fpp)), at least 1.
  static unsigned log2_p_for(double fpp);
  // Parses and decodes a digest (raw bytes); throws amq::Error when malformed, and
  // Errc::truncated when the values are too few for N or stop short of the top of their
  // range (the format has no count: a cut that removes only the last few values, at a
  // code boundary, cannot be told from a complete digest; docs/format.md has the rules).
  static CacheDigest parse(std::span<const std::byte> digest);

  // SHA-256 of URL then ETag, its first log2(N·P) bits (the top bits of the digest
  // read as a big-endian integer, as H2O truncates it).
  static uint64_t hash_value(std::string_view url, std::string_view etag, unsigned bits);
  bool contains(std::string_view url, std::string_view etag = {}) const;
  bool contains_value(uint64_t v) const noexcept;

  unsigned log2_n() const noexcept { return log2_n_; }
  unsigned log2_p() const noexcept { return log2_p_; }
  const std::vector<uint64_t>& values() const noexcept { return values_; }
  std::span<const std::byte> bytes() const noexcept { return bytes_; }

 private:
  unsigned log2_n_ = 0, log2_p_ = 0;
  std::vector<uint64_t> values_;
  std::vector<std::byte> bytes_;
};

// base64url without '=' padding (RFC 4648 §5), through OpenSSL.
std::string base64url_encode(std::span<const std::byte> data);
// Accepts the padded or unpadded form and surrounding whitespace; throws
// Errc::corrupt for any other character or length.
std::vector<std::byte> base64url_decode(std::string_view text);

}  // namespace amq
