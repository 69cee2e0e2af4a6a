// AnySet adapter for SuccinctSet (Kind::succinct): an exact, static set. A set of u64
// keys keeps them big-endian, so that they sort numerically; it takes them as every
// AnySet does, little-endian, and turns them around here.
#include <algorithm>
#include <string>
#include <vector>

#include "amq/error.hpp"
#include "amq/succinct_set.hpp"
#include "any_adapters.hpp"

namespace amq::detail {
namespace {

// A u64 key's 8 bytes in the other byte order.
std::string swap_u64(Bytes key) {
  std::string out(as_chars(key));
  std::reverse(out.begin(), out.end());
  return out;
}

// Trie, bitmap and directory bytes a key beyond its own bytes (estimate_succinct): random
// keys of 8 to 32 bytes take their length plus under 3.
constexpr double kSuccinctBytesPerKey = 3.0;

class AnySuccinct final : public SetAdapter<SuccinctSet, Kind::succinct> {
 public:
  explicit AnySuccinct(SuccinctSet s) : SetAdapter(std::move(s)) {
    big_endian_ = container_key_type(s_.bytes()) == KeyType::u64;
  }
  bool contains(Bytes key) const override {
    if (!big_endian_) return s_.contains(key);
    return key.size() == 8 && s_.contains(swap_u64(key));
  }
  size_t contains_many(std::span<const Bytes> keys, std::span<bool> out) const override {
    if (!big_endian_) return s_.contains_many(keys, out);
    // Keys of another length than 8 are absent; they are looked up as they are, which
    // no 8-byte key of the set matches.
    std::vector<std::string> swapped;
    swapped.reserve(keys.size());
    for (Bytes k : keys) swapped.push_back(k.size() == 8 ? swap_u64(k) : std::string(as_chars(k)));
    return s_.contains_many(swapped, out);
  }
  SetInfo info() const override {
    SetInfo i = make_info(Kind::succinct, s_.size(), s_.bytes().size(), 0.0, true);
    const SuccinctSet::SizeParts parts = s_.size_parts();
    i.params = {{"nodes", std::to_string(s_.node_count())},
                {"tails", std::to_string(s_.tail_count())},
                {"tail_bytes", std::to_string(s_.tail_bytes())},
                {"tail_coding", s_.tails_coded() ? "symbols" : "raw"},
                {"memory_bytes", std::to_string(s_.size_in_bytes())},
                {"labels_bytes", std::to_string(parts.labels)},
                {"bitmap_bytes", std::to_string(parts.bitmaps)},
                {"directory_bytes", std::to_string(parts.directories)},
                {"tail_area_bytes", std::to_string(parts.tails)},
                {"load_table_bytes", std::to_string(parts.load_tables)},
                {"chains", std::to_string(s_.chain_count())},
                {"mapped", s_.is_mapped() ? "yes" : "no"}};
    return i;
  }
  std::vector<std::byte> serialize() const override { return s_.serialize(); }
  void write_to(const std::function<void(std::span<const std::byte>)>& sink) const override { sink(s_.bytes()); }

 private:
  bool big_endian_ = false;  // the file records u64 keys: they are stored big-endian
};

void no_capacity(const BuildOptions& o) {
  if (o.capacity)
    throw Error(Errc::invalid_argument,
                "--capacity does not apply to a succinct set: it holds exactly the keys it is built from");
}


uint64_t bytes_succinct(const BuildOptions& o, std::span<const Bytes> keys) {
  no_capacity(o);
  // The sorted views and common-prefix lengths (24 bytes a key), and the trie's
  // bit vectors, tails and file image, each at most about the keys' bytes.
  uint64_t key_bytes = 0;
  for (Bytes k : keys) key_bytes += k.size();
  return 24 * static_cast<uint64_t>(keys.size()) + 2 * key_bytes + 4096;
}

std::unique_ptr<AnySet> build_succinct(const BuildOptions& o, std::span<const Bytes> keys) {
  no_capacity(o);
  SuccinctSet::Options options;
  using Coding = SuccinctSet::Options::TailCoding;
  const std::string coding = text_option(o.extra, "tail-coding").value_or("auto");  // one of kTailCodings
  options.tail_coding = coding == "always" ? Coding::always : coding == "never" ? Coding::never : Coding::automatic;
  options.key_type = o.key_type;
  if (o.key_type != KeyType::u64) return std::make_unique<AnySuccinct>(SuccinctSet::build(keys, options));
  std::vector<std::string> swapped;  // build_set has checked that each is 8 bytes
  swapped.reserve(keys.size());
  for (Bytes k : keys) swapped.push_back(swap_u64(k));
  return std::make_unique<AnySuccinct>(SuccinctSet::build(swapped, options));
}

std::unique_ptr<AnySet> load_succinct(std::span<const std::byte> file) {
  return std::make_unique<AnySuccinct>(SuccinctSet::load(file));
}

std::unique_ptr<AnySet> open_succinct(const std::string& path) {
  return std::make_unique<AnySuccinct>(SuccinctSet::open(path));
}

// Keys that share no prefix: each key's bytes in the tails and about kSuccinctBytesPerKey
// of trie, bitmaps and directories a key. Keys that share prefixes (URLs, paths, words)
// or whose tails code well take less, often much less (a tenth for numbered keys): the
// estimate is their bound.
std::optional<uint64_t> estimate_succinct(const SizeQuery& q) {
  if (q.key_bytes <= 0) return std::nullopt;
  return static_cast<uint64_t>(static_cast<double>(q.keys) * (q.key_bytes + kSuccinctBytesPerKey)) + 4096;
}

constexpr std::string_view kTailCodings[] = {"auto", "always", "never"};
constexpr OptionSpec kOptions[] = {
    {.name = "tail-coding",
     .type = OptionType::choice,
     .help = "code the tails with a symbol table learnt from them (auto: where that makes the set smaller)",
     .choices = kTailCodings,
     .default_text = "auto"},
};
constexpr std::string_view kFormats[] = {"amq"};

}  // namespace

const KindRow kRow_succinct{
    .kind = Kind::succinct,
    .name = "succinct",
    .summary = "succinct set: a LOUDS trie of the keys, exact and ordered (lists keys, in order); static",
    .caps = {.counts_exactly = true,
             .ordered = true,
             .exact = true,
             .mappable = true,
             .whole_image = true,
             .takes_capacity = false},
    .options = kOptions,
    .formats = kFormats,
    .build = build_succinct,
    .build_bytes = bytes_succinct,
    .load = load_succinct,
    .open = open_succinct,
    .estimate = estimate_succinct,
    .lookup_cost = "a descent of the trie: about one random cache line a key byte not shared",
    .bench_family = "succinct",
};

}  // namespace amq::detail
