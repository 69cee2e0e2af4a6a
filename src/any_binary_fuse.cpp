// AnySet adapter for BinaryFuseFilter (Kind::binary_fuse): a static filter whose width
// is picked from the rate (w = ceil(log2(1/p))) and whose arity from the key count,
// unless --fingerprint-bits or --arity say otherwise.
#include <cstdlib>
#include <string>

#include "amq/binary_fuse_filter.hpp"
#include "amq/error.hpp"
#include "any_adapters.hpp"

namespace amq::detail {
namespace {

class AnyBinaryFuse final : public SetAdapter<BinaryFuseFilter, Kind::binary_fuse> {
 public:
  using SetAdapter::SetAdapter;
  SetInfo info() const override {
    SetInfo i = make_info(Kind::binary_fuse, s_.size(), s_.bytes().size(), s_.expected_fpp(), true);
    i.params = {{"arity", std::to_string(s_.arity())},
                {"fingerprint_bits", std::to_string(s_.fingerprint_bits())},
                {"segment_length", std::to_string(s_.segment_length())},
                {"segments", std::to_string(s_.segment_count())},
                {"slots", std::to_string(s_.slot_count())},
                {"fpp", fmt_double(s_.expected_fpp())},
                {"hash", "xxh3 seed " + std::to_string(s_.hash_seed())},
                {"memory_bytes", std::to_string(s_.size_in_bytes())},
                {"mapped", s_.is_mapped() ? "yes" : "no"}};
    return i;
  }
  std::vector<std::byte> serialize() const override { return s_.serialize(); }
  void write_to(const std::function<void(std::span<const std::byte>)>& sink) const override { sink(s_.bytes()); }
};

unsigned parse_small(const BuildOptions& o, const std::string& name, unsigned lo, unsigned hi) {
  const std::string& v = o.extra.at(name);
  char* end = nullptr;
  const unsigned long x = std::strtoul(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || x < lo || x > hi)
    throw Error(Errc::invalid_argument, "--" + name + " must be an integer from " + std::to_string(lo) + " to " +
                                            std::to_string(hi) + ", not '" + v + "'");
  return static_cast<unsigned>(x);
}

}  // namespace

namespace {

BinaryFuseOptions fuse_options(const BuildOptions& o, std::span<const Bytes> keys) {
  BinaryFuseOptions options;
  options.seed = o.seed;
  options.fingerprint_bits = o.extra.count("fingerprint-bits") ? parse_small(o, "fingerprint-bits", 1, 32)
                                                               : BinaryFuseFilter::bits_for_fpp(o.fpp);
  options.arity = o.extra.count("arity") ? parse_small(o, "arity", 3, 4) : BinaryFuseFilter::best_arity(keys.size());
  return options;
}

}  // namespace

uint64_t bytes_binary_fuse(const BuildOptions& o, std::span<const Bytes> keys) {
  require_format(o, {"amq"}, Kind::binary_fuse);
  const BinaryFuseOptions options = fuse_options(o, keys);
  // The filter's slots, and the construction's working memory (under 24 bytes a key,
  // binary_fuse_filter.hpp).
  const uint64_t n = keys.size();
  return BinaryFuseFilter::slots_for(n, options.arity) * options.fingerprint_bits / 8 + 24 * n + 4096;
}

std::unique_ptr<AnySet> build_binary_fuse(const BuildOptions& o, std::span<const Bytes> keys) {
  require_format(o, {"amq"}, Kind::binary_fuse);
  return std::make_unique<AnyBinaryFuse>(BinaryFuseFilter::build(keys, fuse_options(o, keys)));
}

std::unique_ptr<AnySet> load_binary_fuse(std::span<const std::byte> file) {
  return std::make_unique<AnyBinaryFuse>(BinaryFuseFilter::load(file));
}

std::unique_ptr<AnySet> open_binary_fuse(const std::string& path) {
  return std::make_unique<AnyBinaryFuse>(BinaryFuseFilter::open(path));
}

}  // namespace amq::detail
