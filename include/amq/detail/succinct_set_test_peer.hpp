// amq/detail/succinct_set_test_peer.hpp — SuccinctSet's hooks for tests and fuzz
// targets (not public API): the trie's arrays as text, and contains_many() through the
// interleaved descent whatever the set's size. To run the portable kernels, narrow the
// dispatch mask before building or loading the set (detail::ScopedIsaMask).
#pragma once

#include <span>
#include <string>

#include "amq/succinct_set.hpp"

namespace amq::detail {

struct SuccinctSetTestPeer {
  // The trie's arrays as text: labels as raw bytes, the bitmaps as '0'/'1' characters
  // in bit order.
  struct Layout {
    std::string labels;
    std::string label_bitmap;  // a 0 per label, a 1 closing each node, level order
    std::string leaf_bitmap;   // per node: a key ends there
    std::string tail_bitmap;   // per node a 1, then a 0 per byte of its tail
    std::string tails;         // the tails, concatenated in node order (as coded, if they are)
  };

  static Layout layout(const SuccinctSet& s) {
    Layout l;
    l.labels.assign(reinterpret_cast<const char*>(s.labels_), s.nodes_ - 1);
    l.tails.assign(reinterpret_cast<const char*>(s.tail_), s.tail_bytes_);
    auto bits = [](const auto& b) {
      std::string out;
      for (uint64_t i = 0; i < b.size(); ++i) out += b.get(i) ? '1' : '0';
      return out;
    };
    l.label_bitmap = bits(s.louds_);
    l.leaf_bitmap = bits(s.leaf_);
    l.tail_bitmap = bits(s.tail_map_);
    return l;
  }

  // The plain, uncompressed layout of the original design for `keys` (tails off).
  template <class Keys>
  static Layout plain_layout(const Keys& keys) {
    return layout(SuccinctSet::build(keys, SuccinctSetOptions{.tail_compression = false}));
  }

  // Bytes of the chain table built on load (0: none), its labels included; part of
  // size_parts().load_tables. Defined in src/succinct/chains.cpp.
  static uint64_t chain_table_bytes(const SuccinctSet& s) noexcept;

  // The middle levels' sampled key counts built on load: the first level they cover and
  // their shift (every 2^shift-th cut of a level), or {0, 0} if none. Defined in
  // src/succinct/counts.cpp.
  struct MidCounts {
    uint64_t level = 0;
    unsigned shift = 0;
  };
  static MidCounts mid_counts(const SuccinctSet& s) noexcept;

  // contains_many() through the interleaved descent, whatever the set's size.
  template <class Keys>
  static size_t contains_many_interleaved(const SuccinctSet& s, const Keys& keys, std::span<bool> out) noexcept {
    return s.many(keys, out, true);
  }
};

}  // namespace amq::detail
