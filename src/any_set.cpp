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
#include "format_registry.hpp"

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
  for (const OutsideFormat& f : outside_formats())  // those built through the format registry
    if (f.kind == kind && std::find(allowed.begin(), allowed.end(), f.name) == allowed.end())
      list += ", " + std::string(f.name);
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

namespace {

void check_extra(Kind kind, const BuildOptions& options) {
  for (const auto& [name, value] : options.extra) {
    const auto names = extra_option_names(kind);
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw Error(Errc::invalid_argument, "option --" + name + " does not apply to " + std::string(kind_name(kind)));
  }
}

// What build_set, load_set and open_set hand out: the kind's adapter and the key type
// its file records (or its build was given), which info() states and serialize()
// writes into an amq container's header. Everything else is the adapter's.
class KeyTypedSet final : public AnySet {
 public:
  KeyTypedSet(std::unique_ptr<AnySet> set, KeyType type) : set_(std::move(set)), type_(type) {}
  Kind kind() const noexcept override { return set_->kind(); }
  KeyType key_type() const noexcept override { return type_; }
  bool contains(Bytes key) const override { return set_->contains(key); }
  size_t contains_many(std::span<const Bytes> keys, std::span<bool> out) const override {
    return set_->contains_many(keys, out);
  }
  bool is_dynamic() const noexcept override { return set_->is_dynamic(); }
  void insert(Bytes key) override { set_->insert(key); }
  bool supports_erase() const noexcept override { return set_->supports_erase(); }
  bool erase(Bytes key) override { return set_->erase(key); }
  SetInfo info() const override {
    SetInfo i = set_->info();
    i.params.insert(i.params.begin(),
                    {"key_type", type_ == KeyType::unknown ? "unrecorded" : std::string(key_type_name(type_))});
    return i;
  }
  std::vector<std::byte> serialize() const override {
    std::vector<std::byte> out = set_->serialize();
    if (needs_key_type(out)) set_container_key_type(out, type_);
    return out;
  }
  void write_to(const std::function<void(std::span<const std::byte>)>& sink) const override {
    // A succinct set hands over its own file image, without a copy, and that records the
    // key type it was built or loaded with. The other kinds serialize into a buffer of
    // their own, which serialize() stamps in place (a copy here would double the memory).
    if (set_->kind() != Kind::succinct) return sink(serialize());
    set_->write_to([&](std::span<const std::byte> bytes) {
      if (!needs_key_type(bytes)) return sink(bytes);
      std::vector<std::byte> out(bytes.begin(), bytes.end());
      set_container_key_type(out, type_);
      sink(out);
    });
  }

 private:
  // Outside formats (Guava, Parquet, ...) have no place for it; a set whose file does
  // not record one is written back as it came.
  bool needs_key_type(std::span<const std::byte> file) const {
    return type_ != KeyType::unknown && has_container_magic(file) && container_key_type(file) != type_;
  }

  std::unique_ptr<AnySet> set_;
  KeyType type_;
};

std::unique_ptr<AnySet> with_key_type(std::unique_ptr<AnySet> set, KeyType type) {
  return std::make_unique<KeyTypedSet>(std::move(set), type);
}

// The outside format `options` asks a set of `kind` to be kept in, if it is one.
std::optional<detail::OutsideFormat> outside_format_of(Kind kind, const BuildOptions& options) {
  std::optional<detail::OutsideFormat> f = detail::find_outside_format(options.format);
  if (!f || f->kind != kind) return std::nullopt;
  return detail::linked_outside_format(f->name);
}

std::unique_ptr<AnySet> build_kind(Kind kind, const BuildOptions& options, std::span<const Bytes> keys) {
  if (const auto f = outside_format_of(kind, options)) return f->build(options, keys);
  switch (kind) {
    case Kind::bloom: return detail::build_bloom(options, keys);
    case Kind::blocked_bloom: return detail::build_blocked_bloom(options, keys);
    case Kind::scalable_bloom: return detail::build_scalable_bloom(options, keys);
    case Kind::cuckoo: return detail::build_cuckoo(options, keys);
    case Kind::scalable_cuckoo: return detail::build_scalable_cuckoo(options, keys);
    case Kind::gcs: return detail::build_gcs(options, keys);
    case Kind::succinct: return detail::build_succinct(options, keys);
    case Kind::binary_fuse: return detail::build_binary_fuse(options, keys);
    case Kind::ribbon: return detail::build_ribbon(options, keys);
    case Kind::expandable: return detail::build_expandable(options, keys);
    default: break;
  }
  throw Error(Errc::unsupported, "building a " + std::string(kind_name(kind)) + " is not available in this build");
}

}  // namespace

uint64_t build_bytes(Kind kind, const BuildOptions& options, std::span<const Bytes> keys) {
  check_extra(kind, options);
  if (const auto f = outside_format_of(kind, options)) return f->bytes(options, keys);
  switch (kind) {
    case Kind::bloom: return detail::bytes_bloom(options, keys);
    case Kind::blocked_bloom: return detail::bytes_blocked_bloom(options, keys);
    case Kind::scalable_bloom: return detail::bytes_scalable_bloom(options, keys);
    case Kind::cuckoo: return detail::bytes_cuckoo(options, keys);
    case Kind::scalable_cuckoo: return detail::bytes_scalable_cuckoo(options, keys);
    case Kind::gcs: return detail::bytes_gcs(options, keys);
    case Kind::succinct: return detail::bytes_succinct(options, keys);
    case Kind::binary_fuse: return detail::bytes_binary_fuse(options, keys);
    case Kind::ribbon: return detail::bytes_ribbon(options, keys);
    case Kind::expandable: return detail::bytes_expandable(options, keys);
    default: break;
  }
  throw Error(Errc::unsupported, "building a " + std::string(kind_name(kind)) + " is not available in this build");
}

std::unique_ptr<AnySet> build_set(Kind kind, const BuildOptions& options, std::span<const Bytes> keys) {
  check_extra(kind, options);
  if (options.key_type == KeyType::u64)
    for (Bytes k : keys)
      if (k.size() != 8)
        throw Error(Errc::invalid_argument, "a u64 key is 8 bytes, not " + std::to_string(k.size()));
  if (options.max_bytes) {
    const uint64_t need = build_bytes(kind, options, keys);
    if (need > *options.max_bytes)
      throw Error(Errc::too_large, "a " + std::string(kind_name(kind)) + " of " +
                                       std::to_string(options.capacity.value_or(keys.size())) + " keys needs " +
                                       std::to_string(need) + " bytes of memory, more than the limit of " +
                                       std::to_string(*options.max_bytes) + " bytes");
  }
  return with_key_type(build_kind(kind, options, keys), options.key_type);
}

std::vector<std::string> extra_option_names(Kind kind) {
  switch (kind) {
    case Kind::blocked_bloom: return {"parquet"};
    case Kind::scalable_bloom: return {"growth", "tightening"};
    case Kind::cuckoo: return {"fingerprint-bits", "bucket-size"};
    case Kind::scalable_cuckoo: return {"fingerprint-bits", "bucket-size", "growth"};
    case Kind::gcs: return {"siphash-key", "golomb-p", "golomb-m"};
    case Kind::succinct: return {"tail-coding"};
    case Kind::binary_fuse: return {"fingerprint-bits", "arity"};
    default: return {};
  }
}

std::unique_ptr<AnySet> load_set(std::span<const std::byte> file, std::string_view format) {
  if (detail::find_outside_format(format)) return load_set(file, LoadOptions{.format = std::string(format), .extra = {}});
  if (format != "auto" && format != "amq")
    throw Error(Errc::invalid_argument, "unknown file format '" + std::string(format) + "'");
  if (!has_container_magic(file)) {
    if (format == "auto" && BloomFilter::looks_like_guava(file))
      return with_key_type(detail::load_bloom(file, true), KeyType::unknown);
    throw Error(Errc::bad_magic, format == "auto" ? "not an amq file or a Guava Bloom filter" : "not an amq file");
  }
  // Dispatch on the header's kind; the kind's loader validates the whole file (a
  // parse_container here as well had checksummed every file twice).
  const std::optional<Kind> kind = container_kind(file);
  if (!kind) parse_container(file);  // throws the precise error: truncated, version, kind
  // The kind's loader has checked the header, its key type byte included.
  const KeyType key_type = container_key_type(file);
  switch (kind.value_or(Kind{})) {
    case Kind::bloom: return with_key_type(detail::load_bloom(file, false), key_type);
    case Kind::blocked_bloom: return with_key_type(detail::load_blocked_bloom(file), key_type);
    case Kind::scalable_bloom: return with_key_type(detail::load_scalable_bloom(file), key_type);
    case Kind::cuckoo: return with_key_type(detail::load_cuckoo(file), key_type);
    case Kind::scalable_cuckoo: return with_key_type(detail::load_scalable_cuckoo(file), key_type);
    case Kind::gcs: return with_key_type(detail::load_gcs(file), key_type);
    case Kind::succinct: return with_key_type(detail::load_succinct(file), key_type);
    case Kind::binary_fuse: return with_key_type(detail::load_binary_fuse(file), key_type);
    case Kind::ribbon: return with_key_type(detail::load_ribbon(file), key_type);
    case Kind::expandable: return with_key_type(detail::load_expandable(file), key_type);
    default: break;
  }
  throw Error(Errc::unsupported, "reading a " + std::string(kind_name(kind.value_or(Kind{}))) +
                                     " is not available in this build");
}

std::unique_ptr<AnySet> load_set(std::span<const std::byte> file, const LoadOptions& options) {
  if (detail::find_outside_format(options.format))
    return with_key_type(detail::linked_outside_format(options.format).load(file, options), KeyType::unknown);
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
      const std::optional<Kind> kind =
          in.read(head.data(), head.size()) ? container_kind(std::as_bytes(std::span(head))) : std::nullopt;
      const KeyType key_type = kind ? container_key_type(std::as_bytes(std::span(head))) : KeyType::unknown;
      if (kind == Kind::succinct) return with_key_type(detail::open_succinct(path), key_type);
      if (kind == Kind::binary_fuse) return with_key_type(detail::open_binary_fuse(path), key_type);
      if (kind == Kind::ribbon) return with_key_type(detail::open_ribbon(path), key_type);
    }
  }
  return load_set(read_file(path), options);
}

}  // namespace amq
