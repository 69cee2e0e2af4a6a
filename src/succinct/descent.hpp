// SuccinctSet::Descent: contains()'s walk down the trie, one select per level, as a
// template over the CPU's instructions (Hw: popcnt and BMI2) and over whether the set
// has a chain table; descent.cpp instantiates it per ISA. batch.cpp's interleaved
// descent shares its steps. Internal to src/succinct/.
#pragma once

#include <cstdint>

#include "amq/detail/byte_io.hpp"
#include "amq/detail/prefetch.hpp"
#include "labels.hpp"
#include "rooms.hpp"
#include "tails.hpp"

namespace amq {

// Where the label bitmap's select for the label start of node v (past the top table)
// starts: the finer start of levels 3-4, or the sample of v - 1, which is csp when
// its number is csi (a sample the caller loaded ahead); rem ones are left to pass.
[[gnu::always_inline]] inline void SuccinctSet::Descent::select_start(const SuccinctSet& self, uint64_t v, uint64_t csi,
                                                                      uint64_t csp, uint64_t& sp,
                                                                      uint64_t& rem) noexcept {
  const uint64_t s = v - 1;
  if (v < self.sub_nodes_) {
    sp = self.louds_.sample(s) + self.sub_starts_[s >> detail::succinct::kSubShift];
    rem = s & ((uint64_t{1} << detail::succinct::kSubShift) - 1);
  } else {
    sp = (s >> LoudsBits::kSampleShift) == csi ? csp : self.louds_.sample(s);
    rem = s & detail::succinct::kLoudsSampleMask;
  }
}

// The children of a node whose labels start at label index cs (below the top table)
// select from sample csi = cs >> kSampleShift, csp: loaded here, and the bitmap words
// where their selects count and the labels near the first child's fetched while the
// node's own labels are searched. Returns that label guess.
[[gnu::always_inline]] inline uint64_t SuccinctSet::Descent::fetch_children(const SuccinctSet& self, uint64_t cs,
                                                                            uint64_t& csi, uint64_t& csp) noexcept {
  csi = cs >> LoudsBits::kSampleShift;
  csp = self.louds_.sample(cs);
  const uint64_t gl = detail::succinct::label_guess(cs, csp);
  detail::prefetch_guess(self.louds_.words(), 8 * (csp >> 6));
  detail::prefetch_guess(self.louds_.words(), 8 * (csp >> 6) + 64);
  detail::prefetch_guess(self.labels_, gl);
  return gl;
}

// A key's first two bytes (the set has label maps, the key two bytes or more): byte 0
// through the root's map, byte 1 through its child's (the top table has the starts of
// both levels' nodes; a child without children takes only byte 0). False if they rule
// the key out; else v is the node reached, st its label start, p past the bytes taken.
template <bool Hw>
[[gnu::always_inline]] inline bool SuccinctSet::Descent::jump_start(const SuccinctSet& self, const uint8_t*& p,
                                                                    uint64_t& v, uint64_t& st) noexcept {
  const uint8_t c0 = p[0], c1 = p[1];
  if (!((self.jump_maps_[c0 >> 6] >> (c0 & 63)) & 1)) return false;
  const uint64_t j0 = detail::succinct::rank_in_map<Hw>(self.jump_maps_, c0);
  const uint64_t* m1 = self.jump_maps_ + 4 * (j0 + 1);
  v = 1 + j0;
  st = self.top_starts_[v];
  ++p;
  if ((m1[0] | m1[1] | m1[2] | m1[3]) != 0) {  // v has children: take byte 1 here
    if (!((m1[c1 >> 6] >> (c1 & 63)) & 1)) return false;
    v = st - v + 1 + detail::succinct::rank_in_map<Hw>(m1, c1);
    st = v < self.top_nodes_ ? self.top_starts_[v] : self.louds_.select1<Hw>(v - 1) + 1;
    ++p;
  }
  return true;
}

// The descent of contains(), compiled per instruction set (descent.cpp: with popcnt and
// BMI2, and without; chosen once per set). One select per level on the
// label bitmap, whose samples (one per 128 nodes) leave a word or two to count; the
// node's label count comes from the word the select ended in. What a level reads is
// prefetched one and two levels ahead (below the top table).
// One function of ~90 lines on purpose: the descent's state (key position, node, label
// start, the bits after it, the sample loaded ahead) lives in registers across the
// levels, and any call left in the loop makes it spill them (see find_label).
template <bool Hw, bool WithChains>
[[gnu::always_inline]] inline bool SuccinctSet::Descent::contains_t(const SuccinctSet& self, const uint8_t* p,
                                                                    size_t len) noexcept {
  // p walks the key (the byte of the current level); end is where it stops.
  const uint8_t* const end = p + len;
  const uint8_t* safe_end = self.labels_end_;
  uint64_t v = 0, st = 0;
  uint64_t csi = detail::succinct::kNoSample, csp = 0;  // a sample loaded ahead: sample number csi is csp
  uint64_t after = self.louds_.words()[0];  // label bitmap bits from st on (as far as st's word goes)
  if (self.jump_maps_ && len >= 2) {
    if (!Descent::jump_start<Hw>(self, p, v, st)) return false;
    after = self.louds_.words()[st >> 6] >> (st & 63);
  }
  for (;; ++p) {
    // The labels of node v: the zeros from st up to the next one.
    const uint64_t k = after ? static_cast<uint64_t>(__builtin_ctzll(after)) : self.louds_.next_one(st) - st;
    // No children: a leaf, maybe with a tail.
    if (k == 0) return Tails::tail_equals<Hw>(self, v, p, static_cast<size_t>(end - p));
    if (p == end) return self.leaf_.get(v);
    if constexpr (WithChains) {
      // Node v may head a long chain: take all its labels at once. (A separate copy of
      // the descent: the probe's extra values in this loop cost sets without chains
      // ~10%.)
      if (k == 1) {
        if (const Chains::Slot* c = Chains::headed_by(self, v)) {
          // No key ends inside a chain and no node there has another label: the key
          // must go on with all of the chain's labels.
          const uint64_t n = c->len;
          if (static_cast<uint64_t>(end - p) < n) return false;
          if (!detail::succinct::chain_matches(p, self.chains_->bytes.data() + c->at, n)) return false;
          p += n - 1;
          v = c->end;
          st = c->end_start;
          after = self.louds_.words()[st >> 6] >> (st & 63);
          continue;
        }
      }
    }
    const uint8_t* lab = self.labels_ + (st - v);
    if (st - v >= self.top_nodes_) {
      // The next node is one of v's children st - v + 1 + j: start fetching the label
      // bitmap and the labels near where its select lands (children share a sample)
      // while v's labels are searched.
      const uint64_t gl = Descent::fetch_children(self, st - v, csi, csp);
      if (gl + 1 < self.nodes_) {
        // A level further, on that guess: the grandchildren are nodes near gl + 1,
        // reached through sample(gl). One level of lead leaves most of a cache miss
        // exposed; two hide it.
        const uint64_t gsp = self.louds_.sample(gl);
        detail::prefetch_guess(self.louds_.words(), 8 * (gsp >> 6));
        detail::prefetch_guess(self.labels_, detail::succinct::label_guess(gl, gsp));
        if (static_cast<uint64_t>(end - p) <= self.tail_reach_) {
          // The key is nearly spent: the lookup likely ends at such a node's tail.
          const uint64_t tv = gl + 1, tg = self.tail_map_.sample(tv) +
                                           (((tv & detail::succinct::kTailSampleMask) * self.tail_ratio_) >> 16);
          detail::prefetch_guess(self.tail_map_.words(), 8 * (tg >> 6));
          detail::prefetch_guess(self.tail_, tg - tv);
        }
      }
    }
    const uint64_t j = detail::succinct::find_label(lab, k, *p, safe_end);
    if (j == k) return false;
    v = st - v + 1 + j;
    // Node v's labels start at label index select1(v - 1) + 1 - v. Nodes have about
    // one child each, so that is close to the sample's index plus the nodes between:
    // fetch those lines while the select counts. If the key ends at v, its leaf bit.
    if (v < self.top_nodes_) {
      st = self.top_starts_[v];
      after = self.louds_.words()[st >> 6] >> (st & 63);
      continue;
    }
    const uint64_t s = v - 1;
    uint64_t sp, rem;
    Descent::select_start(self, v, csi, csp, sp, rem);
    const uint64_t guess = (sp - s) + 2 * rem;
    detail::prefetch_guess(self.labels_, guess - 64);
    detail::prefetch_guess(self.labels_, guess);
    detail::prefetch_guess(self.labels_, guess + 64);
    if (p + 1 == end) detail::prefetch(self.leaf_.words() + (v >> 6));
    st = self.louds_.select_after<Hw>(sp, rem, after) + 1;
  }
}

}  // namespace amq
