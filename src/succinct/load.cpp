// SuccinctSet::Loader: a file parsed and validated part by part (params, bit vectors
// and directories, label and tail bytes, the trie's shape), then the tables built on
// load and the kernels chosen. Every count is bounded by the payload before anything
// is derived from it, so a hostile file is an amq::Error, never a crash or a hang.
#include <string>

#include "amq/detail/byte_io.hpp"
#include "amq/error.hpp"
#include "amq/format.hpp"
#include "descent.hpp"

namespace amq {

using namespace detail::succinct;

namespace {

Error corrupt(const std::string& m) { return Error(Errc::corrupt, "succinct set: " + m); }

}  // namespace

SuccinctSet SuccinctSet::load(std::span<const std::byte> file) {
  return Loader::from_storage(detail::FileStorage::copy(file, kHugeFrom), true);
}

SuccinctSet SuccinctSet::open(const std::string& path, bool verify_checksum) {
  auto s = detail::FileStorage::map(path);
  try {
    return Loader::from_storage(std::move(s), verify_checksum);
  } catch (const Error& e) {
    throw Error(e.code(), path + ": " + e.what());
  }
}

SuccinctSet SuccinctSet::Loader::from_storage(std::shared_ptr<const detail::FileStorage> storage,
                                              bool verify_checksum) {
  const Container c = parse_container(storage->bytes(), Kind::succinct, verify_checksum);
  SuccinctSet s{Raw{}};
  bool coded = false;
  parse_params(s, c.params, c.payload.size(), coded);
  const Shape shape = shape_of(s.n_, s.nodes_, s.tail_bytes_, coded);
  if (c.payload.size() != shape.payload_bytes)
    throw corrupt("payload of " + std::to_string(c.payload.size()) + " bytes, the counts need " +
                  std::to_string(shape.payload_bytes));
  map_bit_vectors(s, c.payload.data(), shape);
  map_bytes(s, c.payload.data(), shape, coded);
  s.payload_bytes_ = c.payload.size();
  s.storage_ = std::move(storage);
  // Tail bitmap bits per node, 16.16 fixed point (capped: it only aims prefetches).
  s.tail_ratio_ = s.tail_bytes_ / s.nodes_ >= 63 ? uint64_t{64} << 16 : ((s.nodes_ + s.tail_bytes_) << 16) / s.nodes_;
  validate_trie(s);
  // contains() fetches the likely tail once this few key bytes are left: about what a
  // tail holds (its bytes, or ~2 a code), plus 2, within 4-32 (docs/decisions/0020).
  if (s.tails_ > 0) s.tail_reach_ = std::clamp<uint64_t>((coded ? 2 : 1) * s.tail_bytes_ / s.tails_ + 2, 4, 32);
  const Levels levels = walk_levels(s);
  LevelCounts::build_bottom(s, levels.last, levels.first_kept);
  LevelCounts::build_top_counts(s, levels.head);
  LevelCounts::build_mid(s);
  TopTables::build(s, levels);
  Chains::find_chains(s);
  select_kernels(s);
  return s;
}

void SuccinctSet::Loader::parse_params(SuccinctSet& s, std::span<const std::byte> params, uint64_t payload,
                                       bool& coded) {
  detail::ByteReader p(params, "succinct set params");
  s.n_ = p.u64();
  s.nodes_ = p.u64();
  s.tail_bytes_ = p.u64();
  // A fourth field marks coded tails (files with raw tails have three).
  coded = p.remaining() > 0;
  if (coded && p.u64() != kTailsCoded) throw Error(Errc::corrupt, "succinct set: unknown tail coding");
  p.expect_end();
  if (s.nodes_ == 0 || s.nodes_ > payload * 4 + 1 || s.n_ > s.nodes_ || s.tail_bytes_ > payload)
    throw corrupt("impossible counts (" + std::to_string(s.n_) + " keys, " + std::to_string(s.nodes_) + " nodes, " +
                  std::to_string(s.tail_bytes_) + " tail bytes) for a payload of " + std::to_string(payload) +
                  " bytes");
}

void SuccinctSet::Loader::map_bit_vectors(SuccinctSet& s, const std::byte* payload, const Shape& shape) {
  // The payload is 8-aligned in the file, and the file is 8-aligned in memory.
  for (int i = 0; i < kVecCount; ++i) {
    const uint64_t* at = reinterpret_cast<const uint64_t*>(payload + shape.at[i]);
    const std::span<const uint64_t> words(at, shape.words[i]), dir(at + shape.words[i], shape.dir_words[i]);
    if (!verify_directory(i, words, shape.bits[i], dir))
      throw corrupt(std::string(kVecName[i]) + ": rank/select directory does not match the bits");
    uint64_t ones = 0;
    if (i == kLouds) {
      s.louds_ = LoudsBits(words, shape.bits[i], dir);
      ones = s.louds_.ones();
    } else if (i == kLeaf) {
      s.leaf_ = LeafBits(words, shape.bits[i], dir, false);
      ones = s.leaf_.ones();
    } else {
      s.tail_map_ = TailBits(words, shape.bits[i], dir);
      ones = s.tail_map_.ones();
    }
    if (ones != shape.ones[i])
      throw corrupt(std::string(kVecName[i]) + " has " + std::to_string(ones) + " ones, expected " +
                    std::to_string(shape.ones[i]));
  }
}

void SuccinctSet::Loader::map_bytes(SuccinctSet& s, const std::byte* payload, const Shape& shape, bool coded) {
  s.labels_ = reinterpret_cast<const uint8_t*>(payload + shape.labels_at);
  s.tail_ = reinterpret_cast<const uint8_t*>(payload + shape.tails_at);
  s.labels_end_ = reinterpret_cast<const uint8_t*>(payload) + shape.payload_bytes;  // the end of the payload
  for (uint64_t i = shape.edges; i < pad8(shape.edges); ++i)
    if (s.labels_[i] != 0) throw corrupt("non-zero padding after the labels");
  for (uint64_t i = s.tail_bytes_; i < pad8(s.tail_bytes_); ++i)
    if (s.tail_[i] != 0) throw corrupt("non-zero padding after the tails");
  if (coded) {
    const std::byte* table = payload + shape.symbols_at;
    if (!detail::TailSymbols::valid(table)) throw corrupt("invalid tail symbol table");
    s.syms_ = detail::TailSymbols(table);
  }
}

// Level starts: the walk of the leftmost boundary, for rank(); and where the tables of
// the top levels end.
SuccinctSet::Loader::Levels SuccinctSet::Loader::walk_levels(SuccinctSet& s) {
  Levels out;
  s.levels_ = 0;
  s.level_leaf_sum_ = 0;
  out.sub = s.nodes_;
  bool narrow = true;  // the levels below the top three are narrow so far
  // The last levels' first nodes, for build_bottom (which uses at most `keep` levels;
  // a hostile trie may have a level a node).
  const uint64_t keep = LevelCounts::bottom_budget(s) + 1;
  for (uint64_t a = 0;;) {
    if (out.head.size() <= kCountedTopLevels) out.head.push_back(a);
    if (out.last.size() == 2 * keep) {
      out.last.erase(out.last.begin(), out.last.begin() + static_cast<std::ptrdiff_t>(keep));
      out.first_kept += keep;
    }
    out.last.push_back(a);
    s.level_leaf_sum_ += s.leaf_.rank1(a);
    ++s.levels_;
    const uint64_t level = a;
    a = s.child_boundary(a);
    if (s.levels_ == kTopLevels) out.top = a;
    // Below them, narrow levels join too: the long shared prefixes of URLs or paths
    // are chains of one node a level, a select each without the table.
    // (At most 1/64 of the payload, for small sets.)
    if (s.levels_ > kTopLevels && narrow) {
      narrow = a - level <= kNarrowLevel && a <= kTopNodesMax && 2 * a <= s.payload_bytes_ / 64;
      if (narrow) out.top = a;
    }
    if (s.levels_ == kSubLevels) out.sub = a;
    if (a >= s.nodes_) break;
  }
  out.last.push_back(s.nodes_);
  if (out.head.size() <= kCountedTopLevels) out.head.push_back(s.nodes_);
  return out;
}

void SuccinctSet::Loader::select_kernels(SuccinctSet& s) noexcept {
  s.contains_fn_ = Descent::select(s.chain_filter_ != nullptr);
  s.batch_fn_ = Batch::select(s.chain_filter_ != nullptr);
}

// One pass over the nodes: every edge points to a later node (so the trie is a tree
// and every walk ends), labels of a node strictly increase (so order is sorted),
// every node without children ends a key, and only such nodes have tails.
void SuccinctSet::Loader::validate_trie(SuccinctSet& self) {
  if (!self.louds_.get(self.louds_.size() - 1)) throw corrupt("label bitmap does not end with a node");
  if (!self.tail_map_.get(0)) throw corrupt("tail bitmap does not start with a node");
  const uint64_t nw = (self.louds_.size() + 63) / 64;
  const uint64_t* words = self.louds_.words();
  uint64_t v = 0, start = 0, tails = 0;
  uint64_t t_at = 0;  // position of node v's 1 in the tail bitmap
  for (uint64_t w = 0; w < nw; ++w) {
    for (uint64_t x = words[w]; x; x &= x - 1) {
      const uint64_t q = (w << 6) + static_cast<uint64_t>(__builtin_ctzll(x));
      const uint64_t k = q - start, first = start - v;  // labels [first, first + k)
      if (k > 0) {
        if (first + 1 <= v) throw corrupt("node " + std::to_string(v) + " has an edge pointing backwards");
        for (uint64_t i = 1; i < k; ++i)
          if (self.labels_[first + i] <= self.labels_[first + i - 1])
            throw corrupt("labels of node " + std::to_string(v) + " are not strictly increasing");
      }
      if (!self.leaf_.get(v) && k == 0 && !(v == 0 && self.n_ == 0))
        throw corrupt("node " + std::to_string(v) + " has neither children nor a key");
      const uint64_t t_next = self.tail_map_.next_one(t_at + 1);
      if (t_next - t_at > 1) {
        if (k > 0) throw corrupt("node " + std::to_string(v) + " has children and a tail");
        if (!self.syms_.empty() && !self.syms_.valid_codes(self.tail_ + (t_at - v), t_next - t_at - 1))
          throw corrupt("the tail of node " + std::to_string(v) + " is not a valid coding");
        ++tails;
      }
      t_at = t_next;
      start = q + 1;
      ++v;
    }
  }
  self.tails_ = tails;
}}  // namespace amq
