// AnySet adapter for SuccinctSet (Kind::succinct): an exact, static set.
#include <string>

#include "amq/error.hpp"
#include "amq/succinct_set.hpp"
#include "any_adapters.hpp"

namespace amq::detail {
namespace {

class AnySuccinct final : public SetAdapter<SuccinctSet, Kind::succinct> {
 public:
  using SetAdapter::SetAdapter;
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
};

void no_capacity(const BuildOptions& o) {
  if (o.capacity)
    throw Error(Errc::invalid_argument,
                "--capacity does not apply to a succinct set: it holds exactly the keys it is built from");
}

}  // namespace

uint64_t bytes_succinct(const BuildOptions& o, std::span<const Bytes> keys) {
  require_format(o, {"amq"}, Kind::succinct);
  no_capacity(o);
  // The sorted views and common-prefix lengths (24 bytes a key), and the trie's
  // bit vectors, tails and file image, each at most about the keys' bytes.
  uint64_t key_bytes = 0;
  for (Bytes k : keys) key_bytes += k.size();
  return 24 * static_cast<uint64_t>(keys.size()) + 2 * key_bytes + 4096;
}

std::unique_ptr<AnySet> build_succinct(const BuildOptions& o, std::span<const Bytes> keys) {
  require_format(o, {"amq"}, Kind::succinct);
  no_capacity(o);
  SuccinctSet::Options options;
  if (const auto it = o.extra.find("tail-coding"); it != o.extra.end()) {
    using Coding = SuccinctSet::Options::TailCoding;
    if (it->second == "auto") options.tail_coding = Coding::automatic;
    else if (it->second == "always") options.tail_coding = Coding::always;
    else if (it->second == "never") options.tail_coding = Coding::never;
    else throw Error(Errc::invalid_argument, "--tail-coding must be auto, always or never, not '" + it->second + "'");
  }
  return std::make_unique<AnySuccinct>(SuccinctSet::build(keys, options));
}

std::unique_ptr<AnySet> load_succinct(std::span<const std::byte> file) {
  return std::make_unique<AnySuccinct>(SuccinctSet::load(file));
}

std::unique_ptr<AnySet> open_succinct(const std::string& path) {
  return std::make_unique<AnySuccinct>(SuccinctSet::open(path));
}

}  // namespace amq::detail
