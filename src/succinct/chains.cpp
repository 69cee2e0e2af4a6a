// SuccinctSet::Chains: long chains of one-label nodes, found on load where they are
// common, which contains() takes in one compare each. Counted in size_in_bytes().
#include <algorithm>
#include <bit>

#include "amq/detail/succinct_set_test_peer.hpp"
#include "rooms.hpp"

namespace amq {

using namespace detail::succinct;

namespace {

constexpr uint64_t kChainMin = 8;    // a chain of fewer nodes stays a select a node
constexpr uint64_t kChainKeys = 16;  // nor is one kept that fewer keys pass through

}  // namespace

namespace {

void set_bit(std::vector<uint64_t>& b, uint64_t i) { b[i >> 6] |= uint64_t{1} << (i & 63); }
bool get_bit(const std::vector<uint64_t>& b, uint64_t i) { return (b[i >> 6] >> (i & 63)) & 1; }

}  // namespace

// The members (one label, no key ends there) and their children, in one pass over the
// label bitmap: node v's one at e closes its labels (e_{v-1}, e), so a node with one
// label is a one at e after a zero at e - 1 and a one at e - 2 (the root: e = 1; a one
// is assumed before the bitmap), found 64 bits at a time. Its single label is label
// e - 1 - v, so its child is node e - v.
SuccinctSet::Chains::Members SuccinctSet::Chains::members_of(const SuccinctSet& self) {
  Members m;
  m.is_member.resize((self.nodes_ + 63) / 64);
  m.is_child.resize((self.nodes_ + 63) / 64);
  const uint64_t* w = self.louds_.words();
  uint64_t ones = 0, last = uint64_t{1} << 63;  // ones before word i; word i - 1
  for (uint64_t i = 0; i < (self.louds_.size() + 63) / 64; ++i) {
    const uint64_t x = w[i];
    for (uint64_t one = x & ~((x << 1) | (last >> 63)) & ((x << 2) | (last >> 62)); one != 0; one &= one - 1) {
      const unsigned b = static_cast<unsigned>(std::countr_zero(one));
      const uint64_t e = 64 * i + b, v = ones + static_cast<uint64_t>(std::popcount(x & ((uint64_t{1} << b) - 1)));
      if (!self.leaf_.get(v)) {
        set_bit(m.is_member, v);
        set_bit(m.is_child, e - v);
        m.nodes.push_back(v);
        m.child.push_back(e - v);
      }
    }
    ones += static_cast<uint64_t>(std::popcount(x));
    last = x;
  }
  return m;
}

// Chains of at least kChainMin one-label nodes where no key ends (the shared prefixes
// of URLs, paths or namespaced keys below the top table): contains() would spend a
// select on each node. The table is kept only when its chains save a lookup of a
// present key at least one select on average, since every one-label node on a
// lookup's path then pays a filter probe (word lists: far fewer). Counted in
// size_in_bytes().
void SuccinctSet::Chains::find_chains(SuccinctSet& self) {
  const Members m = members_of(self);
  if (m.nodes.size() < kChainMin) return;
  // The length of the chain from each member down, saturated (children come later).
  std::vector<uint8_t> run(self.nodes_);
  for (size_t i = m.nodes.size(); i-- > 0;)
    run[m.nodes[i]] = static_cast<uint8_t>(std::min<unsigned>(255, 1u + run[m.child[i]]));
  auto c = std::make_shared<Chains>();
  std::vector<Chains::Slot> found;
  uint64_t saved = 0;  // selects the chains save over lookups of every key
  // Levels keys_between may walk for all chains together: a chain's subtree is walked
  // to its bottom, and nested chains in a deep trie could make that quadratic.
  uint64_t budget = self.nodes_ + (uint64_t{1} << 20);
  for (const uint64_t v : m.nodes) {
    // v heads a chain when no member's child is v; only long ones are walked.
    if (get_bit(m.is_child, v) || run[v] < kChainMin) continue;
    const size_t at = c->bytes.size();
    uint64_t u = v, leaves = 0;
    while (u < self.nodes_ && get_bit(m.is_member, u)) {
      leaves += self.leaf_.rank1(u + 1);
      const uint64_t st = self.node_start(u);
      c->bytes.push_back(static_cast<char>(self.labels_[st - u]));
      u = st - u + 1;
    }
    const uint64_t len = c->bytes.size() - at;
    // Kept if at least kChainKeys keys pass through it (so a lookup is likely to).
    const uint64_t keys = Ranks::keys_between(self, u, u + 1, &budget);
    if (keys == npos) return;  // a hostile shape: no table rather than a slow load
    if (keys < kChainKeys) {
      c->bytes.resize(at);
      continue;
    }
    found.push_back({v, u, self.node_start(u), at, len});
    c->leaves.push_back(leaves);
    saved += keys * (len - 1);
  }
  // Worth its probes if it saves a lookup of a present key one select on average.
  if (found.empty() || saved < self.n_ || found.size() >= UINT32_MAX) return;
  c->build_index(std::move(found));
  self.payload_bytes_ += c->bytes_used();
  self.chain_filter_ = c->filter.data();
  self.chain_filter_mask_ = c->filter.size() - 1;
  self.chain_count_ = c->slots.size();
  self.chains_ = std::move(c);
}

// The slots of the chains found, dense, their index (open addressing, at most half
// full: 8-16 bytes a chain in 32-bit entries, where slots of their own would take
// 80-160) and their filter.
void SuccinctSet::Chains::build_index(std::vector<Slot> found) {
  bytes.shrink_to_fit();
  leaves.shrink_to_fit();
  slots = std::move(found);
  slots.shrink_to_fit();
  unsigned bits = 1;
  while ((uint64_t{1} << bits) < 2 * slots.size()) ++bits;
  shift = 64 - bits;
  index.assign(uint64_t{1} << bits, 0);
  for (size_t k = 0; k < slots.size(); ++k)
    for (uint64_t i = chain_hash(slots[k].head) >> shift;; i = (i + 1) & (index.size() - 1))
      if (index[i] == 0) {
        index[i] = static_cast<uint32_t>(k + 1);
        break;
      }
  // A filter of at least 16 bits a chain, so most one-label nodes stop at one bit.
  uint64_t words = 64;
  while (words * 64 < 16 * slots.size()) words *= 2;
  filter.resize(words);
  for (const Slot& f : slots) {
    const uint64_t h = chain_hash(f.head);
    filter[(h >> 6) & (words - 1)] |= uint64_t{1} << (h & 63);
  }
}

namespace detail {

uint64_t SuccinctSetTestPeer::chain_table_bytes(const SuccinctSet& s) noexcept {
  return s.chains_ ? s.chains_->bytes_used() : 0;
}

}  // namespace detail

}  // namespace amq
