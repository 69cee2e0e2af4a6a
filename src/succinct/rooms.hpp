// The rooms of SuccinctSet's implementation (declared, not defined, in
// amq/succinct_set.hpp): each is a group of static functions over a set's members, or
// one of the tables built on load, and lives in its own file. Internal to src/succinct/.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "amq/detail/file_storage.hpp"
#include "amq/succinct_set.hpp"
#include "layout.hpp"

namespace amq {

// build.cpp: the set of keys, sorted, written as a trie straight into its file.
struct SuccinctSet::Builder {
  static SuccinctSet build(std::vector<std::string_view> keys, Options options);
};

// load.cpp: a file parsed and validated part by part, then its tables built and its
// kernels chosen.
struct SuccinctSet::Loader {
  static SuccinctSet from_storage(std::shared_ptr<const detail::FileStorage> storage, bool verify_checksum);
  // The counts of the params; `coded` set if the tails are coded.
  static void parse_params(SuccinctSet& self, std::span<const std::byte> params, uint64_t payload, bool& coded);
  // The three bit vectors and their directories.
  static void map_bit_vectors(SuccinctSet& self, const std::byte* payload, const detail::succinct::Shape& shape);
  // The labels, the tails, their padding and the symbol table.
  static void map_bytes(SuccinctSet& self, const std::byte* payload, const detail::succinct::Shape& shape, bool coded);
  // The trie's shape: a tree, with sorted labels, keys at its leaves, tails only there.
  static void validate_trie(SuccinctSet& self);
  // Every level's first node: the level count, the sum of their leaf ranks, and the
  // starts LevelCounts and TopTables need.
  struct Levels {
    uint64_t top = 0;               // the first node below the top table's levels
    uint64_t sub = 0;               // the first node below the top kSubLevels levels
    std::vector<uint64_t> last;     // the last levels' first nodes, then nodes_
    uint64_t first_kept = 0;        // the level of last[0]
    std::vector<uint64_t> head;     // the first levels' first nodes
  };
  static Levels walk_levels(SuccinctSet& self);
  // The kernels for this CPU (detail/dispatch.hpp).
  static void select_kernels(SuccinctSet& self) noexcept;
};

// tails.hpp, tails.cpp: a leaf's tail in the tail bitmap and bytes.
struct SuccinctSet::Tails {
  [[gnu::always_inline]] static void tail_select_start(const SuccinctSet& self, uint64_t v, uint64_t& sp,
                                                       uint64_t& rem) noexcept;
  template <bool Hw>
  [[gnu::always_inline]] static std::string_view tail_of_t(const SuccinctSet& self, uint64_t v) noexcept;
  static std::string_view tail_of(const SuccinctSet& self, uint64_t v) noexcept;
  // Whether leaf v's tail spells [p, p + n) (coded or not).
  template <bool Hw>
  [[gnu::always_inline]] static bool tail_equals(const SuccinctSet& self, uint64_t v, const uint8_t* p,
                                                 size_t n) noexcept;
  // Leaf v's tail compared with `rest`, as std::string_view::compare; appended to out.
  static int compare_tail(const SuccinctSet& self, uint64_t v, std::span<const std::byte> rest);
  static void append_tail(const SuccinctSet& self, uint64_t v, std::string& out);
};

// descent.hpp, descent.cpp: contains()'s walk down the trie, and its kernels.
struct SuccinctSet::Descent {
  using Fn = bool (*)(const SuccinctSet&, const uint8_t*, size_t) noexcept;
  [[gnu::always_inline]] static void select_start(const SuccinctSet& self, uint64_t v, uint64_t csi, uint64_t csp,
                                                  uint64_t& sp, uint64_t& rem) noexcept;
  [[gnu::always_inline]] static uint64_t fetch_children(const SuccinctSet& self, uint64_t cs, uint64_t& csi,
                                                        uint64_t& csp) noexcept;
  template <bool Hw>
  [[gnu::always_inline]] static bool jump_start(const SuccinctSet& self, const uint8_t*& p, uint64_t& v,
                                                uint64_t& st) noexcept;
  template <bool Hw, bool WithChains>
  [[gnu::always_inline]] static bool contains_t(const SuccinctSet& self, const uint8_t* p, size_t len) noexcept;
  // The kernels (descent.cpp): contains_t for each instruction set.
  template <bool WithChains>
  AMQ_SUCCINCT_TARGET_BMI2 static bool kernel_bmi2(const SuccinctSet& self, const uint8_t* p, size_t len) noexcept;
  template <bool WithChains>
  static bool kernel_portable(const SuccinctSet& self, const uint8_t* p, size_t len) noexcept;
  static Fn select(bool with_chains) noexcept;
};

// batch.cpp: contains_many()'s descents, interleaved.
struct SuccinctSet::Batch {
  using Fn = size_t (*)(const SuccinctSet&, const Probe*, size_t, bool*) noexcept;
  template <bool Hw, bool WithChains>
  [[gnu::always_inline]] static size_t contains_batch_t(const SuccinctSet& self, const Probe* q, size_t m,
                                                        bool* out) noexcept;
  template <bool WithChains>
  AMQ_SUCCINCT_TARGET_BMI2 static size_t kernel_bmi2(const SuccinctSet& self, const Probe* q, size_t m,
                                                     bool* out) noexcept;
  template <bool WithChains>
  static size_t kernel_portable(const SuccinctSet& self, const Probe* q, size_t m, bool* out) noexcept;
  static Fn select(bool with_chains) noexcept;
};

// ranks.cpp: the walks of cuts down the levels behind rank(), index_of() and key_at().
struct SuccinctSet::Ranks {
  // child_boundary(b), fetching ahead what the next level's select reads (rank()'s walk).
  static uint64_t next_cut(const SuccinctSet& self, uint64_t b) noexcept;
  static uint64_t rank_impl(const SuccinctSet& self, std::span<const std::byte> key, bool* found) noexcept;
  // rank_impl's descent, with or without the chain table (a separate copy: the chain
  // probe's values in the loop cost sets without chains, as in contains()).
  template <bool WithChains>
  static uint64_t rank_t(const SuccinctSet& self, std::span<const std::byte> key, bool* found) noexcept;
  static uint64_t leaves_left_of(const SuccinctSet& self, uint64_t level, uint64_t b) noexcept;
  // Keys in the subtrees of nodes [x, y) of one level; npos if *budget (levels to
  // walk, counted down) runs out first.
  static uint64_t keys_between(const SuccinctSet& self, uint64_t x, uint64_t y, uint64_t* budget = nullptr) noexcept;
};

// accelerators.cpp: the tables of the top levels built on load (never stored): where
// the labels of the top levels' nodes start, finer select starts below them, the tail
// bitmap's half-way select starts, and the first two levels as 256-bit label maps.
struct SuccinctSet::TopTables {
  std::vector<uint16_t> top, sub, tail_mid;
  std::vector<uint64_t> jump;
  // Builds the tables for a loaded set (`levels` from Loader::walk_levels), points the
  // set's caches at them and counts them in payload_bytes_.
  static void build(SuccinctSet& self, const Loader::Levels& levels);
  static void build_top(SuccinctSet& self, TopTables& t, uint64_t top);
  static void build_sub(SuccinctSet& self, TopTables& t, uint64_t sub);
  static void build_tail_mid(SuccinctSet& self, TopTables& t);
  static void build_jump(SuccinctSet& self, TopTables& t);
  size_t bytes() const noexcept { return 2 * (top.size() + sub.size() + tail_mid.size()) + 8 * jump.size(); }
};

// counts.cpp: key counts for every cut of some levels, for rank(), index_of() and
// key_at(): for each level l from `level` on and each cut c (the level's first c
// nodes), the keys that end at those nodes or below them, which the cut's walk through
// every deeper level would count. Built on load for the deep, narrow levels, where the
// walks stop, and for the top levels, whose wide nodes key_at() searches.
struct SuccinctSet::LevelCounts {
  uint64_t level = 0;            // the first level with counts
  std::vector<uint64_t> start;   // start[i]: level `level` + i's first node (and, last, the next level's)
  std::vector<uint64_t> offset;  // where level `level` + i's counts begin in `keys`
  std::vector<uint64_t> below;   // sum over the levels l >= `level` + i of leaf_.rank1(start of l)
  std::vector<uint32_t> keys;
  // The table counts every 2^shift-th cut of each level only (the mid levels'): keys[offset[i] + j] is
  // cut start[i] + (j << shift)'s.
  unsigned shift = 0;
  // (The deep levels' table only, when the levels above it are few enough.) Levels 0 ..
  // `level`: each one's first node, and the sum over it and every deeper level of
  // leaf_.rank1 at their first nodes. A cut at the first node of its level stays at
  // the first node of every level below, a cut at the end at the end: rank()'s walk
  // stops there.
  std::vector<uint64_t> edge_start, edge_below;
  uint64_t at(uint64_t l, uint64_t c) const noexcept { return keys[offset[l - level] + c]; }
  // For a cut b of level l: what rank()'s walk of it would add from level l down,
  // less the sum of leaf_.rank1 over those levels' starts.
  uint64_t from(uint64_t l, uint64_t b) const noexcept { return at(l, b - start[l - level]) + below[l - level]; }
  // True if x < y cut one level this holds (x is then a node of that level).
  bool holds(uint64_t x, uint64_t y) const noexcept { return x >= start.front() && y <= start.back(); }
  // The keys ending at the nodes [x, y) of that level or below them.
  uint64_t between(uint64_t x, uint64_t y) const noexcept {
    const uint64_t i = static_cast<uint64_t>(std::upper_bound(start.begin(), start.end(), x) - start.begin()) - 1;
    return at(level + i, y - start[i]) - at(level + i, x - start[i]);
  }
  size_t bytes() const noexcept {
    return 4 * keys.size() + 8 * (start.size() + offset.size() + below.size() + edge_start.size() + edge_below.size());
  }

  // The table with counts for level l of the set, if any.
  static const LevelCounts* counts_of(const SuccinctSet& self, uint64_t l) noexcept {
    return l >= self.bottom_level_               ? self.bottom_.get()
           : l >= 1 && l < self.top_counted_end_ ? self.top_counts_.get()
                                                 : nullptr;
  }
  static uint64_t bottom_budget(const SuccinctSet& self) noexcept {  // entries
    return std::max<uint64_t>(64, self.nodes_ >> 8);
  }
  static uint64_t top_budget(const SuccinctSet& self) noexcept {  // entries
    return std::min<uint64_t>(self.nodes_ >> 6, 1 << 16);
  }
  static void build_bottom(SuccinctSet& self, const std::vector<uint64_t>& starts, uint64_t first_kept);
  static void build_top_counts(SuccinctSet& self, const std::vector<uint64_t>& starts);
  static std::shared_ptr<LevelCounts> top_counts(const SuccinctSet& self, const std::vector<uint64_t>& starts,
                                                 uint64_t end, uint64_t& steps);
  static std::shared_ptr<LevelCounts> new_counts(const SuccinctSet& self, uint64_t level,
                                                 std::span<const uint64_t> starts, uint64_t below);
  static void build_mid(SuccinctSet& self);
  static void count_from_next_level(const SuccinctSet& self, LevelCounts& t, uint64_t i) noexcept;
};

// chains.cpp: the long chains: node `head` has one label and no key ends there, nor at
// the next len - 1 nodes down; the len labels on the way lead to node `end`.
struct SuccinctSet::Chains {
  struct Slot {
    uint64_t head = npos, end = 0, end_start = 0, at = 0, len = 0;
  };
  std::vector<uint64_t> filter;  // bit chain_hash(head) mod its size, for every head
  std::vector<Slot> slots;       // the chains, dense
  std::vector<uint64_t> leaves;  // per slot: the sum of leaf_.rank1(u + 1) over its nodes u (rank())
  std::vector<uint32_t> index;   // open addressing from chain_hash(head) >> shift: 1 + a slot, or 0
  std::string bytes;             // the chains' labels, slot.at .. slot.at + len
  unsigned shift = 64;
  const Slot* find(uint64_t v) const noexcept {
    const uint64_t mask = index.size() - 1;
    for (uint64_t i = detail::succinct::chain_hash(v) >> shift;; i = (i + 1) & mask) {
      const uint32_t k = index[i];
      if (k == 0) return nullptr;
      if (slots[k - 1].head == v) return &slots[k - 1];
    }
  }
  // The chain node v heads, if any (the set has a chain table): the filter's bit first,
  // which rules out most nodes, then the table.
  [[gnu::always_inline]] static const Slot* headed_by(const SuccinctSet& self, uint64_t v) noexcept {
    const uint64_t h = detail::succinct::chain_hash(v);
    if (!((self.chain_filter_[(h >> 6) & self.chain_filter_mask_] >> (h & 63)) & 1)) return nullptr;
    return self.chains_->find(v);
  }
  size_t bytes_used() const noexcept {
    return 8 * filter.size() + sizeof(Slot) * slots.size() + 8 * leaves.size() + 4 * index.size() + bytes.size();
  }
  // Finds the chains of a loaded set and keeps them if they pay (see chains.cpp).
  static void find_chains(SuccinctSet& self);
  // The nodes with one label where no key ends, and their children.
  struct Members {
    std::vector<uint64_t> is_member, is_child;  // bit sets of the nodes
    std::vector<uint64_t> nodes, child;         // in node order
  };
  static Members members_of(const SuccinctSet& self);
  void build_index(std::vector<Slot> found);
};

}  // namespace amq
