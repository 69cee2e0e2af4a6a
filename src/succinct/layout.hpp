// The SuccinctSet payload's layout (docs/format.md, "SuccinctSet"): three bit vectors,
// each followed by its rank/select directory, then the labels, the tails and the
// optional symbol table, all fixed by three counts. Internal to src/succinct/.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "amq/detail/huge_pages.hpp"
#include "amq/detail/rank_select.hpp"
#include "amq/detail/tail_symbols.hpp"
#include "amq/succinct_set.hpp"

// The kernels' instruction sets: Isa::bmi2 kernels are compiled with popcnt, BMI1 and
// BMI2 (taken where the CPU has a fast pdep, detail/dispatch.hpp).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define AMQ_SUCCINCT_TARGET_BMI2 __attribute__((target("popcnt,bmi,bmi2")))
#define AMQ_SUCCINCT_HAS_BMI2 true
#else
#define AMQ_SUCCINCT_TARGET_BMI2
#define AMQ_SUCCINCT_HAS_BMI2 false
#endif

namespace amq::detail::succinct {

constexpr uint64_t pad8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

// The three bit vectors of the payload, in file order. The label bitmap and the tail
// bitmap are only selected on, the leaf bitmap only ranked.
enum Vec { kLouds, kLeaf, kTailMap, kVecCount };
inline constexpr const char* kVecName[kVecCount] = {"label bitmap", "leaf bitmap", "tail bitmap"};
using LeafBits = RankSelect<32>;
using LoudsBits = SelectBits<7, true>;
using TailBits = SelectBits<9, false>;

// Owned copies of files from this size on live on 2 MiB pages (detail::FileStorage): a
// lookup touches a few lines spread over the whole trie.
constexpr size_t kHugeFrom = kHugePage / 2;
constexpr uint64_t kTailsCoded = 1;  // params' fourth field: the tails are coded (TailSymbols)
constexpr uint64_t kLoudsSampleMask = (uint64_t{1} << LoudsBits::kSampleShift) - 1;
constexpr uint64_t kTailSampleMask = (uint64_t{1} << TailBits::kSampleShift) - 1;

inline uint64_t directory_words(int vec, uint64_t bits, uint64_t ones) {
  if (vec == kLeaf) return LeafBits::shape(bits, ones, false).directory_words();
  return vec == kLouds ? LoudsBits::directory_words(ones) : TailBits::directory_words(ones);
}

inline std::vector<uint64_t> build_directory(int vec, std::span<const uint64_t> words, uint64_t bits) {
  if (vec == kLeaf) return LeafBits::build_directory(words, bits, false);
  return vec == kLouds ? LoudsBits::build_directory(words, bits) : TailBits::build_directory(words, bits);
}

inline bool verify_directory(int vec, std::span<const uint64_t> words, uint64_t bits,
                             std::span<const uint64_t> dir) {
  if (vec == kLeaf) return LeafBits::verify_directory(words, bits, dir, false);
  return vec == kLouds ? LoudsBits::verify_directory(words, bits, dir) : TailBits::verify_directory(words, bits, dir);
}

// The payload's layout, all from the three counts: each bit vector's words and then its
// directory, the labels (one per edge) and the tails, each padded to 8 bytes.
struct Shape {
  uint64_t bits[kVecCount];
  uint64_t ones[kVecCount];
  uint64_t words[kVecCount], dir_words[kVecCount];
  uint64_t at[kVecCount];  // byte offset of each vector's words in the payload
  uint64_t edges, labels_at, tails_at, symbols_at, payload_bytes;
};

// `coded`: the tails are coded, and the symbol table follows them.
inline Shape shape_of(uint64_t n, uint64_t nodes, uint64_t tail_bytes, bool coded) {
  Shape s{{2 * nodes - 1, nodes, nodes + tail_bytes}, {nodes, n, nodes}, {}, {}, {}, nodes - 1, 0, 0, 0, 0};
  uint64_t at = 0;
  for (int i = 0; i < kVecCount; ++i) {
    s.words[i] = (s.bits[i] + 63) / 64;
    s.dir_words[i] = directory_words(i, s.bits[i], s.ones[i]);
    s.at[i] = at;
    at += 8 * (s.words[i] + s.dir_words[i]);
  }
  s.labels_at = at;
  s.tails_at = at + pad8(s.edges);
  s.symbols_at = s.tails_at + pad8(tail_bytes);
  s.payload_bytes = s.symbols_at + (coded ? TailSymbols::kBytes : 0);
  return s;
}

// The tables built on load (accelerators.cpp) and the descent that reads them.
constexpr uint64_t kTopLevels = 3;        // contains() has the label starts of these levels' nodes
constexpr uint64_t kTopNodesMax = 4096;   // but of at most this many nodes
constexpr uint64_t kNarrowLevel = 64;     // and of the levels below them of at most this many nodes
constexpr uint64_t kSubLevels = 5;        // finer select samples down to this level
constexpr uint64_t kSubShift = 5;         // one per 32 nodes
constexpr uint64_t kSubNodesMax = 65536;  // for at most this many nodes
constexpr uint64_t kNoSample = ~uint64_t{0};  // select_start's csi when no sample was loaded ahead
constexpr uint64_t kCountedTopLevels = 64; // build_top_counts looks at most this deep
constexpr unsigned kMidShiftMin = 3;        // build_mid counts at most every 8th cut of a level
constexpr unsigned kMidShiftMax = 7;        // and at least every 128th, or none

// A chain's head node hashed: the filter's bit (low 12+ bits) and the table's slot (high bits).
[[gnu::always_inline]] inline uint64_t chain_hash(uint64_t v) noexcept { return (v + 1) * 0x9E3779B97F4A7C15ull; }

}  // namespace amq::detail::succinct
