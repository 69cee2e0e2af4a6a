#include "amq/any_set.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "amq/bloom_filter.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "any_adapters.hpp"

namespace amq {

size_t AnySet::contains_many(std::span<const Bytes> keys, std::span<bool> out) const {
  size_t found = 0;
  for (size_t i = 0; i < keys.size(); ++i) found += (out[i] = contains(keys[i]));
  return found;
}

void AnySet::insert(Bytes) {
  throw Error(Errc::unsupported, "a " + std::string(kind_name(kind())) + " is static: keys cannot be added");
}

bool AnySet::erase(Bytes) {
  throw Error(Errc::unsupported, "a " + std::string(kind_name(kind())) + " cannot erase keys");
}

namespace detail {

std::string require_format(const BuildOptions& o, std::initializer_list<std::string_view> allowed, Kind kind) {
  for (auto a : allowed)
    if (o.format == a) return o.format;
  std::string list;
  for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  throw Error(Errc::invalid_argument, "format '" + o.format + "' is not available for " +
                                          std::string(kind_name(kind)) + " (choose: " + list + ")");
}

SetInfo make_info(Kind kind, uint64_t items, uint64_t bytes, double fpp_expected, bool items_exact) {
  SetInfo i;
  i.kind = kind;
  i.items = items;
  i.items_exact = items_exact;
  i.bytes = bytes;
  i.bits_per_key = items ? 8.0 * static_cast<double>(bytes) / static_cast<double>(items) : 0.0;
  i.fpp_expected = fpp_expected;
  return i;
}

std::string fmt_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace detail

std::unique_ptr<AnySet> build_set(Kind kind, const BuildOptions& options, std::span<const Bytes> keys) {
  for (const auto& [name, value] : options.extra) {
    const auto names = extra_option_names(kind);
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw Error(Errc::invalid_argument, "option --" + name + " does not apply to " + std::string(kind_name(kind)));
  }
  switch (kind) {
    case Kind::bloom: return detail::build_bloom(options, keys);
    case Kind::blocked_bloom: return detail::build_blocked_bloom(options, keys);
    case Kind::scalable_bloom: return detail::build_scalable_bloom(options, keys);
    case Kind::cuckoo: return detail::build_cuckoo(options, keys);
    case Kind::scalable_cuckoo: return detail::build_scalable_cuckoo(options, keys);
    case Kind::gcs: return detail::build_gcs(options, keys);
    case Kind::succinct: return detail::build_succinct(options, keys);
    case Kind::expandable: return detail::build_expandable(options, keys);
    default: break;
  }
  throw Error(Errc::unsupported, "building a " + std::string(kind_name(kind)) + " is not available in this build");
}

std::vector<std::string> extra_option_names(Kind kind) {
  switch (kind) {
    case Kind::blocked_bloom: return {"parquet"};
    case Kind::scalable_bloom: return {"growth", "tightening"};
    case Kind::cuckoo: return {"fingerprint-bits", "bucket-size"};
    case Kind::scalable_cuckoo: return {"fingerprint-bits", "bucket-size", "growth"};
    case Kind::gcs: return {"siphash-key", "golomb-p", "golomb-m"};
    case Kind::succinct: return {"tail-coding"};
    default: return {};
  }
}

std::unique_ptr<AnySet> load_set(std::span<const std::byte> file, std::string_view format) {
  if (format == "guava") return detail::load_bloom(file, true);
  if (format == "parquet") return detail::load_blocked_bloom_parquet(file);
  if (format != "auto" && format != "amq")
    throw Error(Errc::invalid_argument, "unknown file format '" + std::string(format) + "'");
  if (!has_container_magic(file)) {
    if (format == "auto" && BloomFilter::looks_like_guava(file)) return detail::load_bloom(file, true);
    throw Error(Errc::bad_magic, format == "auto" ? "not an amq file or a Guava Bloom filter" : "not an amq file");
  }
  // Dispatch on the header's kind; the kind's loader validates the whole file (a
  // parse_container here as well had checksummed every file twice).
  const std::optional<Kind> kind = container_kind(file);
  if (!kind) parse_container(file);  // throws the precise error: truncated, version, kind
  switch (kind.value_or(Kind{})) {
    case Kind::bloom: return detail::load_bloom(file, false);
    case Kind::blocked_bloom: return detail::load_blocked_bloom(file);
    case Kind::scalable_bloom: return detail::load_scalable_bloom(file);
    case Kind::cuckoo: return detail::load_cuckoo(file);
    case Kind::scalable_cuckoo: return detail::load_scalable_cuckoo(file);
    case Kind::gcs: return detail::load_gcs(file);
    case Kind::succinct: return detail::load_succinct(file);
    case Kind::expandable: return detail::load_expandable(file);
    default: break;
  }
  throw Error(Errc::unsupported, "reading a " + std::string(kind_name(kind.value_or(Kind{}))) +
                                     " is not available in this build");
}

std::unique_ptr<AnySet> load_set(std::span<const std::byte> file, const LoadOptions& options) {
  if (options.format == "bip158" || options.format == "cache-digest") return detail::load_gcs_outside(file, options);
  for (const auto& [name, value] : options.extra)
    throw Error(Errc::invalid_argument, "option --" + name + " does not apply to format '" + options.format + "'");
  return load_set(file, options.format);
}

std::unique_ptr<AnySet> open_set(const std::string& path, const LoadOptions& options) {
  if ((options.format == "auto" || options.format == "amq") && options.extra.empty()) {
    // Only a regular file's header is peeked at: a pipe's bytes would be consumed.
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) {
      std::array<char, kContainerHeaderSize> head{};
      std::ifstream in(path, std::ios::binary);
      if (in.read(head.data(), head.size()) && container_kind(std::as_bytes(std::span(head))) == Kind::succinct)
        return detail::open_succinct(path);
    }
  }
  return load_set(read_file(path), options);
}

}  // namespace amq
