// SuccinctSet's ranks: rank() and index_of() walk a cut down the levels (counting the
// leaves left of it), key_at() searches each node's children by such walks; both stop
// at the levels whose cuts LevelCounts has counted.
#include <algorithm>
#include <string>
#include <vector>

#include "amq/error.hpp"
#include "descent.hpp"

namespace amq {

using namespace detail::succinct;

namespace {
// key_at() keeps the walks of three cuts down to the counted levels when they are at
// most this deep.
constexpr uint64_t kMaxWalkLevels = 4096;
}  // namespace

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
  return self.chains_ != nullptr ? rank_t<true>(self, key, found) : rank_t<false>(self, key, found);
}

template <bool WithChains>
uint64_t SuccinctSet::Ranks::rank_t(const SuccinctSet& self, std::span<const std::byte> key, bool* found) noexcept {
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
    if (WithChains && k == 1) {
      // v may head a long chain (Chains): if the key goes on with all its labels, the
      // chain's levels are taken at once, their leaves left of the path from the table.
      const Chains::Slot* ch = Chains::headed_by(self, v);
      if (ch != nullptr && len - d >= ch->len && chain_matches(p + d, self.chains_->bytes.data() + ch->at, ch->len)) {
        total += self.chains_->leaves[static_cast<size_t>(ch - self.chains_->slots.data())];
        level += ch->len;
        d += ch->len - 1;
        v = ch->end;
        st = ch->end_start;
        after = self.louds_.words()[st >> 6] >> (st & 63);
        continue;
      }
    }
    const uint8_t c = p[d];
    uint64_t csi = kNoSample, csp = 0;
    if (st - v >= self.top_nodes_) {
      // As contains(): the children's select and labels fetched while v's labels are
      // searched, and a level further on the guess of where the grandchildren lie.
      const uint64_t gl = Descent::fetch_children(self, st - v, csi, csp);
      if (gl + 1 < self.nodes_) {
        const uint64_t gsp = self.louds_.sample(gl);
        detail::prefetch_guess(self.louds_.words(), 8 * (gsp >> 6));
        detail::prefetch_guess(self.labels_, label_guess(gl, gsp));
        if (len - d <= self.tail_reach_) {  // the key is nearly spent: likely a tail below
          const uint64_t tv = gl + 1, tg = self.tail_map_.sample(tv) + (((tv & kTailSampleMask) * self.tail_ratio_) >> 16);
          detail::prefetch_guess(self.tail_map_.words(), 8 * (tg >> 6));
          detail::prefetch_guess(self.tail_, tg - tv);
        }
      }
    }
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
      const uint64_t guess = (sp - (v - 1)) + 2 * rem;
      detail::prefetch_guess(self.labels_, guess - 64);
      detail::prefetch_guess(self.labels_, guess);
      detail::prefetch_guess(self.labels_, guess + 64);
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
    if (const LevelCounts* t = self.bottom_.get(); t != nullptr && level + 1 < t->edge_start.size()) {
      if (b == t->edge_start[level]) return total + t->edge_below[level];
      if (b == t->edge_start[level + 1]) return total + t->edge_below[level + 1] + self.n_;
    }
    if (const LevelCounts* t = self.mid_.get(); t != nullptr && level >= t->level) {
      // The nearest counted cut x, and the keys between it and b.
      const uint64_t i = level - t->level, s = t->start[i], half = (uint64_t{1} << t->shift) >> 1;
      const uint64_t j = std::min((b - s + half) >> t->shift, (t->start[i + 1] - s) >> t->shift);
      const uint64_t x = s + (j << t->shift), at_x = t->keys[t->offset[i] + j] + t->below[i];
      return total + (x <= b ? at_x + keys_between(self, x, b) : at_x - keys_between(self, b, x));
    }
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
  // Top down: at each node, the child whose subtree holds key i, by a binary search
  // over the keys left of the cuts between its children. A cut's count is the sum over
  // the levels below of the leaves left of it: its walk, a select and a rank a level,
  // down to the counted levels (or the table, on a counted level). The cuts just left
  // and right of the current node are kept walked (a cut and its count at every level
  // below), so a probe between them walks only until it meets one of them: the
  // subtrees between have run out there, and the rest of its walk is that bracket's.
  // Descending to a child keeps the probes that bound it: its cuts one level down.
  const uint64_t end = std::min(bottom_level_, levels_);  // walks stop here: the counted levels
  std::string key;
  uint64_t v = 0, level = 0, before = 0;  // keys less than every key below v
  // Three walked cuts: for the levels d walked so far, cut[d] and sum[d] (the keys left
  // of it on level d and below); `known`: the levels below those walked.
  struct Walk {
    uint64_t* cut;
    uint64_t* sum;
    uint64_t known;
  };
  constexpr uint64_t kInline = 64;
  uint64_t inline_store[6 * kInline];
  std::vector<uint64_t> heap_store;
  uint64_t* store = inline_store;
  uint64_t stride = kInline;
  if (end > kInline && end <= kMaxWalkLevels) {
    heap_store.resize(6 * end);
    store = heap_store.data();
    stride = end;
  }
  Walk w[3];
  for (int k = 0; k < 3; ++k) w[k] = {store + 2 * k * stride, store + (2 * k + 1) * stride, 0};
  int lo_w = 0, hi_w = 1;  // the walks of cuts v and v + 1, from `level` on, when `walked`
  bool walked = false;
  // Walk o one level further: the next cut and the count left of it.
  const auto extend = [&](Walk& o) {
    const uint64_t e = o.known, x = o.cut[e - 1];
    if (x >= nodes_) {
      o.cut[e] = nodes_;
      o.sum[e] = o.sum[e - 1] - n_;
    } else {
      o.cut[e] = e + 1 < end ? Ranks::next_cut(*this, x) : child_boundary(x);
      o.sum[e] = o.sum[e - 1] - leaf_.rank1(x);
    }
    o.known = e + 1;
  };
  // Cut x of level d (between the walks lo_w and hi_w) walked into w[t] down to `end`,
  // or until it meets one of them on a level it has been walked to: its count is then
  // theirs there plus the leaves left of it on the levels above. (Walking the brackets
  // along to look for a meeting cost about what it saved.)
  const auto probe = [&](int t, uint64_t d, uint64_t x) {
    Walk& o = w[t];
    uint64_t e = d;
    int met = -1;
    for (; e < end; ++e) {
      for (const int k : {lo_w, hi_w})
        if (w[k].known > e && w[k].cut[e] == x) met = k;
      if (met >= 0) break;
      o.cut[e] = x;
      if (x >= nodes_) {
        o.sum[e] = n_;
        continue;
      }
      o.sum[e] = leaf_.rank1(x);
      x = e + 1 < end ? Ranks::next_cut(*this, x) : child_boundary(x);
    }
    uint64_t below;
    if (met >= 0) {
      const Walk& m = w[met];
      below = m.sum[e];
      for (uint64_t f = e; f < m.known; ++f) o.cut[f] = m.cut[f], o.sum[f] = m.sum[f];
      o.known = m.known;
    } else {
      below = end >= levels_ ? 0 : x >= nodes_ ? (levels_ - end) * n_ : bottom_->from(end, x);
      o.known = end;
    }
    for (uint64_t f = e; f-- > d;) below = o.sum[f] += below;
  };
  for (;;) {
    // v's children: [f, g) on level d.
    const uint64_t d = level + 1;
    if (!walked && d < end && end <= kMaxWalkLevels && LevelCounts::counts_of(*this, d) == nullptr) {
      // The walks start at v and v + 1, with their counts: the root's are every level's
      // start and end, the others' (below a counted level) from the table.
      lo_w = 0, hi_w = 1;
      w[0].cut[level] = v, w[1].cut[level] = v + 1;
      w[0].sum[level] = level == 0 ? level_leaf_sum_ : Ranks::leaves_left_of(*this, level, v);
      w[1].sum[level] = level == 0 ? level_leaf_sum_ + n_ : Ranks::leaves_left_of(*this, level, v + 1);
      w[0].known = w[1].known = level + 1;
      walked = true;
    }
    uint64_t f, g;
    if (walked && d < end) {
      for (const int k : {lo_w, hi_w})
        while (w[k].known <= d) extend(w[k]);
      f = w[lo_w].cut[d];
      g = w[hi_w].cut[d];
    } else {
      f = child_boundary(v);
      g = child_boundary(v + 1);
    }
    if (f == g) {  // no children: a leaf, maybe with a tail
      Tails::append_tail(*this, v, key);
      return key;
    }
    if (leaf_.get(v)) {
      if (before == i) return key;
      ++before;
    }
    const uint64_t target = i - before;
    uint64_t a = 0, b = g - f - 1, at = 0;  // the child is f + [a, b]; at: keys before child a
    if (const LevelCounts* t = LevelCounts::counts_of(*this, d)) {
      // A counted level: the keys left of each cut are in the table.
      const uint64_t s = t->start[d - t->level], base = t->at(d, f - s);
      while (a < b) {
        const uint64_t mid = a + (b - a + 1) / 2, m = t->at(d, f + mid - s) - base;
        if (m <= target) a = mid, at = m;
        else b = mid - 1;
      }
      walked = false;
    } else if (end > kMaxWalkLevels) {
      // Too deep to keep walks (a hostile trie): each probe counts the children between
      // the last one known at or below it and itself.
      while (a < b) {
        const uint64_t mid = a + (b - a + 1) / 2, m = Ranks::keys_between(*this, f + a, f + mid);
        if (at + m <= target) a = mid, at += m;
        else b = mid - 1;
      }
    } else {
      // The probes guess where key i lies among the children between the bounds from
      // the keys between them, as if the children held as many each (then the next
      // probe usually confirms the guess from the other side): fewer probes than
      // halving, and those near a bound meet it sooner.
      const uint64_t base = w[lo_w].sum[d];
      while (a < b) {
        const uint64_t keys = w[hi_w].sum[d] - base - at;  // in the children [a, b]
        const auto guess = a + static_cast<uint64_t>(static_cast<double>(target - at) / static_cast<double>(keys) *
                                                     static_cast<double>(b - a + 1));
        const uint64_t mid = std::clamp(guess, a + 1, b);
        const int x = 3 - lo_w - hi_w;
        probe(x, d, f + mid);
        const uint64_t m = w[x].sum[d] - base;
        if (m <= target) a = mid, at = m, lo_w = x;
        else b = mid - 1, hi_w = x;
      }
    }
    before += at;
    key.push_back(static_cast<char>(labels_[f + a - 1]));
    v = f + a;
    level = d;
  }
}
}  // namespace amq
