// SuccinctSet's ranks: rank() and index_of() walk a cut down the levels (counting the
// leaves left of it), key_at() searches each node's children by such walks; both stop
// at the levels whose cuts LevelCounts has counted.
#include <string>

#include "amq/error.hpp"
#include "descent.hpp"

namespace amq {

using namespace detail::succinct;

// child_boundary(b) for rank()'s walk down the levels (b < nodes_). Below the top
// table, the next level's cut is near label index g (nodes have about one label each):
// the bitmap where its select will count is fetched while this one counts. (In
// key_at()'s walks of a pair of nearby cuts, the second's fetches only cost.)
uint64_t SuccinctSet::Ranks::next_cut(const SuccinctSet& self, uint64_t b) noexcept {
  if (b <= self.top_nodes_) return self.child_boundary(b);
  const uint64_t s = b - 1, sp = self.louds_.sample(s), g = label_guess(s, sp);
  if (g < self.nodes_) detail::prefetch_guess(self.louds_.words(), 8 * (self.louds_.sample(g) >> 6));
  return (self.louds_.select1_from(sp, s) + 1) - b + 1;
}

// Keys < key = the sum over levels of the leaves left of a cut through each level.
// The cut follows the key down the trie, then the boundary of the last node reached
// is carried down through the deeper levels (child_boundary).
uint64_t SuccinctSet::Ranks::rank_impl(const SuccinctSet& self, std::span<const std::byte> key, bool* found) noexcept {
  *found = false;
  if (self.n_ == 0) return 0;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(key.data());
  const size_t len = key.size();
  uint64_t total = 0, level = 0, v = 0, b = 0;
  // As contains(): the label starts of the top levels' nodes from their table, the
  // first two levels' searches through their label maps, the others' selects started
  // from the finer table or the sample, and `after` the bitmap's bits from st on.
  uint64_t st = 0, after = self.louds_.words()[0];
  for (size_t d = 0;; ++d) {
    const uint64_t k = after ? static_cast<uint64_t>(__builtin_ctzll(after)) : self.louds_.next_one(st) - st;
    if (k == 0) {
      const int cmp = Tails::compare_tail(self, v, key.subspan(d));
      *found = cmp == 0;
      b = cmp < 0 ? v + 1 : v;
      break;
    }
    if (d == len) {
      *found = self.leaf_.get(v);
      b = v;
      break;
    }
    const uint8_t c = p[d];
    uint64_t csi = kNoSample, csp = 0;
    if (st - v >= self.top_nodes_) (void)Descent::fetch_children(self, st - v, csi, csp);
    uint64_t j;
    bool hit;
    if (self.jump_maps_ != nullptr && level < 2) {  // v is the root or one of its children
      const uint64_t* m = self.jump_maps_ + 4 * v;
      j = rank_in_map<detail::kHwPopcount>(m, c);
      hit = (m[c >> 6] >> (c & 63)) & 1;
    } else {
      const uint8_t* lab = self.labels_ + (st - v);
      j = lower_label(lab, k, c, self.labels_end_);
      hit = j < k && lab[j] == c;
    }
    total += self.leaf_.rank1(v + 1);  // this level: v and the nodes left of it
    ++level;
    const uint64_t first = st - v + 1;
    if (!hit) {
      b = first + j;  // next level: the children before the key's byte
      break;
    }
    v = first + j;
    if (v < self.top_nodes_) {
      st = self.top_starts_[v];
      after = self.louds_.words()[st >> 6] >> (st & 63);
    } else {
      uint64_t sp, rem;
      Descent::select_start(self, v, csi, csp, sp, rem);
      detail::prefetch_guess(self.labels_, (sp - (v - 1)) + 2 * rem);
      st = self.louds_.select_after(sp, rem, after) + 1;
    }
  }
  return total + leaves_left_of(self, level, b) - self.level_leaf_sum_;
}

// The sum over levels `level` on of leaf_.rank1 at the cut b of that level carries down
// to: the cut walked level by level to the counted levels (or the last).
uint64_t SuccinctSet::Ranks::leaves_left_of(const SuccinctSet& self, uint64_t level, uint64_t b) noexcept {
  uint64_t total = 0;
  for (;;) {
    if (const LevelCounts* t = LevelCounts::counts_of(self, level))  // b cuts level `level`: the rest is counted
      return total + t->from(level, b);
    total += self.leaf_.rank1(b);
    if (++level >= self.levels_) break;
    if (b >= self.nodes_) {
      total += (self.levels_ - level) * self.n_;
      break;
    }
    b = Ranks::next_cut(self, b);
  }
  return total;
}

// Keys in the subtrees of the nodes [x, y) of one level.
uint64_t SuccinctSet::Ranks::keys_between(const SuccinctSet& self, uint64_t x, uint64_t y, uint64_t* budget) noexcept {
  uint64_t total = 0;
  while (x != y) {
    if (budget != nullptr && (*budget)-- == 0) return npos;
    for (const LevelCounts* t : {self.top_counts_.get(), self.bottom_.get()})
      if (t != nullptr && t->holds(x, y)) return total + t->between(x, y);
    total += self.leaf_.rank1_between(x, y);
    if (y >= self.nodes_ && x >= self.nodes_) break;
    x = x >= self.nodes_ ? self.nodes_ : self.child_boundary(x);
    y = y >= self.nodes_ ? self.nodes_ : self.child_boundary(y);
  }
  return total;
}
uint64_t SuccinctSet::rank(KeyView key) const noexcept {
  bool found;
  return Ranks::rank_impl(*this, key.bytes(), &found);
}

uint64_t SuccinctSet::index_of(KeyView key) const noexcept {
  bool found;
  const uint64_t r = Ranks::rank_impl(*this, key.bytes(), &found);
  return found ? r : npos;
}

std::string SuccinctSet::key_at(uint64_t i) const {
  if (i >= n_)
    throw Error(Errc::invalid_argument,
                "succinct set: index " + std::to_string(i) + " out of range (size " + std::to_string(n_) + ")");
  std::string key;
  uint64_t v = 0, before = 0;  // keys less than every key below v
  for (;;) {
    const uint64_t st = node_start(v);
    if (louds_.get(st)) {
      Tails::append_tail(*this, v, key);
      return key;
    }
    if (leaf_.get(v)) {
      if (before == i) return key;
      ++before;
    }
    const uint64_t k = louds_.next_one(st) - st;
    const uint64_t first = st - v + 1;
    const uint64_t target = i - before;
    // The last child j with Ranks::keys_between(*this, first, first + j) <= target, by a binary
    // search whose steps count only the children between the last one known to lie
    // at or below it and the probe: small ranges, whose cuts soon meet on the way
    // down (from first each time, and once more for the answer, key_at took ~1.7x as
    // long on american-english-insane).
    uint64_t lo = 0, hi = k - 1, at = 0;  // the child is in [lo, hi]; at: keys before child lo
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo + 1) / 2, m = Ranks::keys_between(*this, first + lo, first + mid);
      if (at + m <= target) lo = mid, at += m;
      else hi = mid - 1;
    }
    before += at;
    key.push_back(static_cast<char>(labels_[st - v + lo]));
    v = first + lo;
  }
}
}  // namespace amq
