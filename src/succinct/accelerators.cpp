// SuccinctSet::TopTables: small tables built from the file on load (never stored) that
// spare contains() and rank() the selects every lookup makes near the root. Each is
// bounded in size and counted in size_in_bytes().
#include <algorithm>

#include "rooms.hpp"

namespace amq {

using namespace detail::succinct;

namespace {

// The finer select starts: for i < count, select1(j(i)) minus the position of j(i)'s
// sample, as 16-bit offsets (0 for a j(i) past the last one); empty when one does not
// fit.
template <class Bits, class J>
std::vector<uint16_t> select_offsets(const Bits& bits, uint64_t count, J&& j_of) {
  std::vector<uint16_t> out(count);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t j = j_of(i);
    const uint64_t off = j < bits.ones() ? bits.select1(j) - bits.sample(j) : 0;
    if (off > 0xffff) return {};
    out[i] = static_cast<uint16_t>(off);
  }
  return out;
}

}  // namespace

void SuccinctSet::TopTables::build(SuccinctSet& s, const Loader::Levels& levels) {
  auto t = std::make_shared<TopTables>();
  build_top(s, *t, levels.top);
  build_sub(s, *t, levels.sub);
  build_tail_mid(s, *t);
  build_jump(s, *t);
  s.payload_bytes_ += t->bytes();
  s.tables_ = std::move(t);
}

// Where the labels of each node of the top levels start (the levels down to `top`),
// so contains() skips their selects (every lookup passes through them). 16-bit
// entries: the table stops at the first start beyond 65535.
void SuccinctSet::TopTables::build_top(SuccinctSet& s, TopTables& t, uint64_t top) {
  if (top == 0 || top > s.nodes_) top = s.nodes_;
  top = std::min(top, kTopNodesMax);
  t.top.reserve(top);
  for (uint64_t v = 0; v < top; ++v) {
    const uint64_t st = s.node_start(v);
    if (st > 0xffff) break;
    t.top.push_back(static_cast<uint16_t>(st));
  }
  s.top_starts_ = t.top.data();
  s.top_nodes_ = t.top.size();
}

// Finer select starts for levels kTopLevels .. kSubLevels - 1 (the nodes below `sub`),
// whose wide nodes leave many zeros between the 128-node samples: a third of level
// 3's selects and a sixth of level 4's ran past the six words select1_from counts
// without a branch (on american-english-insane), into a mispredicted loop. One per 32
// nodes, as a 16-bit offset from its sample (at most 96 nodes of at most 257 bits lie
// between, so it fits in any trie load accepts; checked anyway).
void SuccinctSet::TopTables::build_sub(SuccinctSet& s, TopTables& t, uint64_t sub) {
  sub = std::min({sub, s.nodes_, kSubNodesMax});
  if (sub <= s.top_nodes_) return;
  t.sub = select_offsets(s.louds_, (sub + 31) >> kSubShift, [](uint64_t q) { return q << kSubShift; });
  if (t.sub.empty()) return;
  s.sub_starts_ = t.sub.data();
  s.sub_nodes_ = sub;
}

// Tail selects start half-way between the tail bitmap's samples where that is nearer:
// 512 nodes and their tails span ~12 words on word lists, past the six a select
// counts without a branch. One 16-bit offset per sample; none if the tails of 256
// nodes pass 64 KiB.
void SuccinctSet::TopTables::build_tail_mid(SuccinctSet& s, TopTables& t) {
  t.tail_mid = select_offsets(s.tail_map_, TailBits::samples(s.nodes_), [](uint64_t g) {
    return (g << TailBits::kSampleShift) + (uint64_t{1} << (TailBits::kSampleShift - 1));
  });
  if (!t.tail_mid.empty()) s.tail_mids_ = t.tail_mid.data();
}

// The first two levels as 256-bit label maps: the root's, then one per root child (all
// zero for a childless one). contains() takes the first two bytes of a key in two
// popcounts instead of two label searches.
void SuccinctSet::TopTables::build_jump(SuccinctSet& s, TopTables& t) {
  const uint64_t k0 = s.louds_.next_one(0);
  if (s.n_ == 0 || k0 == 0 || k0 >= s.top_nodes_) return;
  t.jump.assign(4 * (k0 + 1), 0);
  for (uint64_t j = 0; j < k0; ++j) {
    const uint8_t c = s.labels_[j];
    t.jump[c >> 6] |= uint64_t{1} << (c & 63);
    const uint64_t r = j + 1, st = s.top_starts_[r], k = s.louds_.next_one(st) - st;
    for (uint64_t i = 0; i < k; ++i) {
      const uint8_t c1 = s.labels_[st - r + i];
      t.jump[4 * (j + 1) + (c1 >> 6)] |= uint64_t{1} << (c1 & 63);
    }
  }
  s.jump_maps_ = t.jump.data();
}

}  // namespace amq
