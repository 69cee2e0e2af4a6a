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
                {"hash", "xxh3 seed " + std::to_string(s_.hash_seed()) +
                             (s_.integer_keys() ? ", 8-byte keys as integers" : "")},
                {"memory_bytes", std::to_string(s_.size_in_bytes())},
                {"mapped", s_.is_mapped() ? "yes" : "no"}};
    return i;
  }
  std::vector<std::byte> serialize() const override { return s_.serialize(); }
  void write_to(const std::function<void(std::span<const std::byte>)>& sink) const override { sink(s_.bytes()); }
};

BinaryFuseOptions fuse_options(const BuildOptions& o, uint64_t keys) {
  BinaryFuseOptions options;
  options.seed = o.seed;
  const std::optional<uint64_t> bits = integer_option(o.extra, "fingerprint-bits");
  const std::optional<uint64_t> arity = integer_option(o.extra, "arity");
  options.fingerprint_bits = bits ? static_cast<unsigned>(*bits) : BinaryFuseFilter::bits_for_fpp(o.fpp);
  options.arity = arity ? static_cast<unsigned>(*arity) : BinaryFuseFilter::best_arity(keys);
  return options;
}

uint64_t bytes_binary_fuse(const BuildOptions& o, std::span<const Bytes> keys) {
  const BinaryFuseOptions options = fuse_options(o, keys.size());
  // The filter's slots, and the construction's working memory (under 24 bytes a key,
  // binary_fuse_filter.hpp).
  const uint64_t n = keys.size();
  return BinaryFuseFilter::slots_for(n, options.arity) * options.fingerprint_bits / 8 + 24 * n + 4096;
}

std::unique_ptr<AnySet> build_binary_fuse(const BuildOptions& o, std::span<const Bytes> keys) {
  return std::make_unique<AnyBinaryFuse>(BinaryFuseFilter::build(keys, fuse_options(o, keys.size())));
}

std::unique_ptr<AnySet> load_binary_fuse(std::span<const std::byte> file) {
  return std::make_unique<AnyBinaryFuse>(BinaryFuseFilter::load(file));
}

std::unique_ptr<AnySet> open_binary_fuse(const std::string& path) {
  return std::make_unique<AnyBinaryFuse>(BinaryFuseFilter::open(path));
}

std::optional<uint64_t> estimate_binary_fuse(const SizeQuery& q) {
  BuildOptions o;
  o.fpp = q.fpp;
  o.extra = q.options;
  const BinaryFuseOptions options = fuse_options(o, q.keys);
  return BinaryFuseFilter::slots_for(q.keys, options.arity) * options.fingerprint_bits / 8 + kContainerOverhead;
}

constexpr OptionSpec kOptions[] = {
    {.name = "fingerprint-bits",
     .type = OptionType::integer,
     .help = "fingerprint bits",
     .int_min = 1,
     .int_max = 32,
     .default_help = "from --fpp"},
    {.name = "arity",
     .type = OptionType::integer,
     .help = "slots a key",
     .int_min = 3,
     .int_max = 4,
     .default_help = "the smaller filter"},
};
constexpr std::string_view kFormats[] = {"amq"};

}  // namespace

const KindRow kRow_binary_fuse{
    .kind = Kind::binary_fuse,
    .name = "binary-fuse",
    .summary = "binary fuse filter: XOR of 3 or 4 fingerprints, about 1.13 log2(1/fpp) bits a key; static",
    .caps = {.counts_exactly = true, .mappable = true, .takes_capacity = false},
    .options = kOptions,
    .formats = kFormats,
    .build = build_binary_fuse,
    .build_bytes = bytes_binary_fuse,
    .load = load_binary_fuse,
    .open = open_binary_fuse,
    .estimate = estimate_binary_fuse,
    .lookup_cost = "3 or 4 random slots in one segment window",
    .bench_family = "binary-fuse",
};

}  // namespace amq::detail
