// AnySet adapter for HTTP Cache Digests as base64url text (Kind::gcs, format
// "cache-digest"), and the amq::formats component's entry in core's format registry.
#include <cmath>
#include <string>
#include <vector>

#include "amq/error.hpp"
#include "amq/golomb_coded_set.hpp"
#include "any_adapters.hpp"
#include "checks.hpp"
#include "format_registry.hpp"

namespace amq::detail {
namespace {

// A key is a URL, or "URL<TAB>ETag": the digest hashes the URL followed by the ETag.
CacheDigest::Entry split_entry(Bytes key) {
  const std::string_view s = as_chars(key);
  const size_t tab = s.find('\t');
  if (tab == std::string_view::npos) return {s, {}};
  return {s.substr(0, tab), s.substr(tab + 1)};
}

class AnyCacheDigest final : public AnySet {
 public:
  explicit AnyCacheDigest(CacheDigest d) : d_(std::move(d)) {}
  Kind kind() const noexcept override { return Kind::gcs; }
  bool contains(Bytes key) const override {
    const auto e = split_entry(key);
    return d_.contains(e.url, e.etag);
  }
  SetInfo info() const override {
    const double range = std::ldexp(1.0, static_cast<int>(d_.log2_n() + d_.log2_p()));
    const double n = static_cast<double>(d_.values().size());
    SetInfo i = make_info(Kind::gcs, d_.values().size(), d_.bytes().size(), n ? -std::expm1(n * std::log1p(-1.0 / range)) : 0);
    i.format = "cache-digest";
    i.params = {{"log2_n", std::to_string(d_.log2_n())},
                {"log2_p", std::to_string(d_.log2_p())},
                {"base64url", base64url_encode(d_.bytes())}};
    return i;
  }
  std::vector<std::byte> serialize() const override {
    const std::string text = base64url_encode(d_.bytes()) + "\n";
    const auto b = as_bytes(text);
    return {b.begin(), b.end()};
  }

 private:
  CacheDigest d_;
};

void reject_bip158_options(const OptionMap& extra) {
  for (const auto& [name, value] : extra)
    if (name == "siphash-key" || name == "golomb-p" || name == "golomb-m")
      throw Error(Errc::invalid_argument, "option --" + name + " applies to --format bip158, not cache-digest");
}

void check_build(const BuildOptions& o) {
  if (o.capacity)
    throw Error(Errc::invalid_argument,
                "--capacity does not apply to a gcs: a Golomb-coded set holds exactly the keys it is built from");
}

uint64_t bytes_cache_digest(const BuildOptions& o, std::span<const Bytes> keys) {
  check_build(o);
  // A 64-bit hash a key while sorting, then about log2(1/fpp) + 2 bits a key coded.
  check_fpp(o.fpp, 1.0, false, "Golomb-coded set: ");
  const double bits = 2 + std::log2(1 / o.fpp);
  return static_cast<uint64_t>(static_cast<double>(keys.size()) * (8 + bits / 8)) + 64;
}

std::unique_ptr<AnySet> build_cache_digest(const BuildOptions& o, std::span<const Bytes> keys) {
  check_build(o);
  reject_bip158_options(o.extra);
  std::vector<CacheDigest::Entry> entries;
  entries.reserve(keys.size());
  for (Bytes k : keys) entries.push_back(split_entry(k));
  return std::make_unique<AnyCacheDigest>(CacheDigest::parse(CacheDigest::build(entries, CacheDigest::log2_p_for(o.fpp))));
}

std::unique_ptr<AnySet> load_cache_digest(std::span<const std::byte> file, const LoadOptions& o) {
  reject_bip158_options(o.extra);
  return std::make_unique<AnyCacheDigest>(CacheDigest::parse(base64url_decode(as_chars(file))));
}

}  // namespace
}  // namespace amq::detail

// Registers the component's formats with core's registry. A static initializer calls it
// at start-up; a program linked with a static libamq_formats only gets this object (and
// so the initializer) if something refers to this symbol, which amq::formats' link
// option (-Wl,--undefined=amq_formats_register, also in amq-formats.pc) does. Calling
// it again does nothing more.
extern "C" void amq_formats_register() {
  amq::detail::register_outside_format({"cache-digest", amq::Kind::gcs, "formats", amq::detail::load_cache_digest,
                                        amq::detail::build_cache_digest, amq::detail::bytes_cache_digest});
}

namespace {
[[maybe_unused]] const bool registered = (amq_formats_register(), true);
}  // namespace
