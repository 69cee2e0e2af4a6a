// SuccinctSet: building the LOUDS trie, the container payload, validation on load,
// and the queries. docs/format.md ("SuccinctSet") describes the payload.
#include "amq/succinct_set.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <string>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "amq/detail/byte_io.hpp"
#include "amq/detail/prefetch.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "amq/format.hpp"

namespace amq {

namespace {
// Owned copies of large files live in 2 MiB-aligned memory marked for transparent huge
// pages: a lookup touches a few lines spread over the whole trie, and with 4 KiB pages
// most of them also miss the TLB.
constexpr size_t kHugePage = size_t{2} << 20;
struct FreeDeleter {
  void operator()(uint64_t* p) const noexcept { std::free(p); }
};
}  // namespace

struct SuccinctSet::Storage {
  std::unique_ptr<uint64_t[], FreeDeleter> owned;  // an aligned copy of the file (load, build)
  MappedFile mapped;  // or the mapping (open)
  std::span<const std::byte> file;
  bool is_mapped = false;
};

namespace {

constexpr uint64_t pad8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

// The three bit vectors of the payload, in file order. The label bitmap and the tail
// bitmap are only selected on, the leaf bitmap only ranked.
enum Vec { kLouds, kLeaf, kTailMap, kVecCount };
constexpr const char* kVecName[kVecCount] = {"label bitmap", "leaf bitmap", "tail bitmap"};
using LeafBits = detail::RankSelect<32>;
using LoudsBits = detail::SelectBits<7, true>;
using TailBits = detail::SelectBits<9, false>;

constexpr uint64_t kTopLevels = 3;        // contains() has the label starts of these levels' nodes
constexpr uint64_t kTopNodesMax = 4096;   // but of at most this many nodes
constexpr uint64_t kNarrowLevel = 64;     // and of the levels below them of at most this many nodes
constexpr uint64_t kSubLevels = 5;        // finer select samples down to this level
constexpr uint64_t kSubShift = 5;         // one per 32 nodes
constexpr uint64_t kSubNodesMax = 65536;  // for at most this many nodes
constexpr uint64_t kLoudsSampleMask = (uint64_t{1} << LoudsBits::kSampleShift) - 1;
constexpr uint64_t kNoSample = ~uint64_t{0};  // select_start's csi when no sample was loaded ahead
constexpr uint64_t kTailSampleMask = (uint64_t{1} << TailBits::kSampleShift) - 1;
constexpr uint64_t kTailsCoded = 1;  // params' fourth field: the tails are coded (TailSymbols)

uint64_t directory_words(int vec, uint64_t bits, uint64_t ones) {
  if (vec == kLeaf) return LeafBits::shape(bits, ones, false).directory_words();
  return vec == kLouds ? LoudsBits::directory_words(ones) : TailBits::directory_words(ones);
}

std::vector<uint64_t> build_directory(int vec, std::span<const uint64_t> words, uint64_t bits) {
  if (vec == kLeaf) return LeafBits::build_directory(words, bits, false);
  return vec == kLouds ? LoudsBits::build_directory(words, bits) : TailBits::build_directory(words, bits);
}

bool verify_directory(int vec, std::span<const uint64_t> words, uint64_t bits, std::span<const uint64_t> dir) {
  if (vec == kLeaf) return LeafBits::verify_directory(words, bits, dir, false);
  return vec == kLouds ? LoudsBits::verify_directory(words, bits, dir) : TailBits::verify_directory(words, bits, dir);
}

// The payload's layout, all from the three counts: each bit vector's words and then its
// directory, the labels (one per edge) and the tails, each padded to 8 bytes.
struct Shape {
  uint64_t bits[kVecCount];
  uint64_t ones[kVecCount];
  uint64_t words[kVecCount], dir_words[kVecCount];
  uint64_t at[kVecCount];  // byte offset of each vector's words in the payload
  uint64_t edges, labels_at, tails_at, symbols_at, payload_bytes;
};

// `coded`: the tails are coded, and the symbol table follows them.
Shape shape_of(uint64_t n, uint64_t nodes, uint64_t tail_bytes, bool coded) {
  Shape s{{2 * nodes - 1, nodes, nodes + tail_bytes}, {nodes, n, nodes}, {}, {}, {}, nodes - 1, 0, 0, 0, 0};
  uint64_t at = 0;
  for (int i = 0; i < kVecCount; ++i) {
    s.words[i] = (s.bits[i] + 63) / 64;
    s.dir_words[i] = directory_words(i, s.bits[i], s.ones[i]);
    s.at[i] = at;
    at += 8 * (s.words[i] + s.dir_words[i]);
  }
  s.labels_at = at;
  s.tails_at = at + pad8(s.edges);
  s.symbols_at = s.tails_at + pad8(tail_bytes);
  s.payload_bytes = s.symbols_at + (coded ? detail::TailSymbols::kBytes : 0);
  return s;
}

int compare_bytes(std::string_view a, std::span<const std::byte> b) noexcept {
  return a.compare(as_chars(b));
}

// The finer select starts built on load: for i < count, select1(j(i)) minus the
// position of j(i)'s sample, as 16-bit offsets (0 for a j(i) past the last one); null
// when one does not fit.
template <class Bits, class J>
std::shared_ptr<const std::vector<uint16_t>> select_offsets(const Bits& bits, uint64_t count, J&& j_of) {
  auto out = std::make_shared<std::vector<uint16_t>>(count);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t j = j_of(i);
    const uint64_t off = j < bits.ones() ? bits.select1(j) - bits.sample(j) : 0;
    if (off > 0xffff) return nullptr;
    (*out)[i] = static_cast<uint16_t>(off);
  }
  return out;
}

// A chain's head node hashed: the filter's bit (low 12+ bits) and the table's slot (high bits).
[[gnu::always_inline]] inline uint64_t chain_hash(uint64_t v) noexcept { return (v + 1) * 0x9E3779B97F4A7C15ull; }

constexpr uint64_t kCountedTopLevels = 8;  // build_top_counts looks at most this deep
constexpr uint64_t kChainMin = 8;    // a chain of fewer nodes stays a select a node
constexpr uint64_t kChainKeys = 16;  // nor is one kept that fewer keys pass through

}  // namespace

// The long chains: node `head` has one label and no key ends there, nor at the next
// len - 1 nodes down; the len labels on the way lead to node `end`.
struct SuccinctSet::Chains {
  struct Slot {
    uint64_t head = npos, end = 0, end_start = 0, at = 0, len = 0;
  };
  std::vector<uint64_t> filter;  // bit chain_hash(head) mod its size, for every head
  std::vector<Slot> slots;       // open addressing from chain_hash(head) >> shift
  std::string bytes;             // the chains' labels, slot.at .. slot.at + len
  unsigned shift = 64;
  const Slot* find(uint64_t v) const noexcept {
    const uint64_t mask = slots.size() - 1;
    for (uint64_t i = chain_hash(v) >> shift;; i = (i + 1) & mask) {
      if (slots[i].head == v) return &slots[i];
      if (slots[i].head == npos) return nullptr;
    }
  }
};

SuccinctSet::SuccinctSet() : SuccinctSet(build_views({}, {})) {}

std::shared_ptr<const SuccinctSet::Storage> SuccinctSet::copy_storage(std::span<const std::byte> file) {
  auto s = allocate_storage(file.size());
  if (!file.empty()) std::memcpy(s->owned.get(), file.data(), file.size());
  return s;
}

std::shared_ptr<SuccinctSet::Storage> SuccinctSet::allocate_storage(size_t size) {
  auto s = std::make_shared<Storage>();
  const size_t words = std::max<size_t>((size + 7) / 8, 1);
  void* mem = nullptr;
  if (words * 8 >= kHugePage / 2) {
    const size_t bytes = (words * 8 + kHugePage - 1) & ~(kHugePage - 1);
    mem = std::aligned_alloc(kHugePage, bytes);
#if defined(MADV_HUGEPAGE)
    if (mem) ::madvise(mem, bytes, MADV_HUGEPAGE);
#endif
  } else {
    mem = std::malloc(words * 8);
  }
  if (!mem) throw std::bad_alloc();
  s->owned.reset(static_cast<uint64_t*>(mem));
  s->owned[words - 1] = 0;  // the padding after the last byte
  s->file = std::span<const std::byte>(reinterpret_cast<const std::byte*>(s->owned.get()), size);
  return s;
}

bool SuccinctSet::is_mapped() const noexcept { return storage_ && storage_->is_mapped; }
std::span<const std::byte> SuccinctSet::bytes() const noexcept { return storage_->file; }

// ---- build -------------------------------------------------------------------

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

}  // namespace

SuccinctSet SuccinctSet::build_views(std::vector<std::string_view> keys, Options options) {
  sort_keys(keys);
  // Built in two passes: one over the sorted keys counts the trie's nodes and tail
  // bytes, which fix every size in the file (a second sizes the tails once coded, when
  // that is weighed); a walk of the trie in level order then writes the bitmaps,
  // labels and tails straight into the set's own memory. Peak memory is the keys, the
  // set and 8 bytes a key (lcp): a tails string, bit vectors and a file image beside
  // it had made a tail-heavy build peak at ~3x the set.
  using Coding = Options::TailCoding;
  const std::vector<uint64_t> lcp = common_prefixes(keys);
  // The nodes and tail bytes; and, where tails may be coded, a uniform sample of up to
  // kSampleTails non-empty tails (cut to their first kSampleTailBytes) to learn their
  // symbol table from: reservoir sampling with a fixed seed, so the same keys build the
  // same file.
  constexpr size_t kSampleTails = 32768, kSampleTailBytes = 256;
  const bool may_code = options.tail_compression && options.tail_coding != Coding::never;
  std::vector<std::string_view> sample;
  uint64_t raw_tail_bytes = 0, tails_seen = 0, rng = 0;
  const uint64_t nodes = scan_keys(keys, lcp, options.tail_compression, [&](size_t i, uint64_t d) {
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
  // Tails coded with a symbol table learnt from a sample of them, where asked to or
  // where that makes the set smaller: a coded byte saves 9 bits (with its tail bitmap
  // bit), the table costs TailSymbols::kBytes. A set whose tails could not pay for the
  // table even at 8 bytes a code learns none.
  constexpr uint64_t kTable = detail::TailSymbols::kBytes;
  alignas(8) std::byte table[kTable];
  std::optional<detail::TailEncoder> enc;
  uint64_t tail_bytes = raw_tail_bytes;
  // Whether tails of `raw` bytes coded in `coded` pay for the table (always, when
  // asked to).
  auto pays = [&](uint64_t raw, uint64_t coded) {
    return options.tail_coding == Coding::always || (coded < raw && 9 * (raw - coded) > 8 * kTable);
  };
  if (!sample.empty() && pays(raw_tail_bytes, raw_tail_bytes / 8)) {
    detail::TailSymbols::train(sample, table);
    enc.emplace(table);
    uint64_t coded = 0;
    scan_keys(keys, lcp, true, [&](size_t i, uint64_t d) { coded += enc->size(keys[i].substr(d)); });
    if (pays(raw_tail_bytes, coded))
      tail_bytes = coded;
    else
      enc.reset();
  }
  const bool is_coded = enc.has_value();
  const uint64_t n = keys.size();
  const Shape shape = shape_of(n, nodes, tail_bytes, is_coded);
  detail::ByteWriter params;
  params.u64(n);
  params.u64(nodes);
  params.u64(tail_bytes);
  if (is_coded) params.u64(kTailsCoded);
  const uint64_t payload_len = shape.payload_bytes, labels_at = shape.labels_at, tails_at = shape.tails_at;
  auto storage = allocate_storage(container_size(params.buffer().size(), payload_len));
  const std::span<std::byte> file(reinterpret_cast<std::byte*>(storage->owned.get()), storage->file.size());
  write_container_to(file, Kind::succinct, params.buffer(), payload_len, [&](std::span<std::byte> payload) {
    // The payload is 8-aligned in the file, which is 8-aligned in memory.
    std::byte* const base = payload.data();
    auto words_at = [&](int i) { return reinterpret_cast<uint64_t*>(base + shape.at[i]); };
    for (int i = 0; i < kVecCount; ++i) std::memset(words_at(i), 0, 8 * shape.words[i]);  // bits are or-ed in
    TrieWrite w{{words_at(kLouds)}, {words_at(kLeaf)}, {words_at(kTailMap)},
                reinterpret_cast<char*>(base + labels_at), reinterpret_cast<char*>(base + tails_at),
                is_coded ? &*enc : nullptr};
    walk_trie(keys, lcp, options.tail_compression, w);
    std::memset(base + labels_at + shape.edges, 0, tails_at - labels_at - shape.edges);  // the padding after each
    std::memset(base + tails_at + tail_bytes, 0, shape.symbols_at - tails_at - tail_bytes);
    if (is_coded) std::memcpy(base + shape.symbols_at, table, kTable);
    for (int i = 0; i < kVecCount; ++i) {
      const auto dir = build_directory(i, std::span<const uint64_t>(words_at(i), shape.words[i]), shape.bits[i]);
      if (!dir.empty()) std::memcpy(words_at(i) + shape.words[i], dir.data(), 8 * dir.size());
    }
  }, options.key_type);
  return from_storage(std::move(storage), false);
}

// ---- load --------------------------------------------------------------------

SuccinctSet SuccinctSet::load(std::span<const std::byte> file) { return from_storage(copy_storage(file), true); }

SuccinctSet SuccinctSet::open(const std::string& path, bool verify_checksum) {
  auto s = std::make_shared<Storage>();
  s->mapped = MappedFile(path);
  s->file = s->mapped.bytes();
  s->is_mapped = true;
  try {
    return from_storage(std::move(s), verify_checksum);
  } catch (const Error& e) {
    throw Error(e.code(), path + ": " + e.what());
  }
}

SuccinctSet SuccinctSet::from_storage(std::shared_ptr<const Storage> storage, bool verify_checksum) {
  const Container c = parse_container(storage->file, Kind::succinct, verify_checksum);
  detail::ByteReader p(c.params, "succinct set params");
  SuccinctSet s{Raw{}};
  s.n_ = p.u64();
  s.nodes_ = p.u64();
  s.tail_bytes_ = p.u64();
  // A fourth field marks coded tails (files with raw tails have three).
  const bool coded = p.remaining() > 0;
  if (coded && p.u64() != kTailsCoded) throw Error(Errc::corrupt, "succinct set: unknown tail coding");
  p.expect_end();
  const uint64_t payload = c.payload.size();
  auto corrupt = [](const std::string& m) { return Error(Errc::corrupt, "succinct set: " + m); };
  // Every count is bounded by the payload before anything is derived from it.
  if (s.nodes_ == 0 || s.nodes_ > payload * 4 + 1 || s.n_ > s.nodes_ || s.tail_bytes_ > payload)
    throw corrupt("impossible counts (" + std::to_string(s.n_) + " keys, " + std::to_string(s.nodes_) +
                  " nodes, " + std::to_string(s.tail_bytes_) +
                  " tail bytes) for a payload of " + std::to_string(payload) + " bytes");
  const Shape shape = shape_of(s.n_, s.nodes_, s.tail_bytes_, coded);
  const uint64_t edges = shape.edges;
  if (payload != shape.payload_bytes)
    throw corrupt("payload of " + std::to_string(payload) + " bytes, the counts need " +
                  std::to_string(shape.payload_bytes));

  // The payload is 8-aligned in the file, and the file is 8-aligned in memory.
  for (int i = 0; i < kVecCount; ++i) {
    const uint64_t* at = reinterpret_cast<const uint64_t*>(c.payload.data() + shape.at[i]);
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
  s.labels_ = reinterpret_cast<const uint8_t*>(c.payload.data() + shape.labels_at);
  s.tail_ = reinterpret_cast<const uint8_t*>(c.payload.data() + shape.tails_at);
  s.labels_end_ = reinterpret_cast<const uint8_t*>(c.payload.data()) + shape.payload_bytes;  // the end of the payload
  for (uint64_t i = edges; i < pad8(edges); ++i)
    if (s.labels_[i] != 0) throw corrupt("non-zero padding after the labels");
  for (uint64_t i = s.tail_bytes_; i < pad8(s.tail_bytes_); ++i)
    if (s.tail_[i] != 0) throw corrupt("non-zero padding after the tails");
  if (coded) {
    const std::byte* table = c.payload.data() + shape.symbols_at;
    if (!detail::TailSymbols::valid(table)) throw corrupt("invalid tail symbol table");
    s.syms_ = detail::TailSymbols(table);
  }
  if (!s.louds_.get(s.louds_.size() - 1)) throw corrupt("label bitmap does not end with a node");
  if (!s.tail_map_.get(0)) throw corrupt("tail bitmap does not start with a node");
  s.payload_bytes_ = payload;
  s.storage_ = std::move(storage);
  // Tail bitmap bits per node, 16.16 fixed point (capped: it only aims prefetches).
  s.tail_ratio_ = s.tail_bytes_ / s.nodes_ >= 63 ? uint64_t{64} << 16 : ((s.nodes_ + s.tail_bytes_) << 16) / s.nodes_;
  s.validate_trie();
  // contains() fetches the likely tail once this few key bytes are left: about what a
  // tail holds (its bytes, or ~2 a code), plus 2, within 4-32 (docs/decisions/0020).
  if (s.tails_ > 0)
    s.tail_reach_ = std::clamp<uint64_t>((coded ? 2 : 1) * s.tail_bytes_ / s.tails_ + 2, 4, 32);
  // Level starts: the walk of the leftmost boundary, for rank().
  s.levels_ = 0;
  s.level_leaf_sum_ = 0;
  uint64_t top = 0;  // the first node below the top table's levels
  uint64_t sub = s.nodes_;  // the first node below the top kSubLevels levels
  bool narrow = true;  // the levels below the top three are narrow so far
  // The last levels' first nodes, for build_bottom (which uses at most `keep` levels;
  // a hostile trie may have a level a node).
  const uint64_t keep = s.bottom_budget() + 1;
  std::vector<uint64_t> level_starts;
  uint64_t first_kept = 0;  // the level of level_starts[0]
  std::vector<uint64_t> head;  // the first levels' starts, for build_top_counts
  for (uint64_t a = 0;;) {
    if (head.size() <= kCountedTopLevels) head.push_back(a);
    if (level_starts.size() == 2 * keep) {
      level_starts.erase(level_starts.begin(), level_starts.begin() + static_cast<std::ptrdiff_t>(keep));
      first_kept += keep;
    }
    level_starts.push_back(a);
    s.level_leaf_sum_ += s.leaf_.rank1(a);
    ++s.levels_;
    const uint64_t level = a;
    a = s.child_boundary(a);
    if (s.levels_ == kTopLevels) top = a;
    // Below them, narrow levels join too: the long shared prefixes of URLs or paths
    // are chains of one node a level, a select each without the table.
    // (At most 1/64 of the payload, for small sets.)
    if (s.levels_ > kTopLevels && narrow) {
      narrow = a - level <= kNarrowLevel && a <= kTopNodesMax && 2 * a <= payload / 64;
      if (narrow) top = a;
    }
    if (s.levels_ == kSubLevels) sub = a;
    if (a >= s.nodes_) break;
  }
  level_starts.push_back(s.nodes_);
  if (head.size() <= kCountedTopLevels) head.push_back(s.nodes_);
  s.build_bottom(level_starts, first_kept);
  s.build_top_counts(head);
  // Where the labels of each node of the top levels start, so contains() skips their
  // selects (every lookup passes through them).
  // 16-bit entries: the table stops at the first start beyond 65535. It is counted in
  // size_in_bytes().
  if (top == 0 || top > s.nodes_) top = s.nodes_;
  top = std::min(top, kTopNodesMax);
  auto starts = std::make_shared<std::vector<uint16_t>>();
  starts->reserve(top);
  for (uint64_t v = 0; v < top; ++v) {
    const uint64_t st = s.node_start(v);
    if (st > 0xffff) break;
    starts->push_back(static_cast<uint16_t>(st));
  }
  s.top_starts_ = starts->data();
  s.top_nodes_ = starts->size();
  s.top_ = std::move(starts);
  s.payload_bytes_ += 2 * s.top_nodes_;
  // Finer select starts for levels kTopLevels .. kSubLevels - 1, whose wide nodes
  // leave many zeros between the 128-node samples: a third of level 3's selects and a
  // sixth of level 4's ran past the six words select1_from counts without a branch
  // (on american-english-insane), into a mispredicted loop. One per 32 nodes, as a
  // 16-bit offset from its sample (at most 96 nodes of at most 257 bits lie between,
  // so it fits in any trie load accepts; checked anyway). Counted in size_in_bytes().
  sub = std::min({sub, s.nodes_, kSubNodesMax});
  if (sub > s.top_nodes_) {
    s.sub_ = select_offsets(s.louds_, (sub + 31) >> kSubShift, [](uint64_t q) { return q << kSubShift; });
    if (s.sub_) {
      s.sub_starts_ = s.sub_->data();
      s.sub_nodes_ = sub;
      s.payload_bytes_ += 2 * s.sub_->size();
    }
  }
  // Tail selects start half-way between the tail bitmap's samples where that is
  // nearer: 512 nodes and their tails span ~12 words on word lists, past the six a
  // select counts without a branch. One 16-bit offset per sample (counted in
  // size_in_bytes()); skipped if the tails of 256 nodes pass 64 KiB.
  s.tail_mid_ = select_offsets(s.tail_map_, TailBits::samples(s.nodes_), [](uint64_t g) {
    return (g << TailBits::kSampleShift) + (uint64_t{1} << (TailBits::kSampleShift - 1));
  });
  if (s.tail_mid_) {
    s.tail_mids_ = s.tail_mid_->data();
    s.payload_bytes_ += 2 * s.tail_mid_->size();
  }
  // The first two levels as 256-bit label maps: the root's, then one per root child
  // (all zero for a childless one). contains() takes the first two bytes of a key in
  // two popcounts instead of two label searches.
  const uint64_t k0 = s.louds_.next_one(0);
  if (s.n_ > 0 && k0 > 0 && k0 < s.top_nodes_) {
    auto jump = std::make_shared<std::vector<uint64_t>>(4 * (k0 + 1));
    for (uint64_t j = 0; j < k0; ++j) {
      const uint8_t c = s.labels_[j];
      (*jump)[c >> 6] |= uint64_t{1} << (c & 63);
      const uint64_t r = j + 1, st = s.top_starts_[r], k = s.louds_.next_one(st) - st;
      for (uint64_t i = 0; i < k; ++i) {
        const uint8_t c1 = s.labels_[st - r + i];
        (*jump)[4 * (j + 1) + (c1 >> 6)] |= uint64_t{1} << (c1 & 63);
      }
    }
    s.jump_maps_ = jump->data();
    s.payload_bytes_ += 8 * jump->size();
    s.jump_ = std::move(jump);
  }
  s.find_chains();
  return s;
}

// The deep levels are narrow (american-english-insane: 60 levels, the last 40 of them
// with fewer than 400 nodes together), yet rank() walked a cut through every one of
// them, a select and a rank a level, and key_at() did so for each child it weighed.
// Counts for every cut of the deepest levels, as many as fit in max(64, nodes / 256)
// entries, end those walks at the first such level: the counts of level l are built
// from level l + 1's, bottom up (a select and a rank per entry).
// `starts`: the first nodes of levels first_kept, first_kept + 1, ... to the last
// level, then nodes_ (the tail of the list of every level's).
void SuccinctSet::build_bottom(const std::vector<uint64_t>& starts, uint64_t first_kept) {
  if (n_ > UINT32_MAX) return;
  const uint64_t budget = bottom_budget();
  const uint64_t last = starts.size() - 1;  // index i: level first_kept + i, nodes [starts[i], starts[i + 1])
  uint64_t first = last, entries = 0;
  while (first > 0 && entries + (starts[first] - starts[first - 1]) + 1 <= budget) {
    --first;
    entries += starts[first + 1] - starts[first] + 1;
  }
  if (first == last) return;
  const std::span<const uint64_t> kept = std::span(starts).subspan(first);
  uint64_t below = 0;  // these levels are the last: the sum is over them alone
  for (size_t i = 0; i + 1 < kept.size(); ++i) below += leaf_.rank1(kept[i]);
  auto b = new_counts(first_kept + first, kept, below);
  for (uint64_t i = b->offset.size(); i-- > 0;) count_from_next_level(*b, i);
  payload_bytes_ += b->bytes();
  bottom_level_ = b->level;
  bottom_ = std::move(b);
}

// The top levels' counts, 1 .. t while they fit top_budget() entries (insane: levels
// 1 and 2, 1,852 entries; american-english: level 1, 54):
// key_at() searches the children of each node on its way down, and a probe among the
// wide top nodes' children is otherwise a walk of a pair of cuts through some 20
// levels. Level t's cuts are walked down together to the deep levels' counts, the
// levels above built from it. `starts`: the first levels' first nodes (and the next
// level's after the last).
void SuccinctSet::build_top_counts(const std::vector<uint64_t>& starts) {
  if (!bottom_ || starts.size() < 3) return;
  const uint64_t budget = top_budget();
  uint64_t end = 1, entries = 0;  // levels [1, end)
  while (end + 1 < starts.size() && end < bottom_level_ &&
         entries + (starts[end + 1] - starts[end]) + 1 <= budget) {
    entries += starts[end + 1] - starts[end] + 1;
    ++end;
  }
  if (end == 1) return;
  // Below level 1 lie all levels but the root's, whose start (0) has no leaves before it.
  auto t = new_counts(1, std::span(starts).subspan(1, end), level_leaf_sum_);
  // Level end - 1: every cut walked down to the deep levels' counts, together (equal
  // cuts once), within a budget of steps (a few ms of a load; insane takes ~34,000).
  const uint64_t last = end - 1, m = starts[end] - starts[last];
  std::vector<uint64_t> cut(m + 1), raw(m + 1, 0);
  for (uint64_t c = 0; c <= m; ++c) cut[c] = starts[last] + c;
  uint64_t steps = uint64_t{1} << 20;
  for (uint64_t l = last; cut[0] != cut[m]; ++l) {
    if (l >= bottom_level_) {
      for (uint64_t c = 0; c <= m; ++c) raw[c] += bottom_->at(l, cut[c] - bottom_->start[l - bottom_level_]);
      break;
    }
    for (uint64_t c = 0; c <= m; ++c) raw[c] += leaf_.rank1(cut[c]);
    if (l + 1 >= levels_ || cut[0] >= nodes_) break;
    uint64_t prev = npos, next = 0;
    for (uint64_t c = 0; c <= m; ++c) {
      if (cut[c] != prev) {
        if (steps-- == 0) return;  // a hostile shape: no table rather than a slow load
        prev = cut[c];
        next = prev >= nodes_ ? nodes_ : child_boundary(prev);
      }
      cut[c] = next;
    }
  }
  for (uint64_t c = 0; c <= m; ++c) t->keys[t->offset[last - 1] + c] = static_cast<uint32_t>(raw[c] - raw[0]);
  for (uint64_t i = last - 1; i-- > 0;) count_from_next_level(*t, i);
  payload_bytes_ += t->bytes();
  top_counted_end_ = end;
  top_counts_ = std::move(t);
}

// A count table for the levels from `level` whose first nodes are `starts` (and, last,
// the next level's), its counts still zero; `below`: the sum of leaf_.rank1 over the
// starts of every level from `level` down.
std::shared_ptr<SuccinctSet::LevelCounts> SuccinctSet::new_counts(uint64_t level, std::span<const uint64_t> starts,
                                                                  uint64_t below) const {
  auto t = std::make_shared<LevelCounts>();
  t->level = level;
  t->start.assign(starts.begin(), starts.end());
  uint64_t entries = 0;
  for (size_t i = 0; i + 1 < starts.size(); ++i) {
    t->offset.push_back(entries);
    t->below.push_back(below);
    entries += starts[i + 1] - starts[i] + 1;
    below -= leaf_.rank1(starts[i]);
  }
  t->keys.resize(entries);
  return t;
}

// Level i's counts of table t from level i + 1's (none past the table's last level,
// which must then be the trie's last): each cut's leaves on its own level, plus the
// counts of the cut its children's begin at.
void SuccinctSet::count_from_next_level(LevelCounts& t, uint64_t i) const noexcept {
  const uint64_t s = t.start[i], m = t.start[i + 1] - s, base = leaf_.rank1(s);
  const bool next = i + 1 < t.offset.size();
  for (uint64_t c = 0; c <= m; ++c) {
    uint64_t k = leaf_.rank1(s + c) - base;
    if (next) k += t.keys[t.offset[i + 1] + (child_boundary(s + c) - t.start[i + 1])];
    t.keys[t.offset[i] + c] = static_cast<uint32_t>(k);
  }
}

// Chains of at least kChainMin one-label nodes where no key ends (the shared prefixes
// of URLs, paths or namespaced keys below the top table): contains() would spend a
// select on each node. The table is kept only when its chains save a lookup of a
// present key at least one select on average, since every one-label node on a
// lookup's path then pays a filter probe (word lists: far fewer). Counted in
// size_in_bytes().
void SuccinctSet::find_chains() {
  auto bit = [](const std::vector<uint64_t>& b, uint64_t i) { return (b[i >> 6] >> (i & 63)) & 1; };
  auto set = [](std::vector<uint64_t>& b, uint64_t i) { b[i >> 6] |= uint64_t{1} << (i & 63); };
  // The members (one label, no key ends there) and their children, in one pass over
  // the label bitmap: node v's one at e closes its labels (e_{v-1}, e), so a node with
  // one label is a one at e after a zero at e - 1 and a one at e - 2 (the root: e = 1;
  // a one is assumed before the bitmap), found 64 bits at a time. Its single label is
  // label e - 1 - v, so its child is node e - v.
  std::vector<uint64_t> member((nodes_ + 63) / 64), below_member((nodes_ + 63) / 64);
  std::vector<uint64_t> members, child;
  const uint64_t* w = louds_.words();
  uint64_t ones = 0, last = uint64_t{1} << 63;  // ones before word i; word i - 1
  for (uint64_t i = 0; i < (louds_.size() + 63) / 64; ++i) {
    const uint64_t x = w[i];
    for (uint64_t one = x & ~((x << 1) | (last >> 63)) & ((x << 2) | (last >> 62)); one != 0; one &= one - 1) {
      const unsigned b = static_cast<unsigned>(std::countr_zero(one));
      const uint64_t e = 64 * i + b, v = ones + static_cast<uint64_t>(std::popcount(x & ((uint64_t{1} << b) - 1)));
      if (!leaf_.get(v)) {
        set(member, v);
        set(below_member, e - v);
        members.push_back(v);
        child.push_back(e - v);
      }
    }
    ones += static_cast<uint64_t>(std::popcount(x));
    last = x;
  }
  if (members.size() < kChainMin) return;
  // The length of the chain from each member down, saturated (children come later).
  std::vector<uint8_t> run(nodes_);
  for (size_t i = members.size(); i-- > 0;)
    run[members[i]] = static_cast<uint8_t>(std::min<unsigned>(255, 1u + run[child[i]]));
  auto c = std::make_shared<Chains>();
  std::vector<Chains::Slot> found;
  uint64_t saved = 0;  // selects the chains save over lookups of every key
  // Levels keys_between may walk for all chains together: a chain's subtree is walked
  // to its bottom, and nested chains in a deep trie could make that quadratic.
  uint64_t budget = nodes_ + (uint64_t{1} << 20);
  for (const uint64_t v : members) {
    // v heads a chain when no member's child is v; only long ones are walked.
    if (bit(below_member, v) || run[v] < kChainMin) continue;
    const size_t at = c->bytes.size();
    uint64_t u = v;
    while (u < nodes_ && bit(member, u)) {
      const uint64_t st = node_start(u);
      c->bytes.push_back(static_cast<char>(labels_[st - u]));
      u = st - u + 1;
    }
    const uint64_t len = c->bytes.size() - at;
    // Kept if at least kChainKeys keys pass through it (so a lookup is likely to).
    const uint64_t keys = keys_between(u, u + 1, &budget);
    if (keys == npos) return;  // a hostile shape: no table rather than a slow load
    if (keys < kChainKeys) {
      c->bytes.resize(at);
      continue;
    }
    found.push_back({v, u, node_start(u), at, len});
    saved += keys * (len - 1);
  }
  // Worth its probes if it saves a lookup of a present key one select on average.
  if (found.empty() || saved < n_) return;
  c->bytes.shrink_to_fit();
  unsigned bits = 1;
  while ((uint64_t{1} << bits) < 2 * found.size()) ++bits;
  c->shift = 64 - bits;
  c->slots.resize(uint64_t{1} << bits);
  for (const Chains::Slot& f : found)
    for (uint64_t i = chain_hash(f.head) >> c->shift;; i = (i + 1) & (c->slots.size() - 1))
      if (c->slots[i].head == npos) {
        c->slots[i] = f;
        break;
      }
  // A filter of at least 16 bits a chain, so most one-label nodes stop at one bit.
  uint64_t words = 64;
  while (words * 64 < 16 * found.size()) words *= 2;
  c->filter.resize(words);
  for (const Chains::Slot& f : found) {
    const uint64_t h = chain_hash(f.head);
    c->filter[(h >> 6) & (words - 1)] |= uint64_t{1} << (h & 63);
  }
  payload_bytes_ += 8 * c->filter.size() + sizeof(Chains::Slot) * c->slots.size() + c->bytes.size();
  chain_filter_ = c->filter.data();
  chain_filter_mask_ = words - 1;
  chain_count_ = found.size();
  chains_ = std::move(c);
}

// One pass over the nodes: every edge points to a later node (so the trie is a tree
// and every walk ends), labels of a node strictly increase (so order is sorted),
// every node without children ends a key, and only such nodes have tails.
void SuccinctSet::validate_trie() {
  auto corrupt = [](const std::string& m) { return Error(Errc::corrupt, "succinct set: " + m); };
  const uint64_t nw = (louds_.size() + 63) / 64;
  const uint64_t* words = louds_.words();
  uint64_t v = 0, start = 0, tails = 0;
  uint64_t t_at = 0;  // position of node v's 1 in the tail bitmap
  for (uint64_t w = 0; w < nw; ++w) {
    for (uint64_t x = words[w]; x; x &= x - 1) {
      const uint64_t q = (w << 6) + static_cast<uint64_t>(__builtin_ctzll(x));
      const uint64_t k = q - start, first = start - v;  // labels [first, first + k)
      if (k > 0) {
        if (first + 1 <= v) throw corrupt("node " + std::to_string(v) + " has an edge pointing backwards");
        for (uint64_t i = 1; i < k; ++i)
          if (labels_[first + i] <= labels_[first + i - 1])
            throw corrupt("labels of node " + std::to_string(v) + " are not strictly increasing");
      }
      if (!leaf_.get(v) && k == 0 && !(v == 0 && n_ == 0))
        throw corrupt("node " + std::to_string(v) + " has neither children nor a key");
      const uint64_t t_next = tail_map_.next_one(t_at + 1);
      if (t_next - t_at > 1) {
        if (k > 0) throw corrupt("node " + std::to_string(v) + " has children and a tail");
        if (!syms_.empty() && !syms_.valid_codes(tail_ + (t_at - v), t_next - t_at - 1))
          throw corrupt("the tail of node " + std::to_string(v) + " is not a valid coding");
        ++tails;
      }
      t_at = t_next;
      start = q + 1;
      ++v;
    }
  }
  tails_ = tails;
}

std::vector<std::byte> SuccinctSet::serialize() const {
  return std::vector<std::byte>(storage_->file.begin(), storage_->file.end());
}

// ---- queries -----------------------------------------------------------------

// Where the tail bitmap's select for node v's one starts: its sample, or the half-way
// point when v is past it (no branch); rem ones are left to pass from sp.
[[gnu::always_inline]] inline void SuccinctSet::tail_select_start(uint64_t v, uint64_t& sp, uint64_t& rem) const noexcept {
  sp = tail_map_.sample(v);
  rem = v & kTailSampleMask;
  if (tail_mids_) {
    const uint64_t half = (v >> (TailBits::kSampleShift - 1)) & 1;
    sp += tail_mids_[v >> TailBits::kSampleShift] & (0 - half);
    rem -= half << (TailBits::kSampleShift - 1);
  }
}

// Where the label bitmap's select for the label start of node v (past the top table)
// starts: the finer start of levels 3-4, or the sample of v - 1, which is csp when
// its number is csi (a sample the caller loaded ahead); rem ones are left to pass.
[[gnu::always_inline]] inline void SuccinctSet::select_start(uint64_t v, uint64_t csi, uint64_t csp, uint64_t& sp,
                                                             uint64_t& rem) const noexcept {
  const uint64_t s = v - 1;
  if (v < sub_nodes_) {
    sp = louds_.sample(s) + sub_starts_[s >> kSubShift];
    rem = s & ((uint64_t{1} << kSubShift) - 1);
  } else {
    sp = (s >> LoudsBits::kSampleShift) == csi ? csp : louds_.sample(s);
    rem = s & kLoudsSampleMask;
  }
}

// Nodes have about one label each, so the labels of node j + 1 start near label index
// (the index of sample j's one, sp = louds_.sample(j)) plus the nodes between.
constexpr uint64_t label_guess(uint64_t j, uint64_t sp) noexcept {
  return (sp - (j & ~kLoudsSampleMask)) + (j & kLoudsSampleMask);
}

// The children of a node whose labels start at label index cs (below the top table)
// select from sample csi = cs >> kSampleShift, csp: loaded here, and the bitmap words
// where their selects count and the labels near the first child's fetched while the
// node's own labels are searched. Returns that label guess.
[[gnu::always_inline]] inline uint64_t SuccinctSet::fetch_children(uint64_t cs, uint64_t& csi,
                                                                   uint64_t& csp) const noexcept {
  csi = cs >> LoudsBits::kSampleShift;
  csp = louds_.sample(cs);
  const uint64_t gl = label_guess(cs, csp);
  detail::prefetch_guess(louds_.words(), 8 * (csp >> 6));
  detail::prefetch_guess(louds_.words(), 8 * (csp >> 6) + 64);
  detail::prefetch_guess(labels_, gl);
  return gl;
}

template <bool Hw>
[[gnu::always_inline]] inline std::string_view SuccinctSet::tail_of_t(uint64_t v) const noexcept {
  // Node v's 1 in the tail bitmap is followed by a 0 per tail byte; most tails end
  // in the word of that 1 (`after`).
  uint64_t after, sp, rem;
  tail_select_start(v, sp, rem);
  const uint64_t at = tail_map_.select_after<Hw>(sp, rem, after);
  const uint64_t len = after ? static_cast<uint64_t>(__builtin_ctzll(after)) : tail_map_.next_one(at + 1) - at - 1;
  return {reinterpret_cast<const char*>(tail_ + (at - v)), len};
}

template <bool Hw>
[[gnu::always_inline]] inline bool SuccinctSet::tail_equals(uint64_t v, const uint8_t* p, size_t n) const noexcept {
  const std::string_view t = tail_of_t<Hw>(v);
  const auto* c = reinterpret_cast<const uint8_t*>(t.data());
  if (!syms_.empty()) [[unlikely]]
    return syms_.equals(c, t.size(), p, n);
  return t.size() == n && detail::short_bytes_equal(c, p, n);  // tails are short: a byte or two on average
}

int SuccinctSet::compare_tail(uint64_t v, std::span<const std::byte> rest) const {
  const std::string_view t = tail_of(v);
  if (syms_.empty()) return compare_bytes(t, rest);
  return syms_.compare(reinterpret_cast<const uint8_t*>(t.data()), t.size(),
                       reinterpret_cast<const uint8_t*>(rest.data()), rest.size());
}

void SuccinctSet::append_tail(uint64_t v, std::string& out) const {
  const std::string_view t = tail_of(v);
  if (syms_.empty()) {
    out += t;
    return;
  }
  syms_.append(reinterpret_cast<const uint8_t*>(t.data()), t.size(), out);
}

// The position in [lab, lab + k) of byte c, or k. Sixteen labels at a time with SSE2
// (part of x86-64) while the loads stay inside [.., safe_end); then byte by byte.
[[gnu::always_inline]] inline uint64_t find_label(const uint8_t* lab, uint64_t k, uint8_t c,
                                                  const uint8_t* safe_end) noexcept {
  uint64_t o = 0;
#if defined(__SSE2__)
  const __m128i needle = _mm_set1_epi8(static_cast<char>(c));
  if (k <= 16 && lab + 16 <= safe_end) [[likely]] {
    // Most nodes: one compare, and bit k set so that "absent" comes out as k.
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(lab));
    const uint32_t m = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, needle)));
    return static_cast<uint64_t>(__builtin_ctz((m | (1u << k)) & ((2u << k) - 1)));
  }
  if (k > 16 && k <= 64 && lab + 64 <= safe_end) {
    // A wide node (the top levels): four compares, one 64-bit mask, no branches.
    auto eq = [&](int at) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(lab + at));
      return static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, needle))));
    };
    uint64_t m = eq(0) | eq(16) << 16 | eq(32) << 32 | eq(48) << 48;
    if (k < 64) m &= (uint64_t{1} << k) - 1;
    return m ? static_cast<uint64_t>(__builtin_ctzll(m)) : k;
  }
  for (; o < k && lab + o + 16 <= safe_end; o += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(lab + o));
    uint32_t m = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, needle)));
    if (k - o < 16) m &= (1u << (k - o)) - 1;
    if (m) return o + static_cast<uint64_t>(__builtin_ctz(m));
  }
  if (o >= k) return k;
#else
  (void)safe_end;  // the byte loop below never reads past the labels
#endif
  // A byte loop, not memchr: a call here (reached only near the payload's end) made
  // every value live across the label search go to a callee-saved register or the
  // stack, and the descent spilled its own state to the stack at every level.
  for (; o < k; ++o)
    if (lab[o] == c) return o;
  return k;
}

// The position in [lab, lab + k) of the first label >= c (labels ascend), or k: as
// find_label, sixteen at a time with SSE2 while the loads stay below safe_end.
[[gnu::always_inline]] inline uint64_t lower_label(const uint8_t* lab, uint64_t k, uint8_t c,
                                                   const uint8_t* safe_end) noexcept {
  uint64_t o = 0;
#if defined(__SSE2__)
  const __m128i needle = _mm_set1_epi8(static_cast<char>(c));
  for (; o < k && lab + o + 16 <= safe_end; o += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(lab + o));
    // x >= c where max(x, c) == x
    uint32_t m = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(x, needle), x)));
    if (k - o < 16) m |= 1u << (k - o);
    if (m) return o + static_cast<uint64_t>(__builtin_ctz(m));  // <= k (bit k - o is set when k - o < 16)
  }
  if (o >= k) return k;
#else
  (void)safe_end;
#endif
  for (; o < k; ++o)
    if (lab[o] >= c) return o;
  return k;
}

// The ones of a 256-bit map below bit c.
template <bool Hw>
[[gnu::always_inline]] inline uint64_t rank_in_map(const uint64_t* m, uint8_t c) noexcept {
  const unsigned w = c >> 6;
  const uint64_t below = (uint64_t{1} << (c & 63)) - 1;
  uint64_t r = static_cast<uint64_t>(detail::popcount64<Hw>(m[w] & below));
  r += w > 0 ? static_cast<uint64_t>(detail::popcount64<Hw>(m[0])) : 0;
  r += w > 1 ? static_cast<uint64_t>(detail::popcount64<Hw>(m[1])) : 0;
  r += w > 2 ? static_cast<uint64_t>(detail::popcount64<Hw>(m[2])) : 0;
  return r;
}

// A key's first two bytes (the set has label maps, the key two bytes or more): byte 0
// through the root's map, byte 1 through its child's (the top table has the starts of
// both levels' nodes; a child without children takes only byte 0). False if they rule
// the key out; else v is the node reached, st its label start, p past the bytes taken.
template <bool Hw>
[[gnu::always_inline]] inline bool SuccinctSet::jump_start(const uint8_t*& p, uint64_t& v,
                                                           uint64_t& st) const noexcept {
  const uint8_t c0 = p[0], c1 = p[1];
  if (!((jump_maps_[c0 >> 6] >> (c0 & 63)) & 1)) return false;
  const uint64_t j0 = rank_in_map<Hw>(jump_maps_, c0);
  const uint64_t* m1 = jump_maps_ + 4 * (j0 + 1);
  v = 1 + j0;
  st = top_starts_[v];
  ++p;
  if ((m1[0] | m1[1] | m1[2] | m1[3]) != 0) {  // v has children: take byte 1 here
    if (!((m1[c1 >> 6] >> (c1 & 63)) & 1)) return false;
    v = st - v + 1 + rank_in_map<Hw>(m1, c1);
    st = v < top_nodes_ ? top_starts_[v] : louds_.select1<Hw>(v - 1) + 1;
    ++p;
  }
  return true;
}

// The descent of contains(), compiled twice: with popcnt and BMI2 (chosen at run time
// when the CPU has them and pdep is fast) and without. One select per level on the
// label bitmap, whose samples (one per 128 nodes) leave a word or two to count; the
// node's label count comes from the word the select ended in. What a level reads is
// prefetched one and two levels ahead (below the top table).
template <bool Hw, bool WithChains>
[[gnu::always_inline]] inline bool SuccinctSet::contains_t(const uint8_t* p, size_t len) const noexcept {
  // p walks the key (the byte of the current level); end is where it stops.
  const uint8_t* const end = p + len;
  const uint8_t* safe_end = labels_end_;
  uint64_t v = 0, st = 0;
  uint64_t csi = kNoSample, csp = 0;  // a sample loaded ahead: sample number csi is csp
  uint64_t after = louds_.words()[0];  // label bitmap bits from st on (as far as st's word goes)
  if (jump_maps_ && len >= 2) {
    if (!jump_start<Hw>(p, v, st)) return false;
    after = louds_.words()[st >> 6] >> (st & 63);
  }
  for (;; ++p) {
    // The labels of node v: the zeros from st up to the next one.
    const uint64_t k = after ? static_cast<uint64_t>(__builtin_ctzll(after)) : louds_.next_one(st) - st;
    if (k == 0) return tail_equals<Hw>(v, p, static_cast<size_t>(end - p));  // no children: a leaf, maybe with a tail
    if (p == end) return leaf_.get(v);
    if constexpr (WithChains) {
      // Node v may head a long chain: take all its labels at once. (A separate copy of
      // the descent: the probe's extra values in this loop cost sets without chains
      // ~10%.)
      const uint64_t h = chain_hash(v);
      if (k == 1 && ((chain_filter_[(h >> 6) & chain_filter_mask_] >> (h & 63)) & 1)) {
        if (const Chains::Slot* c = chains_->find(v)) {
          // No key ends inside a chain and no node there has another label: the key
          // must go on with all of the chain's labels.
          const uint64_t n = c->len;
          if (static_cast<uint64_t>(end - p) < n) return false;
          const uint8_t* b = reinterpret_cast<const uint8_t*>(chains_->bytes.data()) + c->at;
          uint64_t i = 0;
          for (; i + 8 <= n; i += 8)
            if (detail::load_le64(reinterpret_cast<const std::byte*>(p + i)) !=
                detail::load_le64(reinterpret_cast<const std::byte*>(b + i)))
              return false;
          for (; i < n; ++i)
            if (p[i] != b[i]) return false;
          p += n - 1;
          v = c->end;
          st = c->end_start;
          after = louds_.words()[st >> 6] >> (st & 63);
          continue;
        }
      }
    }
    const uint8_t* lab = labels_ + (st - v);
    if (st - v >= top_nodes_) {
      // The next node is one of v's children st - v + 1 + j: start fetching the label
      // bitmap and the labels near where its select lands (children share a sample)
      // while v's labels are searched.
      const uint64_t gl = fetch_children(st - v, csi, csp);
      if (gl + 1 < nodes_) {
        // A level further, on that guess: the grandchildren are nodes near gl + 1,
        // reached through sample(gl). One level of lead leaves most of a cache miss
        // exposed; two hide it.
        const uint64_t gsp = louds_.sample(gl);
        detail::prefetch_guess(louds_.words(), 8 * (gsp >> 6));
        detail::prefetch_guess(labels_, label_guess(gl, gsp));
        if (static_cast<uint64_t>(end - p) <= tail_reach_) {
          // The key is nearly spent: the lookup likely ends at such a node's tail.
          const uint64_t tv = gl + 1, tg = tail_map_.sample(tv) + (((tv & kTailSampleMask) * tail_ratio_) >> 16);
          detail::prefetch_guess(tail_map_.words(), 8 * (tg >> 6));
          detail::prefetch_guess(tail_, tg - tv);
        }
      }
    }
    const uint64_t j = find_label(lab, k, *p, safe_end);
    if (j == k) return false;
    v = st - v + 1 + j;
    // Node v's labels start at label index select1(v - 1) + 1 - v. Nodes have about
    // one child each, so that is close to the sample's index plus the nodes between:
    // fetch those lines while the select counts. If the key ends at v, its leaf bit.
    if (v < top_nodes_) {
      st = top_starts_[v];
      after = louds_.words()[st >> 6] >> (st & 63);
      continue;
    }
    const uint64_t s = v - 1;
    uint64_t sp, rem;
    select_start(v, csi, csp, sp, rem);
    const uint64_t guess = (sp - s) + 2 * rem;
    detail::prefetch_guess(labels_, guess - 64);
    detail::prefetch_guess(labels_, guess);
    detail::prefetch_guess(labels_, guess + 64);
    if (p + 1 == end) detail::prefetch(leaf_.words() + (v >> 6));
    st = louds_.select_after<Hw>(sp, rem, after) + 1;
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("popcnt,bmi,bmi2"))) bool SuccinctSet::contains_popcnt(const uint8_t* p, size_t len) const noexcept {
  return contains_t<true, false>(p, len);
}
__attribute__((target("popcnt,bmi,bmi2"))) bool SuccinctSet::contains_popcnt_chains(const uint8_t* p,
                                                                                    size_t len) const noexcept {
  return contains_t<true, true>(p, len);
}
#else
bool SuccinctSet::contains_popcnt(const uint8_t* p, size_t len) const noexcept { return contains_t<false, false>(p, len); }
bool SuccinctSet::contains_popcnt_chains(const uint8_t* p, size_t len) const noexcept {
  return contains_t<false, true>(p, len);
}
#endif

bool SuccinctSet::contains_sw(const uint8_t* p, size_t len) const noexcept { return contains_t<false, false>(p, len); }
bool SuccinctSet::contains_sw_chains(const uint8_t* p, size_t len) const noexcept {
  return contains_t<false, true>(p, len);
}

bool SuccinctSet::contains(KeyView key) const noexcept {
  static const bool hw = detail::cpu_has_fast_pdep();
  if (n_ == 0) return false;
  const Bytes b = key.bytes();
  const uint8_t* p = reinterpret_cast<const uint8_t*>(b.data());
  if (chain_filter_ != nullptr) return hw ? contains_popcnt_chains(p, b.size()) : contains_sw_chains(p, b.size());
  return hw ? contains_popcnt(p, b.size()) : contains_sw(p, b.size());
}

bool SuccinctSet::contains_portable(KeyView key) const noexcept {
  if (n_ == 0) return false;
  const Bytes b = key.bytes();
  const uint8_t* p = reinterpret_cast<const uint8_t*>(b.data());
  return chain_filter_ != nullptr ? contains_sw_chains(p, b.size()) : contains_sw(p, b.size());
}

// ---- contains_many: descents interleaved ------------------------------------------
//
// A single descent waits a cache miss or two at each level below the top table (the
// label bitmap's words at a select, the node's labels), and prefetching a level or
// two ahead hides only part of it. A batch has independent keys: kLanes descents run
// at once, each going on in its turn to its next select or tail compare, fetching
// what that reads (the select window from the child's sample, the labels near where
// the select will land, the leaf word, or the tail's lines), then handing over to the
// next lane. By its next turn the lines have mostly arrived. The levels are
// contains_t's; only sets of kInterleaveBytes or more come here.
template <bool Hw, bool WithChains>
[[gnu::always_inline]] inline size_t SuccinctSet::contains_batch_t(const Probe* q, size_t m,
                                                                   bool* out) const noexcept {
  constexpr unsigned kLanes = 8;
  struct Lane {
    const uint8_t* p;    // the key's byte for node v's labels
    const uint8_t* end;  // the key's end
    uint64_t v;          // the node
    uint64_t sp, rem;    // its label start: sp (known), or the (rem+1)-th one from position sp, plus 1
    bool known;          // sp is the label start (the top table's nodes, a chain's end)
    bool tail;           // v is a leaf: its tail is compared next turn
    uint32_t idx;        // the key's place in the batch
  };
  const uint8_t* const safe_end = labels_end_;
  Lane lane[kLanes];
  size_t next = 0, found = 0;
  // Loads key `next` into l (answering those the label maps or the single descent
  // settle); false when the batch has no more keys.
  auto start = [&](Lane& l) noexcept {
    while (next < m) {
      const size_t i = next++;
      const uint8_t* p = q[i].p;
      const size_t len = q[i].len;
      if (!jump_maps_ || len < 2) {  // short keys (and tiny sets): the single descent
        found += out[i] = contains_t<Hw, WithChains>(p, len);
        continue;
      }
      uint64_t v, st;
      if (!jump_start<Hw>(p, v, st)) {
        out[i] = false;
        continue;
      }
      l = {p, q[i].p + len, v, st, 0, true, false, static_cast<uint32_t>(i)};
      detail::prefetch_guess(louds_.words(), 8 * (st >> 6));
      detail::prefetch_guess(labels_, st - v);
      return true;
    }
    return false;
  };
  // Lane l's levels up to its next select (the top table's and a chain's ends cost
  // none, their lines stay cached), or its tail compare; true when its answer is out.
  auto step = [&](Lane& l) noexcept {
    uint64_t v = l.v;
    if (l.tail) {
      found += out[l.idx] = tail_equals<Hw>(v, l.p, static_cast<size_t>(l.end - l.p));
      return true;
    }
    uint64_t after, st;
    if (l.known) {
      st = l.sp;
      after = louds_.words()[st >> 6] >> (st & 63);
    } else {
      st = louds_.select_after<Hw>(l.sp, l.rem, after) + 1;
    }
    for (const uint8_t* p = l.p;; ++p) {
      const uint64_t k = after ? static_cast<uint64_t>(__builtin_ctzll(after)) : louds_.next_one(st) - st;
      if (k == 0) {
        // A leaf, maybe with a tail: fetch the tail bitmap's lines from where its
        // select starts (as tail_of_t) to just past where v's one likely lies, and
        // the tail's likely line; compare next turn.
        uint64_t tsp, trem;
        tail_select_start(v, tsp, trem);
        const uint64_t tg = tsp + ((trem * tail_ratio_) >> 16);
        for (uint64_t line = tsp >> 9; line <= (tg >> 9) + 1 && line < (tsp >> 9) + 6; ++line)
          detail::prefetch_guess(tail_map_.words(), 64 * line);
        detail::prefetch_guess(tail_, tg - v);
        l.p = p;
        l.v = v;
        l.tail = true;
        return false;
      }
      if (p == l.end) {
        found += out[l.idx] = leaf_.get(v);
        return true;
      }
      if constexpr (WithChains) {
        const uint64_t h = chain_hash(v);
        if (k == 1 && ((chain_filter_[(h >> 6) & chain_filter_mask_] >> (h & 63)) & 1)) {
          if (const Chains::Slot* c = chains_->find(v)) {
            const uint64_t n = c->len;
            if (static_cast<uint64_t>(l.end - p) < n ||
                std::memcmp(p, reinterpret_cast<const uint8_t*>(chains_->bytes.data()) + c->at, n) != 0) {
              out[l.idx] = false;
              return true;
            }
            // The chain ends at node c->end, whose labels the key's byte p[n] meets.
            p += n - 1;
            v = c->end;
            st = c->end_start;
            after = louds_.words()[st >> 6] >> (st & 63);
            continue;
          }
        }
      }
      const uint64_t j = find_label(labels_ + (st - v), k, *p, safe_end);
      if (j == k) {
        out[l.idx] = false;
        return true;
      }
      v = st - v + 1 + j;
      if (v < top_nodes_) {
        st = top_starts_[v];
        after = louds_.words()[st >> 6] >> (st & 63);
        continue;
      }
      const uint64_t s = v - 1;
      uint64_t sp, rem;
      select_start(v, kNoSample, 0, sp, rem);
      // The select reads words from the sample's on; the labels lie near the sample's
      // label index plus the nodes between (about a label a node).
      detail::prefetch_guess(louds_.words(), 8 * (sp >> 6));
      detail::prefetch_guess(louds_.words(), 8 * (sp >> 6) + 64);
      const uint64_t guess = (sp - s) + 2 * rem;
      detail::prefetch_guess(labels_, guess - 64);
      detail::prefetch_guess(labels_, guess);
      detail::prefetch_guess(labels_, guess + 64);
      if (p + 1 == l.end) detail::prefetch(leaf_.words() + (v >> 6));
      l.p = p + 1;
      l.v = v;
      l.sp = sp;
      l.rem = rem;
      l.known = false;
      return false;
    }
  };
  unsigned active = 0;
  for (; active < kLanes && start(lane[active]); ++active) {
  }
  while (active > 0) {
    for (unsigned g = 0; g < active;) {
      if (step(lane[g]) && !start(lane[g])) {
        lane[g] = lane[--active];  // the batch is spent: close the gap
        continue;
      }
      ++g;
    }
  }
  return found;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("popcnt,bmi,bmi2"))) size_t SuccinctSet::contains_batch_popcnt(const Probe* q, size_t m,
                                                                                  bool* out) const noexcept {
  return contains_batch_t<true, false>(q, m, out);
}
__attribute__((target("popcnt,bmi,bmi2"))) size_t SuccinctSet::contains_batch_popcnt_chains(const Probe* q, size_t m,
                                                                                         bool* out) const noexcept {
  return contains_batch_t<true, true>(q, m, out);
}
#else
size_t SuccinctSet::contains_batch_popcnt(const Probe* q, size_t m, bool* out) const noexcept {
  return contains_batch_t<false, false>(q, m, out);
}
size_t SuccinctSet::contains_batch_popcnt_chains(const Probe* q, size_t m, bool* out) const noexcept {
  return contains_batch_t<false, true>(q, m, out);
}
#endif
size_t SuccinctSet::contains_batch_sw(const Probe* q, size_t m, bool* out) const noexcept {
  return contains_batch_t<false, false>(q, m, out);
}
size_t SuccinctSet::contains_batch_sw_chains(const Probe* q, size_t m, bool* out) const noexcept {
  return contains_batch_t<false, true>(q, m, out);
}

size_t SuccinctSet::contains_batch(const Probe* q, size_t m, bool* out, bool portable) const noexcept {
  static const bool fast_pdep = detail::cpu_has_fast_pdep();
  const bool hw = fast_pdep && !portable;
  if (n_ == 0) {
    std::fill(out, out + m, false);
    return 0;
  }
  if (chain_filter_ != nullptr)
    return hw ? contains_batch_popcnt_chains(q, m, out) : contains_batch_sw_chains(q, m, out);
  return hw ? contains_batch_popcnt(q, m, out) : contains_batch_sw(q, m, out);
}

// child_boundary(b) for rank()'s walk down the levels (b < nodes_). Below the top
// table, the next level's cut is near label index g (nodes have about one label each):
// the bitmap where its select will count is fetched while this one counts. (In
// key_at()'s walks of a pair of nearby cuts, the second's fetches only cost.)
uint64_t SuccinctSet::next_cut(uint64_t b) const noexcept {
  if (b <= top_nodes_) return child_boundary(b);
  const uint64_t s = b - 1, sp = louds_.sample(s), g = label_guess(s, sp);
  if (g < nodes_) detail::prefetch_guess(louds_.words(), 8 * (louds_.sample(g) >> 6));
  return (louds_.select1_from(sp, s) + 1) - b + 1;
}

// Keys < key = the sum over levels of the leaves left of a cut through each level.
// The cut follows the key down the trie, then the boundary of the last node reached
// is carried down through the deeper levels (child_boundary).
uint64_t SuccinctSet::rank_impl(std::span<const std::byte> key, bool* found) const noexcept {
  *found = false;
  if (n_ == 0) return 0;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(key.data());
  const size_t len = key.size();
  uint64_t total = 0, level = 0, v = 0, b = 0;
  // As contains(): the label starts of the top levels' nodes from their table, the
  // first two levels' searches through their label maps, the others' selects started
  // from the finer table or the sample, and `after` the bitmap's bits from st on.
  uint64_t st = 0, after = louds_.words()[0];
  for (size_t d = 0;; ++d) {
    const uint64_t k = after ? static_cast<uint64_t>(__builtin_ctzll(after)) : louds_.next_one(st) - st;
    if (k == 0) {
      const int cmp = compare_tail(v, key.subspan(d));
      *found = cmp == 0;
      b = cmp < 0 ? v + 1 : v;
      break;
    }
    if (d == len) {
      *found = leaf_.get(v);
      b = v;
      break;
    }
    const uint8_t c = p[d];
    uint64_t csi = kNoSample, csp = 0;
    if (st - v >= top_nodes_) (void)fetch_children(st - v, csi, csp);
    uint64_t j;
    bool hit;
    if (jump_maps_ != nullptr && level < 2) {  // v is the root or one of its children
      const uint64_t* m = jump_maps_ + 4 * v;
      j = rank_in_map<detail::kHwPopcount>(m, c);
      hit = (m[c >> 6] >> (c & 63)) & 1;
    } else {
      const uint8_t* lab = labels_ + (st - v);
      j = lower_label(lab, k, c, labels_end_);
      hit = j < k && lab[j] == c;
    }
    total += leaf_.rank1(v + 1);  // this level: v and the nodes left of it
    ++level;
    const uint64_t first = st - v + 1;
    if (!hit) {
      b = first + j;  // next level: the children before the key's byte
      break;
    }
    v = first + j;
    if (v < top_nodes_) {
      st = top_starts_[v];
      after = louds_.words()[st >> 6] >> (st & 63);
    } else {
      uint64_t sp, rem;
      select_start(v, csi, csp, sp, rem);
      detail::prefetch_guess(labels_, (sp - (v - 1)) + 2 * rem);
      st = louds_.select_after(sp, rem, after) + 1;
    }
  }
  for (;;) {
    if (const LevelCounts* t = counts_of(level))  // b cuts level `level`: the rest is counted
      return total + t->from(level, b) - level_leaf_sum_;
    total += leaf_.rank1(b);
    if (++level >= levels_) break;
    if (b >= nodes_) {
      total += (levels_ - level) * n_;
      break;
    }
    b = next_cut(b);
  }
  return total - level_leaf_sum_;
}

uint64_t SuccinctSet::rank(KeyView key) const noexcept {
  bool found;
  return rank_impl(key.bytes(), &found);
}

uint64_t SuccinctSet::index_of(KeyView key) const noexcept {
  bool found;
  const uint64_t r = rank_impl(key.bytes(), &found);
  return found ? r : npos;
}

// Keys in the subtrees of the nodes [x, y) of one level.
uint64_t SuccinctSet::keys_between(uint64_t x, uint64_t y, uint64_t* budget) const noexcept {
  uint64_t total = 0;
  while (x != y) {
    if (budget != nullptr && (*budget)-- == 0) return npos;
    for (const LevelCounts* t : {top_counts_.get(), bottom_.get()})
      if (t != nullptr && t->holds(x, y)) return total + t->between(x, y);
    total += leaf_.rank1_between(x, y);
    if (y >= nodes_ && x >= nodes_) break;
    x = x >= nodes_ ? nodes_ : child_boundary(x);
    y = y >= nodes_ ? nodes_ : child_boundary(y);
  }
  return total;
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
      append_tail(v, key);
      return key;
    }
    if (leaf_.get(v)) {
      if (before == i) return key;
      ++before;
    }
    const uint64_t k = louds_.next_one(st) - st;
    const uint64_t first = st - v + 1;
    const uint64_t target = i - before;
    // The last child j with keys_between(first, first + j) <= target, by a binary
    // search whose steps count only the children between the last one known to lie
    // at or below it and the probe: small ranges, whose cuts soon meet on the way
    // down (from first each time, and once more for the answer, key_at took ~1.7x as
    // long on american-english-insane).
    uint64_t lo = 0, hi = k - 1, at = 0;  // the child is in [lo, hi]; at: keys before child lo
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo + 1) / 2, m = keys_between(first + lo, first + mid);
      if (at + m <= target) lo = mid, at += m;
      else hi = mid - 1;
    }
    before += at;
    key.push_back(static_cast<char>(labels_[st - v + lo]));
    v = first + lo;
  }
}

SuccinctSet::SizeParts SuccinctSet::size_parts() const noexcept {
  const Shape sh = shape_of(n_, nodes_, tail_bytes_, tails_coded());
  SizeParts p;
  for (int i = 0; i < kVecCount; ++i) {
    p.bitmaps += 8 * sh.words[i];
    p.directories += 8 * sh.dir_words[i];
  }
  p.labels = pad8(sh.edges);
  p.tails = pad8(tail_bytes_) + (tails_coded() ? detail::TailSymbols::kBytes : 0);
  p.load_tables = payload_bytes_ - sh.payload_bytes;
  return p;
}

SuccinctSet::Layout SuccinctSet::layout() const {
  Layout l;
  l.labels.assign(reinterpret_cast<const char*>(labels_), nodes_ - 1);
  l.tails.assign(reinterpret_cast<const char*>(tail_), tail_bytes_);
  auto bits = [](const auto& b) {
    std::string s;
    for (uint64_t i = 0; i < b.size(); ++i) s += b.get(i) ? '1' : '0';
    return s;
  };
  l.label_bitmap = bits(louds_);
  l.leaf_bitmap = bits(leaf_);
  l.tail_bitmap = bits(tail_map_);
  return l;
}

// ---- iteration ---------------------------------------------------------------

void SuccinctSet::Iterator::push_node(uint64_t v) {
  const uint64_t st = set_->node_start(v);
  stack_.push_back({v, st, set_->louds_.next_one(st), npos});
}

void SuccinctSet::Iterator::emit(uint64_t v) {
  key_.assign(path_);
  if (stack_.back().next == stack_.back().end) set_->append_tail(v, key_);
  done_ = false;
  if ((has_stop_ && std::string_view(key_) >= std::string_view(stop_)) ||
      (!prefix_.empty() && std::string_view(key_).substr(0, prefix_.size()) != prefix_)) {
    done_ = true;
    stack_.clear();
  }
}

void SuccinctSet::Iterator::advance() {
  while (!stack_.empty()) {
    Frame& f = stack_.back();
    if (f.next < f.end) {
      const uint64_t pos = f.next++;
      const uint64_t child = pos - f.node + 1;
      path_.push_back(static_cast<char>(set_->labels_[pos - f.node]));
      // Siblings' label ranges follow each other: one select per parent, not per child.
      const uint64_t st = f.child_start == npos ? set_->node_start(child) : f.child_start;
      const uint64_t en = set_->louds_.next_one(st);
      f.child_start = en + 1;
      stack_.push_back({child, st, en, npos});
      if (set_->leaf_.get(child)) return emit(child);
      continue;
    }
    stack_.pop_back();
    if (!stack_.empty()) path_.pop_back();
  }
  done_ = true;
}

// Positions at the first key >= key.
void SuccinctSet::Iterator::seek(std::span<const std::byte> key) {
  stack_.clear();
  path_.clear();
  done_ = true;
  if (set_->n_ == 0) return;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(key.data());
  push_node(0);
  for (size_t d = 0;; ++d) {
    Frame& f = stack_.back();
    const uint64_t v = f.node;
    if (f.next == f.end) {  // a leaf without children
      if (set_->compare_tail(v, key.subspan(d)) >= 0) return emit(v);
      return advance();
    }
    if (d == key.size()) {
      if (set_->leaf_.get(v)) return emit(v);
      return advance();
    }
    const uint8_t* lab = set_->labels_ + (f.next - v);
    const uint64_t k = f.end - f.next;
    const uint64_t j = static_cast<uint64_t>(std::lower_bound(lab, lab + k, p[d]) - lab);
    if (j < k && lab[j] == p[d]) {
      f.next += j + 1;
      path_.push_back(static_cast<char>(p[d]));
      push_node(f.next - v);  // the label at f.next - 1 leads to node (f.next - 1) - v + 1
      stack_[stack_.size() - 2].child_start = stack_.back().end + 1;
      continue;
    }
    f.next += j;
    return advance();
  }
}

SuccinctSet::Iterator SuccinctSet::begin() const {
  Iterator it(this);
  it.seek({});
  return it;
}

SuccinctSet::Iterator SuccinctSet::lower_bound(KeyView key) const {
  Iterator it(this);
  it.seek(key.bytes());
  return it;
}

SuccinctSet::Range SuccinctSet::scan(std::string_view prefix, std::optional<std::string_view> from,
                                     std::optional<std::string_view> to) const {
  Iterator it(this);
  it.prefix_ = prefix;
  if (to) {
    it.has_stop_ = true;
    it.stop_ = *to;
  }
  const std::string_view start = from && *from > prefix ? *from : prefix;
  it.seek(as_bytes(start));  // emit() applies the bounds from the first key on
  return Range(std::move(it));
}

SuccinctSet::Range SuccinctSet::prefix(KeyView prefix) const {
  return scan(as_chars(prefix.bytes()), std::nullopt, std::nullopt);
}

SuccinctSet::Range SuccinctSet::range(KeyView from, KeyView to) const {
  return scan({}, as_chars(from.bytes()), as_chars(to.bytes()));
}

}  // namespace amq
