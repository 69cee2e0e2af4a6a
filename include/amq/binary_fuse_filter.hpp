// amq/binary_fuse_filter.hpp — binary fuse filters (Graf & Lemire, "Binary Fuse
// Filters: Fast and Smaller Than Xor Filters", JEA 2022): the smallest static filter amq
// has at whole-bit rates, and the fastest to query.
//
// A binary fuse filter keeps one w-bit fingerprint per slot in an array of L slots cut
// into segments of a power-of-two length. A key hashes to one slot in each of `arity`
// (3 or 4) consecutive segments and to a w-bit fingerprint; it is reported present when
// the XOR of its slots equals its fingerprint. Construction finds slot values that make
// this true for every key by peeling the key-slot hypergraph: a slot only one key uses
// is given to that key, the key is removed, and so on; slots are then filled in reverse.
//
// Guarantees
//  * No false negatives: contains(k) is true for every key the filter was built from.
//  * False-positive rate 2^-w for an absent key (w = fingerprint_bits, 1 to 32).
//  * Space: L·w bits, L ≈ 1.125·n (3-wise) or 1.075·n (4-wise) for large n — at w = 8,
//    ~9.0 and ~8.6 bits/key. The segment length and the size factor are the paper's
//    functions of n (segment length 2^⌊ln n / ln 3.33 + 2.25⌋ for 3-wise,
//    2^⌊ln n / ln 2.91 − 0.5⌋ for 4-wise, within [4, 2^18]; factor max(1.125, 0.875 +
//    0.25·ln 10^6 / ln n), resp. max(1.075, 0.77 + 0.305·ln 600000 / ln n)), so a set of
//    a few keys takes a few dozen slots, not a segment of thousands.
//  * A lookup: one hash of the key (XXH3-64 with the filter's hash seed, as every amq
//    structure; a key of 8 bytes, a uint64_t key among them, is instead taken as its
//    integer value, see key_hash), one 64-bit mix with the construction seed, and 3 or
//    4 independent reads. Widths 8, 16 and 32 read a plain uint8_t/uint16_t/uint32_t array; other
//    widths are bit-packed (one unaligned 8-byte read a slot).
//  * Each shape (width 8, 16, 32 or packed; 3- or 4-wise) and hasher has its own lookup
//    code, picked once when the filter is built or loaded: a lookup tests neither.
//    The 8-bit shapes' code for 8-byte keys under hasher 5 (what build() makes by
//    default) is inline behind one test of a flag that does not change, so that a
//    caller's loop of contains() compiles to that code alone (with one test of the
//    arity); every other shape and hasher is one indirect call (contains,
//    contains_hash). contains_many() runs the same code, chosen once a batch.
//  * contains_many() hashes keys kLookahead ahead of the one it compares and prefetches
//    their slots, for filters larger than a typical L2 (kPrefetchBytes).
//  * Construction never fails on valid input and never hangs. Duplicate keys (or equal
//    64-bit hashes) are tolerated: after a seed that does not peel, the keys it left
//    unpeeled (all of them if a slot's count overflowed) are sorted in place to find
//    repeats, which later tries drop (keeping one); up to kMaxSeeds seeds are tried;
//    failing that (practically impossible for distinct hashes: each seed fails with a
//    small probability), Errc::invalid_argument is thrown naming the key count. More keys than
//    the layout can address (more than 2^32 − 1 slots) throw Errc::too_large, bad
//    options Errc::invalid_argument, and exhausted memory std::bad_alloc.
//  * Construction memory, beside the result: 8 bytes a key for the keys' hashes (a copy
//    when built from a span of hashes; reordered in place, by first slot, so that the
//    peeling touches a few segments at a time, then overwritten by the peeling order),
//    1 byte a key (which slot each was peeled from), 9 bytes a slot (a 64-bit XOR of
//    hashes and a count byte) and a queue of pending slots (4 bytes each, at most one
//    a slot; 256 KiB for 10^7 keys): ~19.1 bytes a key for a large 3-wise filter (the
//    published code: ~24). The slot arrays are freed before the result is allocated;
//    a retry with another seed hashes the keys again (or copies the hashes again), and
//    holds the repeated values found (8 bytes each; none for distinct keys).
//  * Static: built once, then read-only; concurrent const calls are safe.
//  * Files: serialize() writes the amq container (Kind::binary_fuse, docs/format.md);
//    load() validates and copies a file, open() memory-maps one and answers from the
//    mapping without copying the fingerprints. Both throw amq::Error on any malformed
//    input and allocate nothing sized by a field of the file.
//
// Choose it for a set built once and queried many times, at a whole-bit rate (2^-w):
// lookups are 3 or 4 independent reads and an XOR. Choose RibbonFilter when the rate
// falls between powers of two or each bit of space counts (it gets within a few
// percent of the bound at any rate, with a costlier lookup), and a dynamic filter
// (CuckooFilter, BloomFilter, or a growing one) when keys arrive after construction.
//
//   std::vector<std::string> keys = {"apple", "banana"};
//   auto f = amq::BinaryFuseFilter::build(keys, {.fingerprint_bits = 8});
//   bool maybe = f.contains("apple");                  // true
//   auto file = f.serialize();
//   auto again = amq::BinaryFuseFilter::load(file);
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "amq/detail/prefetch.hpp"
#include "amq/hash.hpp"

namespace amq {
namespace detail {
class FileStorage;
}

struct BinaryFuseOptions {
  unsigned arity = 3;             // 3 or 4 slots a key
  unsigned fingerprint_bits = 8;  // w, 1 to 32: false-positive rate 2^-w
  uint64_t seed = 0;              // XXH3 seed for the keys; construction seeds derive from it
};

class BinaryFuseFilter {
 public:
  using Options = BinaryFuseOptions;
  // Seeds tried before construction gives up.
  static constexpr unsigned kMaxSeeds = 64;
  // contains_many prefetches for filters of at least this many bytes.
  static constexpr size_t kPrefetchBytes = size_t{2} << 20;

  // An empty filter (3-wise, 8-bit): contains nothing.
  BinaryFuseFilter();

  // Builds from keys (anything KeyView takes: strings, byte spans, uint64_t).
  template <class Keys>
  static BinaryFuseFilter build(const Keys& keys, const Options& options = {}) {
    const auto fill = [&keys, &options](std::vector<uint64_t>& out) {
      out.clear();
      out.reserve(std::size(keys));
      for (const auto& k : keys) out.push_back(key_hash(KeyView(k).bytes(), options.seed, true));
    };
    using Fill = decltype(fill);
    return build_from({&fill, [](const void* c, std::vector<uint64_t>& out) { (*static_cast<const Fill*>(c))(out); }},
                      std::size(keys), options);
  }
  // Builds from 64-bit hashes (query with contains_hash); repeats are tolerated.
  static BinaryFuseFilter build_hashes(std::span<const uint64_t> hashes, const Options& options = {});

  // The width w = ceil(log2(1/fpp)) within [1, 32] for a target rate in (0, 1).
  static unsigned bits_for_fpp(double fpp);
  // The arity (3 or 4) with the smaller array for n keys (3 on a tie: fewer reads).
  static unsigned best_arity(uint64_t n);
  // The array's slots for n keys at this arity (the paper's layout, see above).
  static uint64_t slots_for(uint64_t n, unsigned arity);

  // The lookup code of this filter's shape and hasher (see the header): inline for the
  // 8-bit shapes' 8-byte keys under hasher 5, else one call through a pointer set at
  // build or load.
  bool contains(KeyView key) const noexcept {
    const Bytes b = key.bytes();
    if (b.size() == 8) {
      const uint64_t k = detail::load_le64(b.data());
      if (inline_kernel_) return match8_either(mix(k));
      return key8_(*this, k);
    }
    return bytes_(*this, b);
  }
  // A key's 64-bit hash: XXH3-64 with the hash seed, except that a key of 8 bytes (a
  // uint64_t key among them) is its own little-endian value when `int_keys` (hasher 5:
  // every filter built since; hasher 1 files hash every key with XXH3). The lookup
  // mixes the hash with the construction seed anyway (mix(), a bijection), so an
  // 8-byte key needs no hash of its own; it saves a lookup a third of its instructions.
  static uint64_t key_hash(Bytes b, uint64_t hash_seed, bool int_keys) noexcept {
    return int_keys ? key_hash_as<true>(b, hash_seed) : key_hash_as<false>(b, hash_seed);
  }
  bool contains_hash(uint64_t h) const noexcept { return hash_(*this, h); }

  // out[i] = contains(keys[i]); returns how many are true. Beyond kPrefetchBytes the
  // keys are hashed kLookahead ahead of the one compared, and the slots of that key
  // prefetched, so that the reads of many lookups are in flight at once. The threshold
  // is the L2's size, not the last-level cache's as for the Bloom filters: a lookup's
  // 3 or 4 reads follow a long chain of hashing, so out-of-order execution overlaps the
  // reads of only a few lookups, and prefetching pays as soon as they leave the L2.
  template <class Keys>
  size_t contains_many(const Keys& keys, std::span<bool> out) const noexcept {
    const size_t n = std::size(keys);
    const bool ahead = size_in_bytes() >= kPrefetchBytes;
    size_t found = 0;
    const bool any = for_shape([&]<int Lane, unsigned A>() {
      if (int_keys_)
        found = ahead ? many<Lane, A, true, true>(std::begin(keys), n, out.data())
                      : many<Lane, A, true, false>(std::begin(keys), n, out.data());
      else
        found = ahead ? many<Lane, A, false, true>(std::begin(keys), n, out.data())
                      : many<Lane, A, false, false>(std::begin(keys), n, out.data());
    });
    if (!any) std::fill_n(out.data(), n, false);
    return found;
  }

  uint64_t size() const noexcept { return n_; }  // distinct key hashes held
  bool empty() const noexcept { return n_ == 0; }
  unsigned arity() const noexcept { return arity_; }
  unsigned fingerprint_bits() const noexcept { return width_; }
  uint64_t segment_length() const noexcept { return seg_len_; }
  uint64_t segment_count() const noexcept { return seg_count_; }
  uint64_t slot_count() const noexcept { return slots_; }
  uint64_t hash_seed() const noexcept { return hash_seed_; }
  // Hasher 5 (8-byte keys as their integer value, see key_hash) rather than 1.
  bool integer_keys() const noexcept { return int_keys_; }
  uint64_t construction_seed() const noexcept { return seed_; }
  // Bytes of the fingerprint array (what lookups read).
  size_t size_in_bytes() const noexcept { return payload_bytes_; }
  // 2^-w (0 when empty).
  double expected_fpp() const noexcept;
  // The file the filter answers from (what serialize() copies); valid while it lives.
  std::span<const std::byte> bytes() const noexcept;
  bool is_mapped() const noexcept;

  // The amq container (Kind::binary_fuse).
  std::vector<std::byte> serialize() const;
  // Validates and copies `file`. Throws amq::Error on any malformed input.
  static BinaryFuseFilter load(std::span<const std::byte> file);
  // Memory-maps `path` and queries it in place, after validating it (the checksum too
  // unless verify_checksum is false). Throws amq::Error.
  static BinaryFuseFilter open(const std::string& path, bool verify_checksum = true);

 private:
  struct Raw {};
  explicit BinaryFuseFilter(Raw) noexcept {}

  // Writes the keys' hashes into a vector (again for each construction seed tried: a
  // try's peeling order overwrites them).
  struct HashSource {
    const void* context;
    void (*fill)(const void* context, std::vector<uint64_t>& out);
  };
  static BinaryFuseFilter build_from(HashSource source, uint64_t n, const Options& options);
  struct Builder;  // build_impl's steps (binary_fuse_filter.cpp)
  static BinaryFuseFilter from_storage(std::shared_ptr<const detail::FileStorage> storage, bool verify_checksum);

  uint64_t mix(uint64_t h) const noexcept { return detail::murmur3_fmix64(h + seed_); }
  // The slots of mixed hash x: one in each of `arity` consecutive segments.
  void positions(uint64_t x, uint64_t* p) const noexcept { positions_in<4>(x, count_len_, seg_len_, p); }
  // The same for given layout fields (held in registers by the construction's loops).
  template <unsigned Arity>
  static void positions_in(uint64_t x, uint64_t count_len, uint64_t seg_len, uint64_t* p) noexcept {
    const uint64_t h0 = reduce(x, count_len), mask = seg_len - 1;
    p[0] = h0;
    p[1] = (h0 + seg_len) ^ ((x >> 18) & mask);
    p[2] = (h0 + 2 * seg_len) ^ (x & mask);
    if constexpr (Arity == 4) p[3] = (h0 + 3 * seg_len) ^ (((x * 0x9E3779B97F4A7C15ULL) >> 40) & mask);
  }
  uint64_t fingerprint(uint64_t x) const noexcept { return (x ^ (x >> 32)) & fp_mask_; }
  template <int Lane>
  uint64_t slot(uint64_t i) const noexcept {
    return slot_at<Lane>(fp_, i, width_, fp_mask_);
  }
  // Slot i of an array of `width`-bit slots, `mask` = 2^width - 1 (Lane 1, 2 or 4: a
  // plain array of that many bytes a slot; 0: bit-packed, one unaligned 8-byte read).
  template <int Lane>
  static uint64_t slot_at(const std::byte* fp, uint64_t i, unsigned width, uint64_t mask) noexcept {
    if constexpr (Lane == 1) {
      return static_cast<uint64_t>(std::to_integer<uint8_t>(fp[i]));
    } else if constexpr (Lane == 2) {
      uint16_t v;
      std::memcpy(&v, fp + 2 * i, 2);
      return v;
    } else if constexpr (Lane == 4) {
      uint32_t v;
      std::memcpy(&v, fp + 4 * i, 4);
      return v;
    } else {
      const uint64_t bit = i * width;
      uint64_t v;
      std::memcpy(&v, fp + (bit >> 3), 8);
      return (v >> (bit & 7)) & mask;
    }
  }
  // key_hash for one hasher (IntKeys: hasher 5).
  template <bool IntKeys>
  static uint64_t key_hash_as(Bytes b, uint64_t hash_seed) noexcept {
    if (IntKeys && b.size() == 8) return detail::load_le64(b.data());
    return Xxh3Hasher{hash_seed}(b);
  }
  // Whether mixed hash x is in the filter, for one width and arity: no branch.
  template <int Lane, unsigned A>
  bool match(uint64_t x) const noexcept {
    uint64_t p[4];
    positions_in<A>(x, count_len_, seg_len_, p);
    uint64_t v = slot<Lane>(p[0]) ^ slot<Lane>(p[1]) ^ slot<Lane>(p[2]);
    if constexpr (A == 4) v ^= slot<Lane>(p[3]);
    const uint64_t f = x ^ (x >> 32);  // the fingerprint (its low w bits)
    if constexpr (Lane == 1) return static_cast<uint8_t>(v) == static_cast<uint8_t>(f);
    else if constexpr (Lane == 2) return static_cast<uint16_t>(v) == static_cast<uint16_t>(f);
    else if constexpr (Lane == 4) return static_cast<uint32_t>(v) == static_cast<uint32_t>(f);
    else return ((v ^ f) & fp_mask_) == 0;
  }
  // match<1, 3> or match<1, 4> by arity_ (contains()'s inline code for 8-bit filters).
  bool match8_either(uint64_t x) const noexcept {
    uint64_t p[4];
    positions_in<4>(x, count_len_, seg_len_, p);  // the fourth is computed in the branch that reads it
    uint64_t v = slot<1>(p[0]) ^ slot<1>(p[1]) ^ slot<1>(p[2]);
    if (arity_ == 4) v ^= slot<1>(p[3]);
    return static_cast<uint8_t>(v) == static_cast<uint8_t>(x ^ (x >> 32));
  }
  // The lookup kernels of one shape (Lane, A) and hasher (IntKeys); a filter holds
  // pointers to those of its own (set_kernels, binary_fuse_filter.cpp).
  template <int Lane, unsigned A, bool IntKeys>
  static bool key8_kernel(const BinaryFuseFilter& f, uint64_t k) noexcept {
    if constexpr (IntKeys) {
      return f.match<Lane, A>(f.mix(k));
    } else {
      std::byte b[8];
      if constexpr (std::endian::native == std::endian::big) k = __builtin_bswap64(k);
      std::memcpy(b, &k, 8);
      return f.match<Lane, A>(f.mix(Xxh3Hasher{f.hash_seed_}(Bytes(b, 8))));
    }
  }
  template <int Lane, unsigned A, bool IntKeys>
  static bool bytes_kernel(const BinaryFuseFilter& f, Bytes b) noexcept {
    return f.match<Lane, A>(f.mix(key_hash_as<IntKeys>(b, f.hash_seed_)));
  }
  template <int Lane, unsigned A>
  static bool hash_kernel(const BinaryFuseFilter& f, uint64_t h) noexcept {
    return f.match<Lane, A>(f.mix(h));
  }
  static bool key8_none(const BinaryFuseFilter&, uint64_t) noexcept { return false; }
  static bool bytes_none(const BinaryFuseFilter&, Bytes) noexcept { return false; }
  void set_kernels() noexcept;
  template <int Lane>
  const std::byte* slot_address(uint64_t i) const noexcept {
    if constexpr (Lane == 0) return fp_ + ((i * width_) >> 3);
    else return fp_ + i * Lane;
  }
  static constexpr size_t kLookahead = 16;
  // contains_many's loop for one kernel; Ahead: hash kLookahead keys ahead and prefetch.
  template <int Lane, unsigned A, bool IntKeys, bool Ahead, class It>
  size_t many(It it, size_t n, bool* out) const noexcept {
    size_t found = 0;
    if constexpr (!Ahead) {
      for (size_t i = 0; i < n; ++i, ++it)
        found += (out[i] = match<Lane, A>(mix(key_hash_as<IntKeys>(KeyView(*it).bytes(), hash_seed_))));
      return found;
    }
    uint64_t ring[kLookahead];
    auto ahead = [&](size_t i) {
      const uint64_t x = mix(key_hash_as<IntKeys>(KeyView(*it).bytes(), hash_seed_));
      ++it;
      ring[i % kLookahead] = x;
      uint64_t p[4];
      positions_in<A>(x, count_len_, seg_len_, p);
      for (unsigned a = 0; a < A; ++a) detail::prefetch(slot_address<Lane>(p[a]));
    };
    const size_t lead = std::min(n, kLookahead);
    for (size_t i = 0; i < lead; ++i) ahead(i);
    for (size_t i = 0; i < n; ++i) {
      const bool r = match<Lane, A>(ring[i % kLookahead]);
      if (i + kLookahead < n) ahead(i + kLookahead);
      found += (out[i] = r);
    }
    return found;
  }

  // The filter's shape: width (8, 16, 32 or packed) and arity; empty: none.
  enum class Shape : uint8_t { empty, u8x3, u8x4, u16x3, u16x4, u32x3, u32x4, packed3, packed4 };
  // Calls visit.template operator()<Lane, A>() with this filter's slot lane (bytes a
  // slot; 0: packed) and arity; false, without calling it, for the empty filter.
  template <class Visit>
  bool for_shape(Visit&& visit) const {
    switch (shape_) {
      case Shape::u8x3: visit.template operator()<1, 3>(); return true;
      case Shape::u8x4: visit.template operator()<1, 4>(); return true;
      case Shape::u16x3: visit.template operator()<2, 3>(); return true;
      case Shape::u16x4: visit.template operator()<2, 4>(); return true;
      case Shape::u32x3: visit.template operator()<4, 3>(); return true;
      case Shape::u32x4: visit.template operator()<4, 4>(); return true;
      case Shape::packed3: visit.template operator()<0, 3>(); return true;
      case Shape::packed4: visit.template operator()<0, 4>(); return true;
      default: return false;
    }
  }
  static Shape shape_for(uint64_t slots, unsigned width, unsigned arity) noexcept {
    if (slots == 0) return Shape::empty;
    const int four = arity == 4;
    switch (width) {
      case 8: return static_cast<Shape>(1 + four);
      case 16: return static_cast<Shape>(3 + four);
      case 32: return static_cast<Shape>(5 + four);
      default: return static_cast<Shape>(7 + four);
    }
  }

  std::shared_ptr<const detail::FileStorage> storage_;
  const std::byte* fp_ = nullptr;
  uint64_t n_ = 0;
  uint64_t hash_seed_ = 0;
  uint64_t seed_ = 0;
  uint64_t seg_len_ = 4;
  uint64_t seg_mask_ = 3;
  uint64_t seg_count_ = 0;
  uint64_t count_len_ = 0;  // seg_count_ * seg_len_: the range of a key's first slot
  uint64_t slots_ = 0;
  uint64_t fp_mask_ = 0xFF;
  size_t payload_bytes_ = 0;
  unsigned arity_ = 3;
  unsigned width_ = 8;
  int lane_ = 1;  // bytes a slot for w = 8, 16, 32; 0: bit-packed
  bool int_keys_ = true;  // hasher 5 (see key_hash); false: hasher 1
  Shape shape_ = Shape::empty;
  // This filter's lookup kernels (set_kernels): an 8-byte key as its value, a key of
  // another length, a 64-bit hash.
  bool (*key8_)(const BinaryFuseFilter&, uint64_t) noexcept = key8_none;
  bool (*bytes_)(const BinaryFuseFilter&, Bytes) noexcept = bytes_none;
  bool (*hash_)(const BinaryFuseFilter&, uint64_t) noexcept = key8_none;
  bool inline_kernel_ = false;  // 8-bit and hasher 5: contains() inlines match8_either
};

}  // namespace amq
