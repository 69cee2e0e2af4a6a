// AnySet adapter for Golomb-coded sets (Kind::gcs): amq's own GolombCodedSet and raw
// BIP158 filters ("bip158"). HTTP Cache Digests ("cache-digest") are amq::formats'
// (src/any_cache_digest.cpp), built and read through the format registry.
#include <cmath>
#include <string>

#include "amq/error.hpp"
#include "amq/golomb_coded_set.hpp"
#include "any_adapters.hpp"
#include "checks.hpp"

namespace amq::detail {
namespace {

std::string hex_u64_le(uint64_t k) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 8; ++i) {
    const auto b = static_cast<uint8_t>(k >> (8 * i));
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

// The BIP158 parameters from --siphash-key, --golomb-p and --golomb-m (checked options).
// Without a key, k0 = k1 = 0 and `has_key` is false.
Bip158Params bip158_params(const OptionMap& options, bool& has_key) {
  const auto p = static_cast<unsigned>(integer_option(options, "golomb-p").value_or(19));
  const uint64_t m = integer_option(options, "golomb-m").value_or(784931);
  const std::optional<std::string> key = text_option(options, "siphash-key");
  has_key = key.has_value();
  if (!has_key) {
    Bip158Params params;
    params.p = p;
    params.m = m;
    return params;
  }
  return Bip158Params::from_hex_key(*key, p, m);
}

void reject_bip158_options(const OptionMap& extra, const std::string& format) {
  for (const auto& [name, value] : extra)
    if (name == "siphash-key" || name == "golomb-p" || name == "golomb-m")
      throw Error(Errc::invalid_argument, "option --" + name + " applies to --format bip158, not " + format);
}

// Bits a key beyond log2(1/fpp) in an amq Golomb-coded set: the unary part of the
// Golomb-Rice code and the bucket directory (estimate_gcs).
constexpr double kGcsExtraBits = 1.6;

class AnyGcs final : public SetAdapter<GolombCodedSet, Kind::gcs> {
 public:
  using SetAdapter::SetAdapter;
  SetInfo info() const override {
    SetInfo i = make_info(Kind::gcs, s_.key_count(), serialize().size(), s_.expected_fpp());
    i.params = {{"range_per_key", std::to_string(s_.range_per_key())},
                {"coding", s_.coding() == GolombCodedSet::Coding::golomb ? "golomb" : "rice"},
                {"divisor", std::to_string(s_.divisor())},
                {"values", std::to_string(s_.size())},
                {"stream_bits", std::to_string(s_.stream_bits())},
                {"buckets", std::to_string(s_.bucket_count())},
                {"offset_bits", std::to_string(s_.offset_width())},
                {"hash", std::string(hasher_name(s_.hasher_id()))},
                {"seed", std::to_string(s_.seed())}};
    return i;
  }
  std::vector<std::byte> serialize() const override { return s_.serialize(); }
};

class AnyBip158 final : public AnySet {
 public:
  AnyBip158(Bip158Filter f, bool has_key) : f_(std::move(f)), has_key_(has_key) {}
  Kind kind() const noexcept override { return Kind::gcs; }
  bool contains(Bytes key) const override {
    need_key();
    return f_.contains(key);
  }
  size_t contains_many(std::span<const Bytes> keys, std::span<bool> out) const override {
    need_key();
    return f_.contains_many(keys, out);
  }
  SetInfo info() const override {
    const double n = static_cast<double>(f_.size());
    const double fpp = f_.size() ? -std::expm1(n * std::log1p(-1.0 / (n * static_cast<double>(f_.params().m)))) : 0;
    SetInfo i = make_info(Kind::gcs, f_.size(), f_.bytes().size(), fpp);
    i.format = "bip158";
    i.params = {{"golomb_p", std::to_string(f_.params().p)}, {"golomb_m", std::to_string(f_.params().m)}};
    if (has_key_) i.params.emplace_back("siphash_key", hex_u64_le(f_.params().k0) + hex_u64_le(f_.params().k1));
    return i;
  }
  std::vector<std::byte> serialize() const override { return {f_.bytes().begin(), f_.bytes().end()}; }

 private:
  void need_key() const {
    if (!has_key_) throw Error(Errc::invalid_argument, "querying a BIP158 filter needs its --siphash-key");
  }
  Bip158Filter f_;
  bool has_key_;
};

void no_capacity(const BuildOptions& o) {
  if (o.capacity)
    throw Error(Errc::invalid_argument,
                "--capacity does not apply to a gcs: a Golomb-coded set holds exactly the keys it is built from");
}


uint64_t bytes_gcs(const BuildOptions& o, std::span<const Bytes> keys) {
  const std::string& format = o.format;
  no_capacity(o);
  // A 64-bit hash a key while sorting, then about log2(1/fpp) + 2 bits a key coded.
  double bits = 0;
  if (format == "bip158") {
    bits = 2 + std::log2(static_cast<double>(integer_option(o.extra, "golomb-m").value_or(784931)));
  } else {
    check_fpp(o.fpp, format == "amq" ? 0.5 : 1.0, format == "amq", "Golomb-coded set: ");
    bits = 2 + std::log2(1 / o.fpp);
  }
  const double n = static_cast<double>(keys.size());
  return static_cast<uint64_t>(n * (8 + bits / 8)) + 64;
}

std::unique_ptr<AnySet> build_gcs(const BuildOptions& o, std::span<const Bytes> keys) {
  const std::string& format = o.format;
  no_capacity(o);
  if (format == "bip158") {
    bool has_key = false;
    const Bip158Params params = bip158_params(o.extra, has_key);
    if (!has_key) throw Error(Errc::invalid_argument, "--format bip158 needs --siphash-key HEX32");
    return std::make_unique<AnyBip158>(Bip158Filter::parse(Bip158Filter::build(keys, params), params), true);
  }
  reject_bip158_options(o.extra, format);
  GolombCodedSet::Options opt;
  opt.fpp = o.fpp;
  opt.seed = o.seed;
  return std::make_unique<AnyGcs>(GolombCodedSet::build(keys, opt));
}

std::unique_ptr<AnySet> load_gcs(std::span<const std::byte> file) {
  GolombCodedSet s = GolombCodedSet::load(file);
  // A set whose keys amq cannot hash is of no use here, for a query or a description:
  // only the program that has its hasher can ask it anything.
  if (s.hasher_id() != Xxh3Hasher::id && s.hasher_id() != Xxh64Hasher::id)
    throw Error(Errc::unsupported, "Golomb-coded set hashed with " +
                                       std::string(s.hasher_id() >= 1000 ? "a user-defined hasher"
                                                                         : hasher_name(s.hasher_id())) +
                                       " (id " + std::to_string(s.hasher_id()) +
                                       "), which amq cannot compute: only a program with that hasher can query it");
  return std::make_unique<AnyGcs>(std::move(s));
}

// A cache digest's rate is a power of 1/2: says so when --fpp was rounded to one.
std::string gcs_build_note(const BuildOptions& o) {
  if (o.format != "cache-digest") return {};
  const double rate = std::ldexp(1.0, -static_cast<int>(CacheDigest::log2_p_for(o.fpp)));
  if (rate == o.fpp) return {};
  return "a cache digest's rate is a power of 1/2: --fpp " + fmt_double(o.fpp) + " was rounded to " + fmt_double(rate);
}

// About log2(1/fpp) + 1.6 bits a key: the Golomb-Rice code and the bucket directory
// (within 1% of the files built for 2e4 to 1e6 keys at rates 1e-2 to 1e-4).
std::optional<uint64_t> estimate_gcs(const SizeQuery& q) {
  check_fpp(q.fpp, 0.5, true, "Golomb-coded set: ");
  const double bits = std::log2(1 / q.fpp) + kGcsExtraBits;
  return static_cast<uint64_t>(static_cast<double>(q.keys) * bits / 8) + kContainerOverhead;
}

constexpr OptionSpec kOptions[] = {
    {.name = "siphash-key",
     .type = OptionType::text,
     .help = "--format bip158: the 16-byte SipHash key, 32 hex digits",
     .load = true},
    {.name = "golomb-p",
     .type = OptionType::integer,
     .help = "--format bip158: Golomb-Rice parameter P",
     .int_min = 1,
     .int_max = 62,
     .default_text = "19",
     .load = true},
    {.name = "golomb-m",
     .type = OptionType::integer,
     .help = "--format bip158: range per element M",
     .int_min = 1,
     .default_text = "784931",
     .load = true},
};
constexpr std::string_view kFormats[] = {"amq", "bip158", "cache-digest"};

}  // namespace

const KindRow kRow_gcs{
    .kind = Kind::gcs,
    .name = "gcs",
    .summary = "Golomb-coded set: sorted hashes, Golomb-Rice coded; the smallest static filter (also BIP158, Cache Digest)",
    .caps = {.counts_exactly = true, .takes_capacity = false},
    .options = kOptions,
    .formats = kFormats,
    .build = build_gcs,
    .build_bytes = bytes_gcs,
    .load = load_gcs,
    .open = nullptr,
    .estimate = estimate_gcs,
    .lookup_cost = "1 random bucket, then a short sequential decode",
    .bench_family = "gcs",
    .build_note = gcs_build_note,
};

std::unique_ptr<AnySet> load_bip158(std::span<const std::byte> file, const LoadOptions& o) {
  bool has_key = false;
  const Bip158Params params = bip158_params(o.extra, has_key);
  return std::make_unique<AnyBip158>(Bip158Filter::parse(file, params), has_key);
}

}  // namespace amq::detail
