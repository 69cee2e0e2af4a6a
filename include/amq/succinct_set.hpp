// amq/succinct_set.hpp — an exact, compressed, sorted set of byte strings that can be
// queried straight from a memory-mapped file.
//
// SuccinctSet stores its keys as a trie in LOUDS form (level-order unary degree
// sequence): the edge labels of every node in level order, a bitmap with a 0 per
// label and a 1 closing each node, and a bitmap marking the nodes where a key ends
// (docs/decisions/0019). Beyond that design:
//  * Tails: a subtree holding a single key is cut at its top node and the rest of the
//    key is kept as a byte string in a tail area. Where it makes the set smaller, tails
//    are coded with a symbol table learnt from them at build time (up to 255 symbols of
//    1-8 bytes and an escape; amq/detail/tail_symbols.hpp, decision 0023).
//  * Lexicographic ranks: index_of(key) is the key's position in sorted order and
//    key_at(i) its inverse, so the set is also an order-preserving, minimal perfect
//    key -> id map.
//  * Load-time accelerators: small tables built from the file when it is loaded (the top
//    levels' label starts, label maps of the first two levels, finer select starts, a
//    table of long one-label chains, key counts of the deepest and top levels and of
//    every 2^shift-th cut of the levels between on deep tries, every level's first
//    node). Each is bounded in size and in the work its construction may do, is
//    counted in size_in_bytes(), and is never stored in the file (decisions 0021,
//    0024, 0025, 0049).
//
// Memory
//  * The file: labels (a byte a node), the label bitmap (~2 bits a node) with a select
//    sample per 128 nodes, the leaf bitmap (a bit a node) with a rank directory (3%), the
//    tail bitmap and tails with a select sample per 512 nodes, and the optional symbol
//    table. Word lists take ~30-40% of their raw key bytes; `amq info` and `amq bench
//    --only succinct` state it for a given set. Every position is 64-bit: sets past
//    4 GiB of key bytes work.
//  * Building holds the keys, the set, and 8 bytes a key (32 while sorting); the set is
//    written straight into its final memory (decision 0026).
//
// Complexity
//  * contains(): one select per trie level on the key's path (plus one for a tail), each
//    a sample load and one or two words counted with popcnt, finished with BMI2 pdep
//    where the CPU has it (a portable path gives the same answers). Lines two levels
//    ahead are prefetched (decision 0020). Keys with long shared prefixes (URLs, paths)
//    take each long chain of one-label nodes in one compare.
//  * contains_many(): on sets of 4 MiB or more, eight descents interleaved so their
//    misses overlap; below that, a loop of contains() (decision 0022).
//  * index_of(), rank(): the descent (long chains in one compare, as contains()), then
//    a walk of the levels below the key down to the counted levels, or until the cut
//    reaches its level's first or last node, or, where the middle levels have sampled
//    counts, of the cut and the nearest counted one until they meet: O(height) selects. key_at(): a search among each node's
//    children on the way down: O(height · log(fan-out)) such walks, each stopping where
//    it meets the walks kept of the cuts around the node (where the subtrees between
//    run out). Slow for adversarial sets with thousands of levels.
//  * build(): O(total key bytes + n log n).
//
// Guarantees
//  * Exact: contains() has no false positives and no false negatives.
//  * Static: built once from keys (any order, duplicates dropped), then read-only.
//  * Iteration, prefix(), lower_bound() and range() visit keys in lexicographic
//    order of their bytes (as unsigned char). Keys may hold any byte, 0x00 included,
//    and may be empty.
//  * open(path) memory-maps a file and answers from the mapping without copying;
//    load(bytes) copies. Both validate every length and offset, every rank/select
//    directory entry, and the shape of the trie before the first query, so a
//    corrupted or hostile file is an amq::Error, never a crash or a hang.
//    An opened file must not be truncated while the set lives: reading a page past
//    the new end raises SIGBUS (amq/file_io.hpp); replace it by rename instead.
//  * Large sets: every position is 64-bit, and a test (AMQ_LARGE_TESTS=1) builds,
//    writes, maps and checks a set of 4.7·10^9 key bytes. bytes() is the file, for
//    writing it out without a copy.
//  * A mapped file must not be truncated or rewritten in place while a set answers
//    from it (the kernel would raise SIGBUS); amq itself only ever replaces files by
//    rename, which leaves an open mapping intact.
//  * Thread safety: every member function is const after construction, so any
//    number of threads may query one set at once. Iterators and ranges refer to the
//    set and must not outlive it.
//
// Choose it over the hashed filters when you need exact answers, the keys back in
// order, prefix or range scans, or dense ids for keys; choose a filter when a small
// false-positive rate is acceptable and bits per key matter more (a filter at 1% is
// ~10 bits a key, this set is ~30% of the key bytes for words).
//
//   auto set = amq::SuccinctSet::build(std::vector<std::string>{"ab", "abc", "axy"});
//   set.contains("abc");              // true
//   set.index_of("axy");              // 2
//   set.key_at(0);                    // "ab"
//   for (std::string_view k : set.prefix("ab")) ...;   // "ab", "abc"
//   amq::write_file_atomic("words.amq", set.bytes());
//   auto mapped = amq::SuccinctSet::open("words.amq");  // queried in place
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "amq/detail/rank_select.hpp"
#include "amq/detail/tail_symbols.hpp"
#include "amq/format.hpp"
#include "amq/hash.hpp"

namespace amq {
namespace detail {
class FileStorage;
struct SuccinctSetTestPeer;
}  // namespace detail

struct SuccinctSetOptions {
  // Cut single-key subtrees into tails (smaller and usually faster). Off gives the
  // plain trie of the original design: one node per key byte.
  bool tail_compression = true;
  // Code the tails with a symbol table learnt from them (amq/detail/tail_symbols.hpp:
  // up to 255 symbols of 1-8 bytes, a byte each): `automatic` where that makes the
  // set smaller (URLs and paths ~2x smaller tails, word lists ~1.2-1.4x), `always`
  // wherever there are tails, `never` keeps them raw.
  enum class TailCoding { automatic, always, never };
  TailCoding tail_coding = TailCoding::automatic;
  // What the keys are, recorded in the file's header (amq/format.hpp); the set itself
  // takes every key as bytes. Integer keys meant to sort numerically are given as their
  // 8 big-endian bytes (amq/any_set.hpp does so for KeyType::u64).
  KeyType key_type = KeyType::unknown;
};

class SuccinctSet {
 public:
  static constexpr uint64_t npos = ~uint64_t{0};

  using Options = SuccinctSetOptions;

  class Iterator;
  class Range;

  // The empty set.
  SuccinctSet();

  // Builds the set of `keys`: any range of things KeyView accepts (std::string,
  // std::string_view, byte spans). Unsorted input and duplicates are fine. A range of
  // integers is taken as their 8 little-endian bytes each (KeyView's encoding, so that
  // contains(uint64_t) agrees), which do not sort numerically: for that, give each as
  // its 8 big-endian bytes (as AnySet does for a set of KeyType::u64).
  template <class Keys>
  static SuccinctSet build(const Keys& keys, Options options = {}) {
    std::vector<std::string_view> v;
    v.reserve(std::size(keys));
    if constexpr (std::is_integral_v<std::remove_cvref_t<decltype(*std::begin(keys))>>) {
      std::vector<std::string> owned;  // a uint64_t key is its 8 little-endian bytes
      owned.reserve(std::size(keys));
      for (uint64_t k : keys) owned.emplace_back(as_chars(KeyView(k).bytes()));
      for (const auto& k : owned) v.push_back(k);
      return build_views(std::move(v), options);
    } else {
      for (const auto& k : keys) v.push_back(as_chars(KeyView(k).bytes()));
      return build_views(std::move(v), options);
    }
  }
  static SuccinctSet build(std::initializer_list<std::string_view> keys, Options options = {}) {
    return build_views(std::vector<std::string_view>(keys), options);
  }

  bool contains(KeyView key) const noexcept;
  // out[i] = contains(keys[i]); returns how many are true. On sets of 4 MiB or more,
  // whose descents wait on the last-level cache or memory at most levels, the keys'
  // descents run interleaved, eight at once: each goes on to its next select or tail,
  // fetches what that reads and hands over, so the misses of several keys overlap.
  // Smaller sets answer key by key: there interleaving gains little or nothing and
  // costs work (docs/decisions/0022).
  template <class Keys>
  size_t contains_many(const Keys& keys, std::span<bool> out) const noexcept {
    return many(keys, out, false);
  }

  // The key's position 0 .. size()-1 in sorted order, or npos if it is absent.
  uint64_t index_of(KeyView key) const noexcept;
  // The number of keys less than `key` (present or not): lower_bound's position.
  uint64_t rank(KeyView key) const noexcept;
  // The key at sorted position i. Throws Errc::invalid_argument if i >= size().
  std::string key_at(uint64_t i) const;

  uint64_t size() const noexcept { return n_; }
  bool empty() const noexcept { return n_ == 0; }
  // Bytes of the structure: the payload (bitmaps, directories, labels, tails) and the
  // small tables built on load (top levels' label starts, finer select starts, long
  // chains, the deep levels' key counts).
  size_t size_in_bytes() const noexcept { return payload_bytes_; }
  uint64_t node_count() const noexcept { return nodes_; }
  uint64_t tail_count() const noexcept { return tails_; }
  uint64_t tail_bytes() const noexcept { return tail_bytes_; }
  // True if the tails are coded with a symbol table (tail_bytes() then counts codes).
  bool tails_coded() const noexcept { return !syms_.empty(); }
  // Long chains of one-label nodes that contains() takes in one compare (0: no table).
  uint64_t chain_count() const noexcept { return chain_count_; }
  // size_in_bytes() by part: the file's labels, bitmaps (label, leaf, tail), their
  // rank/select directories and tails (each padded to 8 bytes), and the tables built on
  // load (top levels' label starts and label maps, finer select starts, chains, key
  // counts). The parts add up to size_in_bytes().
  struct SizeParts {
    uint64_t labels = 0, bitmaps = 0, directories = 0, tails = 0, load_tables = 0;
  };
  SizeParts size_parts() const noexcept;
  // Trie levels, and the first of the deep levels whose cuts have their key counts in
  // a table (level_count() if none): rank(), index_of() and key_at() stop there.
  uint64_t level_count() const noexcept { return levels_; }
  uint64_t counted_levels_from() const noexcept { return std::min(bottom_level_, levels_); }
  // The top levels below the root whose cuts have key counts too (key_at() searches
  // their nodes' children in them): levels 1 .. counted_top_levels().
  uint64_t counted_top_levels() const noexcept { return top_counted_end_ > 0 ? top_counted_end_ - 1 : 0; }
  // The file the set answers from (what serialize() copies): valid while the set lives.
  std::span<const std::byte> bytes() const noexcept;
  // True if the set answers from a memory-mapped file (open()).
  bool is_mapped() const noexcept;

  // All keys in order.
  Iterator begin() const;
  std::default_sentinel_t end() const noexcept { return {}; }
  // The first key >= key.
  Iterator lower_bound(KeyView key) const;
  // Every key starting with `prefix`, in order.
  Range prefix(KeyView prefix) const;
  // Every key k with from <= k < to, in order.
  Range range(KeyView from, KeyView to) const;
  // The general scan: keys starting with `prefix`, >= *from if given, < *to if given.
  Range scan(std::string_view prefix, std::optional<std::string_view> from,
             std::optional<std::string_view> to) const;

  // The amq container (Kind::succinct); the payload is 8-byte aligned.
  std::vector<std::byte> serialize() const;
  // Validates and copies `file`. Throws amq::Error on any malformed input.
  static SuccinctSet load(std::span<const std::byte> file);
  // Memory-maps `path` and queries it in place. Validates everything first (the
  // checksum too unless verify_checksum is false); throws amq::Error.
  static SuccinctSet open(const std::string& path, bool verify_checksum = true);

 private:
  friend class Iterator;
  friend struct detail::SuccinctSetTestPeer;
  // The implementation's rooms (src/succinct/), each a group of functions over the
  // members below, declared and defined where it lives.
  struct Builder;      // build.cpp: sorted keys -> the trie written into the file
  struct Loader;       // load.cpp: a file parsed and validated, its tables built
  struct Tails;        // tails.hpp: a leaf's tail: located, compared, appended
  struct Descent;      // descent.hpp, descent.cpp: contains() and its kernels per ISA
  struct Batch;        // batch.cpp: contains_many()'s interleaved descents
  struct Ranks;        // ranks.cpp: rank(), index_of(), key_at()
  struct TopTables;    // accelerators.cpp: top levels' label starts and maps, finer select starts
  struct LevelCounts;  // counts.cpp: key counts of cuts through the deep and top levels
  struct Chains;       // chains.cpp: long one-label chains taken in one compare
  struct Raw {};
  explicit SuccinctSet(Raw) noexcept {}
  using Bits = detail::RankSelect<32>;            // leaf bitmap: rank
  using LoudsBits = detail::SelectBits<7, true>;  // label bitmap: select, a sample per 128 ones
  using TailBits = detail::SelectBits<9, false>;  // tail bitmap: select, a sample per 512 ones

  static SuccinctSet build_views(std::vector<std::string_view> keys, Options options);

  // The first label position of node v in the label bitmap (the top table's entry for
  // its nodes, which every rank(), key_at() and iteration passes through).
  uint64_t node_start(uint64_t v) const noexcept {
    if (v < top_nodes_) return top_starts_[v];
    return v == 0 ? 0 : louds_.select1(v - 1) + 1;
  }
  // The first node of the next level after the nodes before b (b in one level).
  uint64_t child_boundary(uint64_t b) const noexcept { return node_start(b) - b + 1; }

  // contains_many(): keys gathered kBatch at a time, then their descents interleaved.
  struct Probe {
    const uint8_t* p;
    size_t len;
    uint64_t own;  // an integer key's bytes (p points here)
  };
  static constexpr size_t kBatch = 64;
  static constexpr size_t kInterleaveBytes = size_t{4} << 20;  // contains_many() interleaves from here
  // `interleave`: whatever the set's size (tests).
  template <class Keys>
  size_t many(const Keys& keys, std::span<bool> out, bool interleave) const noexcept {
    size_t found = 0, done = 0, m = 0;
    if (!interleave && payload_bytes_ < kInterleaveBytes) {  // key by key
      for (const auto& k : keys) found += (out[done++] = contains(KeyView(k)));
      return found;
    }
    Probe buf[kBatch];
    for (const auto& k : keys) {
      if constexpr (std::is_integral_v<std::remove_cvref_t<decltype(k)>>) {
        const KeyView kv(static_cast<uint64_t>(k));  // a uint64_t key is its 8 little-endian bytes
        std::memcpy(&buf[m].own, kv.bytes().data(), 8);
        buf[m].p = reinterpret_cast<const uint8_t*>(&buf[m].own);
        buf[m].len = 8;
      } else {
        const Bytes b = KeyView(k).bytes();
        buf[m].p = reinterpret_cast<const uint8_t*>(b.data());
        buf[m].len = b.size();
      }
      if (++m == kBatch) {
        found += contains_batch(buf, m, out.data() + done);
        done += m;
        m = 0;
      }
    }
    if (m > 0) found += contains_batch(buf, m, out.data() + done);
    return found;
  }
  size_t contains_batch(const Probe* q, size_t m, bool* out) const noexcept;

  // The file.
  std::shared_ptr<const detail::FileStorage> storage_;
  uint64_t n_ = 0, nodes_ = 1, tails_ = 0, tail_bytes_ = 0;
  uint64_t levels_ = 1, level_leaf_sum_ = 0;
  size_t payload_bytes_ = 0;  // the payload and the tables built on load
  // The trie (labels, label bitmap, leaf bitmap).
  LoudsBits louds_;
  Bits leaf_;
  const uint8_t* labels_ = nullptr;
  const uint8_t* labels_end_ = nullptr;  // end of the payload: 16-byte label loads stay below
  // The tails (tail bitmap, tail bytes, symbol table).
  TailBits tail_map_;
  const uint8_t* tail_ = nullptr;
  detail::TailSymbols syms_;  // the tails' symbol table (empty: raw tails)
  uint64_t tail_ratio_ = 0;   // (nodes + tail bytes) / nodes in 16.16: where a node's tail lies
  uint64_t tail_reach_ = 4;   // contains() prefetches the likely tail when this few key bytes are left
  // The tail bitmap's select from half-way between its samples: for every sample g
  // (512 nodes), select1(512 g + 256) minus sample g's position (null if one does not
  // fit in 16 bits).
  const uint16_t* tail_mids_ = nullptr;
  // The tables built on load (TopTables): the top levels' label starts (node_start(v)
  // for v < top_nodes_); finer select starts for the nodes below them down to level 5
  // (for every 32nd node s < sub_nodes_, select1(s) minus its sample's position); the
  // top two levels' label maps.
  std::shared_ptr<const TopTables> tables_;
  const uint16_t* top_starts_ = nullptr;
  uint64_t top_nodes_ = 0;
  const uint16_t* sub_starts_ = nullptr;
  uint64_t sub_nodes_ = 0;
  const uint64_t* jump_maps_ = nullptr;
  // Key counts for every cut of the deep levels from bottom_level_ and of levels
  // [1, top_counted_end_) (LevelCounts), for rank(), index_of() and key_at().
  std::shared_ptr<const LevelCounts> bottom_, top_counts_;
  // Key counts for every 2^shift-th cut of the levels from mid_->level down to the deep
  // levels' (LevelCounts::build_mid): a walk starting there pairs its cut with the
  // nearest one counted and walks both until they meet.
  std::shared_ptr<const LevelCounts> mid_;
  uint64_t bottom_level_ = ~uint64_t{0};  // bottom_->level, or none
  uint64_t top_counted_end_ = 0;          // top_counts_ covers levels [1, top_counted_end_)
  // Long chains of one-label nodes where no key ends (Chains): contains() takes each in
  // one compare.
  std::shared_ptr<const Chains> chains_;
  const uint64_t* chain_filter_ = nullptr;  // a bit per hashed chain head (null: none)
  uint64_t chain_filter_mask_ = 0;          // its words - 1
  uint64_t chain_count_ = 0;
  // The kernels chosen for this CPU when the set was built or loaded (detail/dispatch.hpp).
  bool (*contains_fn_)(const SuccinctSet&, const uint8_t*, size_t) noexcept = nullptr;
  size_t (*batch_fn_)(const SuccinctSet&, const Probe*, size_t, bool*) noexcept = nullptr;
};


// An input iterator over keys in order; *it is valid until the next ++it.
class SuccinctSet::Iterator {
 public:
  using value_type = std::string_view;
  using difference_type = std::ptrdiff_t;
  using iterator_concept = std::input_iterator_tag;

  Iterator() = default;
  std::string_view operator*() const noexcept { return key_; }
  Iterator& operator++() {
    advance();
    return *this;
  }
  void operator++(int) { advance(); }
  bool operator==(std::default_sentinel_t) const noexcept { return done_; }

 private:
  friend class SuccinctSet;
  struct Frame {
    uint64_t node, next, end;  // label bitmap positions [next, end) still to visit
    uint64_t child_start;      // where the next child's labels start (npos: unknown)
  };
  explicit Iterator(const SuccinctSet* set) : set_(set) {}
  void push_node(uint64_t v);
  void emit(uint64_t v);
  void advance();
  void seek(std::span<const std::byte> key);

  const SuccinctSet* set_ = nullptr;
  std::vector<Frame> stack_;
  std::string path_;  // the labels from the root to the top frame's node
  std::string key_;   // the current key: path_ plus the node's tail
  bool done_ = true;
  bool has_stop_ = false;
  std::string stop_;    // end before the first key >= stop_
  std::string prefix_;  // end at the first key not starting with prefix_
};

class SuccinctSet::Range {
 public:
  Iterator begin() const { return it_; }
  std::default_sentinel_t end() const noexcept { return {}; }

 private:
  friend class SuccinctSet;
  explicit Range(Iterator it) : it_(std::move(it)) {}
  Iterator it_;
};

}  // namespace amq
