// SuccinctSet::LevelCounts: key counts for every cut of the deep levels and of the top
// levels, built on load (never stored) and counted in size_in_bytes().
#include "amq/detail/succinct_set_test_peer.hpp"
#include "rooms.hpp"

namespace amq {

using namespace detail::succinct;

// The deep levels are narrow (american-english-insane: 60 levels, the last 40 of them
// with fewer than 400 nodes together), yet rank() walked a cut through every one of
// them, a select and a rank a level, and key_at() did so for each child it weighed.
// Counts for every cut of the deepest levels, as many as fit in max(64, nodes / 256)
// entries, end those walks at the first such level: the counts of level l are built
// from level l + 1's, bottom up (a select and a rank per entry).
// `starts`: the first nodes of levels first_kept, first_kept + 1, ... to the last
// level, then nodes_ (the tail of the list of every level's).
void SuccinctSet::LevelCounts::build_bottom(SuccinctSet& self, const std::vector<uint64_t>& starts,
                                            uint64_t first_kept) {
  if (self.n_ > UINT32_MAX) return;
  const uint64_t budget = LevelCounts::bottom_budget(self);
  const uint64_t last = starts.size() - 1;  // index i: level first_kept + i, nodes [starts[i], starts[i + 1])
  uint64_t first = last, entries = 0;
  while (first > 0 && entries + (starts[first] - starts[first - 1]) + 1 <= budget) {
    --first;
    entries += starts[first + 1] - starts[first] + 1;
  }
  if (first == last) return;
  const std::span<const uint64_t> kept = std::span(starts).subspan(first);
  uint64_t below = 0;  // these levels are the last: the sum is over them alone
  for (size_t i = 0; i + 1 < kept.size(); ++i) below += self.leaf_.rank1(kept[i]);
  auto b = LevelCounts::new_counts(self, first_kept + first, kept, below);
  for (uint64_t i = b->offset.size(); i-- > 0;) LevelCounts::count_from_next_level(self, *b, i);
  if (b->level + 1 <= budget) {
    uint64_t sum = self.level_leaf_sum_;
    for (uint64_t l = 0, a = 0; l <= b->level; ++l) {
      b->edge_start.push_back(a);
      b->edge_below.push_back(sum);
      sum -= self.leaf_.rank1(a);
      a = self.child_boundary(a);
    }
  }
  self.payload_bytes_ += b->bytes();
  self.bottom_level_ = b->level;
  self.bottom_ = std::move(b);
}

// The top levels' counts, 1 .. t while they fit top_budget() entries (insane: levels
// 1 to 3, 15,514 entries; american-english: levels 1 and 2, 1,073; the synthetic URLs:
// levels 1 to 33, their shared prefixes and the level below): key_at() searches the
// children of each node on its way down, and a probe among the wide top nodes'
// children is otherwise a walk of cuts through some 20 levels. Level t's cuts are
// walked down together to the deep levels' counts, the levels above built from it,
// within a budget of 2^21 steps for all tries (a few ms of a load, tens at most): a
// shape that exhausts it on t levels is tried on fewer. `starts`: the first levels'
// first nodes (and the next level's after the last).
void SuccinctSet::LevelCounts::build_top_counts(SuccinctSet& self, const std::vector<uint64_t>& starts) {
  if (!self.bottom_ || starts.size() < 3) return;
  const uint64_t budget = LevelCounts::top_budget(self);
  uint64_t end = 1, entries = 0;  // levels [1, end)
  while (end + 1 < starts.size() && end < self.bottom_level_ &&
         entries + (starts[end + 1] - starts[end]) + 1 <= budget) {
    entries += starts[end + 1] - starts[end] + 1;
    ++end;
  }
  uint64_t steps = uint64_t{1} << 21;
  for (; end > 1; --end) {
    if (auto t = LevelCounts::top_counts(self, starts, end, steps)) {
      self.payload_bytes_ += t->bytes();
      self.top_counted_end_ = end;
      self.top_counts_ = std::move(t);
      return;
    }
  }
}

// The counts of levels [1, end), or null if walking level end - 1's cuts down takes
// more than `steps` (counted down).
std::shared_ptr<SuccinctSet::LevelCounts> SuccinctSet::LevelCounts::top_counts(const SuccinctSet& self,
                                                                               const std::vector<uint64_t>& starts,
                                                                               uint64_t end, uint64_t& steps) {
  // Below level 1 lie all levels but the root's, whose start (0) has no leaves before it.
  auto t = LevelCounts::new_counts(self, 1, std::span(starts).subspan(1, end), self.level_leaf_sum_);
  // Level end - 1: every cut walked down to the deep levels' counts, together (equal
  // cuts once).
  const uint64_t last = end - 1, m = starts[end] - starts[last];
  std::vector<uint64_t> cut(m + 1), raw(m + 1, 0);
  for (uint64_t c = 0; c <= m; ++c) cut[c] = starts[last] + c;
  for (uint64_t l = last; cut[0] != cut[m]; ++l) {
    if (l >= self.bottom_level_) {
      for (uint64_t c = 0; c <= m; ++c)
        raw[c] += self.bottom_->at(l, cut[c] - self.bottom_->start[l - self.bottom_level_]);
      break;
    }
    for (uint64_t c = 0; c <= m; ++c) raw[c] += self.leaf_.rank1(cut[c]);
    if (l + 1 >= self.levels_ || cut[0] >= self.nodes_) break;
    uint64_t prev = npos, next = 0;
    for (uint64_t c = 0; c <= m; ++c) {
      if (cut[c] != prev) {
        if (steps == 0) return nullptr;  // a hostile shape: fewer levels rather than a slow load
        --steps;
        prev = cut[c];
        next = prev >= self.nodes_ ? self.nodes_ : self.child_boundary(prev);
      }
      cut[c] = next;
    }
  }
  for (uint64_t c = 0; c <= m; ++c) t->keys[t->offset[last - 1] + c] = static_cast<uint32_t>(raw[c] - raw[0]);
  for (uint64_t i = last - 1; i-- > 0;) LevelCounts::count_from_next_level(self, *t, i);
  return t;
}

// A count table for the levels from `level` whose first nodes are `starts` (and, last,
// the next level's), its counts still zero; `below`: the sum of leaf_.rank1 over the
// starts of every level from `level` down.
std::shared_ptr<SuccinctSet::LevelCounts> SuccinctSet::LevelCounts::new_counts(const SuccinctSet& self, uint64_t level,
                                                                               std::span<const uint64_t> starts,
                                                                               uint64_t below) {
  auto t = std::make_shared<LevelCounts>();
  t->level = level;
  t->start.assign(starts.begin(), starts.end());
  uint64_t entries = 0;
  for (size_t i = 0; i + 1 < starts.size(); ++i) {
    t->offset.push_back(entries);
    t->below.push_back(below);
    entries += starts[i + 1] - starts[i] + 1;
    below -= self.leaf_.rank1(starts[i]);
  }
  t->keys.resize(entries);
  return t;
}

// Level i's counts of table t from level i + 1's (none past the table's last level,
// which must then be the trie's last): each cut's leaves on its own level, plus the
// counts of the cut its children's begin at.
void SuccinctSet::LevelCounts::count_from_next_level(const SuccinctSet& self, LevelCounts& t, uint64_t i) noexcept {
  const uint64_t s = t.start[i], m = t.start[i + 1] - s, base = self.leaf_.rank1(s);
  const bool next = i + 1 < t.offset.size();
  for (uint64_t c = 0; c <= m; ++c) {
    uint64_t k = self.leaf_.rank1(s + c) - base;
    if (next) k += t.keys[t.offset[i + 1] + (self.child_boundary(s + c) - t.start[i + 1])];
    t.keys[t.offset[i] + c] = static_cast<uint32_t>(k);
  }
}

// Between the top levels' counts and the deep levels' lie the levels where the walks of
// rank() and index_of() go longest on deep tries (file paths: a key ends some 60 levels
// down, and its cut is carried 50 more). Counts of every cut there would cost 4 bytes a
// node; every 2^shift-th cut's (the smallest shift in kMidShifts whose table fits a
// quarter of a percent of the key bytes, estimated from the levels' keys and the tails)
// let a walk pair its cut with the nearest counted one and walk both only until they
// meet, where the subtrees between them run out, as keys_between() does.
void SuccinctSet::LevelCounts::build_mid(SuccinctSet& self) {
  const LevelCounts* bottom = self.bottom_.get();
  if (bottom == nullptr || bottom->edge_start.empty()) return;
  const uint64_t first = std::max<uint64_t>(1, self.top_counted_end_), last = self.bottom_level_;
  if (first >= last) return;
  // Every level's first node: edge_start has levels 0 .. last, bottom->start the rest.
  std::vector<uint64_t> starts(bottom->edge_start.begin(), bottom->edge_start.end() - 1);
  starts.insert(starts.end(), bottom->start.begin(), bottom->start.end());
  uint64_t key_bytes = self.tail_bytes_;
  for (uint64_t l = 1; l + 1 < starts.size(); ++l)
    key_bytes += l * (self.leaf_.rank1(starts[l + 1]) - self.leaf_.rank1(starts[l]));
  const uint64_t budget = key_bytes / 400;
  unsigned shift = kMidShiftMin;
  const auto bytes_at = [&](unsigned sh) {
    uint64_t b = 8 * 3 * (last - first + 1);
    for (uint64_t l = first; l < last; ++l) b += 4 * (((starts[l + 1] - starts[l]) >> sh) + 1);
    return b;
  };
  while (bytes_at(shift) > budget)
    if (++shift > kMidShiftMax) return;
  auto t = LevelCounts::new_counts(self, first, std::span(starts).subspan(first, last - first + 1),
                                   bottom->edge_below[first]);
  t->shift = shift;
  t->keys = std::vector<uint32_t>();
  for (uint64_t i = 0; i + 1 < t->start.size(); ++i) {
    t->offset[i] = t->keys.size();
    t->keys.resize(t->keys.size() + ((t->start[i + 1] - t->start[i]) >> shift) + 1);
  }
  // Bottom up, level l's count at every cut from level l + 1's (the deep table's at the
  // last), every 2^shift-th kept: a cut's leaves on its level plus the count of the cut
  // its children begin at.
  std::vector<uint32_t> next, cur;
  for (uint64_t l = last; l-- > first;) {
    const uint64_t s = starts[l], m = starts[l + 1] - s, i = l - first;
    cur.resize(m + 1);
    uint64_t pos = self.node_start(s), leaves = 0;
    for (uint64_t c = 0; c <= m; ++c) {
      const uint64_t v = s + c, child = pos - v + 1 - starts[l + 1];
      const uint64_t below = l + 1 == last ? bottom->at(last, child) : next[child];
      cur[c] = static_cast<uint32_t>(leaves + below);
      if ((c & ((uint64_t{1} << shift) - 1)) == 0) t->keys[t->offset[i] + (c >> shift)] = cur[c];
      if (c < m) {
        leaves += self.leaf_.get(v);
        pos = self.louds_.next_one(pos) + 1;
      }
    }
    std::swap(next, cur);
  }
  self.payload_bytes_ += t->bytes();
  self.mid_ = std::move(t);
}

namespace detail {

SuccinctSetTestPeer::MidCounts SuccinctSetTestPeer::mid_counts(const SuccinctSet& s) noexcept {
  return s.mid_ ? MidCounts{s.mid_->level, s.mid_->shift} : MidCounts{};
}

}  // namespace detail

}  // namespace amq
