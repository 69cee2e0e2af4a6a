// SuccinctSet::Builder: the keys sorted, their trie's size counted in one pass, then
// the trie walked in level order and written straight into the set's file (bitmaps,
// labels, tails coded or raw, directories). docs/format.md ("SuccinctSet").
#include <algorithm>
#include <cstring>
#include <optional>

#include "amq/detail/byte_io.hpp"
#include "amq/detail/prefetch.hpp"
#include "amq/format.hpp"
#include "rooms.hpp"

namespace amq {

using namespace detail::succinct;

SuccinctSet SuccinctSet::build_views(std::vector<std::string_view> keys, Options options) {
  return Builder::build(std::move(keys), options);
}

namespace {

constexpr size_t kKeysAhead = 8;  // the build's passes fetch the bytes of the key this far ahead

// The bytes each key shares with the one before it (lcp[0] = 0), for sorted, distinct
// keys: the passes below read these instead of the keys' bytes, which lie scattered in
// memory (a byte a key a level had made the walks miss the cache once per key per
// level: on american-english-insane in random order, ~70 ms each of three).
std::vector<uint64_t> common_prefixes(const std::vector<std::string_view>& keys) {
  std::vector<uint64_t> lcp(keys.size());
  for (size_t i = 1; i < keys.size(); ++i) {
    if (i + kKeysAhead < keys.size()) detail::prefetch(keys[i + kKeysAhead].data());
    const std::string_view a = keys[i - 1], b = keys[i];
    const size_t m = std::min(a.size(), b.size());
    size_t l = 0;
    uint64_t x = 0;
    for (; l + 8 <= m; l += 8) {
      x = detail::load_le64(reinterpret_cast<const std::byte*>(a.data() + l)) ^
          detail::load_le64(reinterpret_cast<const std::byte*>(b.data() + l));
      if (x != 0) break;
    }
    if (x != 0) {
      l += static_cast<size_t>(__builtin_ctzll(x)) / 8;
    } else {
      while (l < m && a[l] == b[l]) ++l;
    }
    lcp[i] = l;
  }
  return lcp;
}

// The trie's shape, key by key in sorted order: with tail compression, key i's own node
// (where its path ends) lies at depth d = max(lcp[i], lcp[i + 1]) + 1, the first at which
// no neighbour shares its bytes, and keeps the rest of the key as its tail; unless the
// next key goes on from it (lcp[i + 1] == its length), when it ends at an inner node.
// Without tails every key ends at depth = its length. The nodes new to key i are its
// prefixes longer than lcp[i], so the trie has 1 + sum(d - lcp[i]) nodes (a lone key's
// node is the root). Calls tail(i, d) for each key with a tail; returns the nodes.
template <class Tail>
uint64_t scan_keys(const std::vector<std::string_view>& keys, const std::vector<uint64_t>& lcp,
                   bool tail_compression, Tail&& tail) {
  const size_t n = keys.size();
  if (n == 0) return 1;
  if (tail_compression && n == 1) {
    tail(0, 0);
    return 1;
  }
  uint64_t nodes = 1;
  for (size_t i = 0; i < n; ++i) {
    if (i + kKeysAhead < n) detail::prefetch(keys[i + kKeysAhead].data() + lcp[i + kKeysAhead]);
    const uint64_t len = keys[i].size(), next = i + 1 < n ? lcp[i + 1] : 0;
    uint64_t d = len;
    if (tail_compression && next < len) {
      d = std::max(lcp[i], next) + 1;
      tail(i, d);
    }
    nodes += d - lcp[i];
  }
  return nodes;
}

// The trie of sorted, distinct keys in level order, handed to `out` node by node:
// tail_node(rest) for a node holding one key whose bytes from there on are its tail,
// else inner_node(is_leaf), a label(c) per child and close_node(). Its sizes come from
// scan_keys beforehand, so the walk writes straight into the file.
template <class Out>
void walk_trie(const std::vector<std::string_view>& keys, const std::vector<uint64_t>& lcp, bool tail_compression,
               Out& out) {
  struct Part {
    size_t s, e, col;  // keys [s, e) share their first `col` bytes
  };
  std::vector<Part> level, next;
  if (keys.empty()) {
    out.inner_node(false);
    out.close_node();
    return;
  }
  level.push_back({0, keys.size(), 0});
  while (!level.empty()) {
    next.clear();
    for (size_t at = 0; at < level.size(); ++at) {
      const Part& p = level[at];
      if (at + kKeysAhead < level.size()) {
        const Part& q = level[at + kKeysAhead];
        detail::prefetch(keys[q.s].data() + q.col);
      }
      if (tail_compression && p.e - p.s == 1) {
        // A single key below this node: the node is its leaf, the rest its tail.
        out.tail_node(keys[p.s].substr(p.col));
        continue;
      }
      size_t s = p.s;
      const bool is_leaf = keys[s].size() == p.col;  // sorted: the shortest key comes first
      out.inner_node(is_leaf);
      if (is_leaf) ++s;
      for (size_t j = s; j < p.e;) {
        // A child per run of keys with the same byte at col: each key past the run's
        // first shares more than col bytes with the one before.
        const size_t from = j;
        const char c = keys[from][p.col];
        ++j;
        while (j < p.e && lcp[j] > p.col) ++j;
        next.push_back({from, j, p.col + 1});
        out.label(c);
      }
      out.close_node();
    }
    std::swap(level, next);
  }
}

// Appends bits to words that start zeroed.
struct BitSink {
  uint64_t* words;
  uint64_t at = 0;
  void push(bool bit) {
    words[at >> 6] |= uint64_t{bit} << (at & 63);
    ++at;
  }
  void push_zeros(uint64_t n) { at += n; }
};

struct TrieWrite {
  BitSink louds, leaf, tail_map;
  char* labels;
  char* tails;
  const detail::TailEncoder* enc;  // null: raw tails
  void tail_node(std::string_view rest) {
    louds.push(true);
    leaf.push(true);
    tail_map.push(true);
    if (enc != nullptr) {
      char* const end = reinterpret_cast<char*>(enc->encode(rest, reinterpret_cast<uint8_t*>(tails)));
      tail_map.push_zeros(static_cast<uint64_t>(end - tails));
      tails = end;
      return;
    }
    tail_map.push_zeros(rest.size());
    if (!rest.empty()) std::memcpy(tails, rest.data(), rest.size());
    tails += rest.size();
  }
  void inner_node(bool is_leaf) {
    leaf.push(is_leaf);
    tail_map.push(true);
  }
  void label(char c) {
    *labels++ = c;
    louds.push(false);
  }
  void close_node() { louds.push(true); }
};

// Sorts the keys and drops duplicates. Each is sorted with its first sixteen bytes
// beside it as two big-endian numbers (zero-padded: a shorter head orders before a
// longer one with that prefix, and equal heads fall back to the whole keys), so most
// compares read no key bytes: views alone chased a pointer into the keys at every
// compare (american-english-insane in random order: ~175 ms; ~101 with eight bytes
// beside each key, ~78 with sixteen). Costs 32 bytes a key while it sorts.
void sort_keys(std::vector<std::string_view>& keys) {
  struct Entry {
    uint64_t head[2];
    std::string_view key;
  };
  std::vector<Entry> e(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string_view k = keys[i];
    uint64_t h[2] = {0, 0};
    const size_t m = std::min<size_t>(k.size(), 16);
    for (size_t b = 0; b < m; ++b) h[b >> 3] |= uint64_t{static_cast<uint8_t>(k[b])} << (56 - 8 * (b & 7));
    e[i] = {{h[0], h[1]}, k};
  }
  std::sort(e.begin(), e.end(), [](const Entry& a, const Entry& b) {
    if (a.head[0] != b.head[0]) return a.head[0] < b.head[0];
    if (a.head[1] != b.head[1]) return a.head[1] < b.head[1];
    return a.key.size() > 16 && b.key.size() > 16 ? a.key.substr(16) < b.key.substr(16) : a.key < b.key;
  });
  size_t out = 0;
  for (size_t i = 0; i < e.size(); ++i)
    if (out == 0 || e[i].head[0] != e[i - 1].head[0] || e[i].head[1] != e[i - 1].head[1] || e[i].key != e[i - 1].key)
      keys[out++] = e[i].key;
  keys.resize(out);
}

// The trie's size and its tails' coding, from the sorted keys.
struct TailPlan {
  uint64_t nodes = 0, tail_bytes = 0;
  std::optional<detail::TailEncoder> enc;  // none: raw tails
  alignas(8) std::byte table[detail::TailSymbols::kBytes];
};

// One pass over the sorted keys counts the trie's nodes and tail bytes; where tails
// may be coded it also takes a uniform sample of up to kSampleTails non-empty tails
// (cut to their first kSampleTailBytes) to learn their symbol table from: reservoir
// sampling with a fixed seed, so the same keys build the same file. Tails are coded
// where asked to or where that makes the set smaller: a coded byte saves 9 bits (with
// its tail bitmap bit), the table costs TailSymbols::kBytes. A set whose tails could
// not pay for the table even at 8 bytes a code learns none; else a second pass sizes
// the coded tails.
void plan_tails(const std::vector<std::string_view>& keys, const std::vector<uint64_t>& lcp,
                const SuccinctSetOptions& options, TailPlan& plan) {
  using Coding = SuccinctSetOptions::TailCoding;
  constexpr size_t kSampleTails = 32768, kSampleTailBytes = 256;
  const bool may_code = options.tail_compression && options.tail_coding != Coding::never;
  std::vector<std::string_view> sample;
  uint64_t raw_tail_bytes = 0, tails_seen = 0, rng = 0;
  plan.nodes = scan_keys(keys, lcp, options.tail_compression, [&](size_t i, uint64_t d) {
    const std::string_view rest = keys[i].substr(d);
    raw_tail_bytes += rest.size();
    if (!may_code || rest.empty()) return;
    if (++tails_seen <= kSampleTails) {
      sample.push_back(rest.substr(0, kSampleTailBytes));
    } else {
      const uint64_t j = detail::splitmix64(rng++) % tails_seen;
      if (j < kSampleTails) sample[j] = rest.substr(0, kSampleTailBytes);
    }
  });
  plan.tail_bytes = raw_tail_bytes;
  // Whether tails of `raw` bytes coded in `coded` pay for the table (always, when
  // asked to).
  auto pays = [&](uint64_t raw, uint64_t coded) {
    return options.tail_coding == Coding::always ||
           (coded < raw && 9 * (raw - coded) > 8 * detail::TailSymbols::kBytes);
  };
  if (sample.empty() || !pays(raw_tail_bytes, raw_tail_bytes / 8)) return;
  detail::TailSymbols::train(sample, plan.table);
  plan.enc.emplace(plan.table);
  uint64_t coded = 0;
  scan_keys(keys, lcp, true, [&](size_t i, uint64_t d) { coded += plan.enc->size(keys[i].substr(d)); });
  if (pays(raw_tail_bytes, coded))
    plan.tail_bytes = coded;
  else
    plan.enc.reset();
}

// The payload of the planned trie: its bit vectors, labels and tails written by a
// level-order walk, the padding zeroed, the symbol table and the directories added.
void write_payload(std::span<std::byte> payload, const Shape& shape, const std::vector<std::string_view>& keys,
                   const std::vector<uint64_t>& lcp, bool tail_compression, const TailPlan& plan) {
  // The payload is 8-aligned in the file, which is 8-aligned in memory.
  std::byte* const base = payload.data();
  const uint64_t labels_at = shape.labels_at, tails_at = shape.tails_at, tail_bytes = plan.tail_bytes;
  auto words_at = [&](int i) { return reinterpret_cast<uint64_t*>(base + shape.at[i]); };
  for (int i = 0; i < kVecCount; ++i) std::memset(words_at(i), 0, 8 * shape.words[i]);  // bits are or-ed in
  TrieWrite w{{words_at(kLouds)}, {words_at(kLeaf)}, {words_at(kTailMap)},
              reinterpret_cast<char*>(base + labels_at), reinterpret_cast<char*>(base + tails_at),
              plan.enc ? &*plan.enc : nullptr};
  walk_trie(keys, lcp, tail_compression, w);
  std::memset(base + labels_at + shape.edges, 0, tails_at - labels_at - shape.edges);  // the padding after each
  std::memset(base + tails_at + tail_bytes, 0, shape.symbols_at - tails_at - tail_bytes);
  if (plan.enc) std::memcpy(base + shape.symbols_at, plan.table, detail::TailSymbols::kBytes);
  for (int i = 0; i < kVecCount; ++i) {
    const auto dir = build_directory(i, std::span<const uint64_t>(words_at(i), shape.words[i]), shape.bits[i]);
    if (!dir.empty()) std::memcpy(words_at(i) + shape.words[i], dir.data(), 8 * dir.size());
  }
}

}  // namespace

// Built in two passes: one over the sorted keys counts the trie's nodes and tail bytes,
// which fix every size in the file (a second sizes the tails once coded, when that is
// weighed); a walk of the trie in level order then writes the bitmaps, labels and tails
// straight into the set's own memory. Peak memory is the keys, the set and 8 bytes a
// key (lcp): a tails string, bit vectors and a file image beside it had made a
// tail-heavy build peak at ~3x the set.
SuccinctSet SuccinctSet::Builder::build(std::vector<std::string_view> keys, Options options) {
  sort_keys(keys);
  const std::vector<uint64_t> lcp = common_prefixes(keys);
  TailPlan plan;
  plan_tails(keys, lcp, options, plan);
  const bool is_coded = plan.enc.has_value();
  const uint64_t n = keys.size();
  const Shape shape = shape_of(n, plan.nodes, plan.tail_bytes, is_coded);
  detail::ByteWriter params;
  params.u64(n);
  params.u64(plan.nodes);
  params.u64(plan.tail_bytes);
  if (is_coded) params.u64(kTailsCoded);
  const uint64_t payload_len = shape.payload_bytes;
  auto storage = detail::FileStorage::allocate(container_size(params.buffer().size(), payload_len), kHugeFrom);
  write_container_to(storage->writable(), Kind::succinct, params.buffer(), payload_len,
                     [&](std::span<std::byte> payload) {
                       write_payload(payload, shape, keys, lcp, options.tail_compression, plan);
                     },
                     options.key_type);
  return Loader::from_storage(std::move(storage), false);
}

}  // namespace amq
