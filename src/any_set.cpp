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

namespace {

template <class T>
std::optional<T> typed_option(const OptionMap& options, std::string_view name) {
  const auto it = options.find(name);
  if (it == options.end()) return std::nullopt;
  if (const T* v = std::get_if<T>(&it->second)) return *v;
  throw Error(Errc::invalid_argument, "option --" + std::string(name) + " was not checked against its kind");
}

}  // namespace

std::optional<uint64_t> integer_option(const OptionMap& options, std::string_view name) {
  return typed_option<uint64_t>(options, name);
}
std::optional<double> real_option(const OptionMap& options, std::string_view name) {
  return typed_option<double>(options, name);
}
std::optional<std::string> text_option(const OptionMap& options, std::string_view name) {
  return typed_option<std::string>(options, name);
}
bool flag_option(const OptionMap& options, std::string_view name) {
  return typed_option<bool>(options, name).value_or(false);
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

// `options` with its kind-specific options checked against the row (each turned into its
// spec's type) and its output format one the kind writes.
BuildOptions checked_build_options(const KindRow& row, const BuildOptions& options) {
  BuildOptions out = options;
  out.extra = check_options(row, options.extra);
  if (!row.writes_format(options.format)) {
    std::string list;
    for (std::string_view f : row.formats) list += (list.empty() ? "" : ", ") + std::string(f);
    throw Error(Errc::invalid_argument, "format '" + options.format + "' is not available for " +
                                            std::string(row.name) + " (choose: " + list + ")");
  }
  return out;
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
    // A set that is its own file image (a succinct set) hands it over without a copy, and
    // that records the key type it was built or loaded with. The other kinds serialize
    // into a buffer of their own, which serialize() stamps in place (a copy here would
    // double the memory).
    if (!kind_row(set_->kind()).caps.whole_image) return sink(serialize());
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

// The outside format, implemented outside core (amq::formats' cache-digest), that a set of
// `kind` is to be built in; nullopt when the kind's own row builds it (the amq container,
// and the outside formats core implements in the kind's adapter: guava, parquet, bip158).
// Throws Errc::unsupported, naming the component, when this program does not link it.
std::optional<detail::OutsideFormat> component_format(Kind kind, const BuildOptions& options) {
  const std::optional<detail::OutsideFormat> f = detail::find_outside_format(options.format);
  if (!f || f->kind != kind || f->component == "core") return std::nullopt;
  return detail::linked_outside_format(f->name);
}

// Load options for an outside format, checked against the options of the kind that
// writes it that apply when loading (bip158's --siphash-key, ...).
LoadOptions checked_load_options(const LoadOptions& options) {
  LoadOptions out = options;
  for (const KindRow* row : kind_rows())
    if (row->writes_format(options.format)) out.extra = check_options(*row, options.extra, true);
  return out;
}

}  // namespace

uint64_t build_bytes(Kind kind, const BuildOptions& options, std::span<const Bytes> keys) {
  const KindRow& row = kind_row(kind);
  const BuildOptions checked = checked_build_options(row, options);
  if (const auto f = component_format(kind, checked)) return f->bytes(checked, keys);
  return row.build_bytes(checked, keys);
}

std::unique_ptr<AnySet> build_set(Kind kind, const BuildOptions& options, std::span<const Bytes> keys) {
  const KindRow& row = kind_row(kind);
  const BuildOptions checked = checked_build_options(row, options);
  if (options.key_type == KeyType::u64)
    for (Bytes k : keys)
      if (k.size() != 8)
        throw Error(Errc::invalid_argument, "a u64 key is 8 bytes, not " + std::to_string(k.size()));
  const std::optional<detail::OutsideFormat> component = component_format(kind, checked);
  if (options.max_bytes) {
    const uint64_t need = component ? component->bytes(checked, keys) : row.build_bytes(checked, keys);
    if (need > *options.max_bytes)
      throw Error(Errc::too_large, "a " + std::string(row.name) + " of " +
                                       std::to_string(options.capacity.value_or(keys.size())) + " keys needs " +
                                       std::to_string(need) + " bytes of memory, more than the limit of " +
                                       std::to_string(*options.max_bytes) + " bytes");
  }
  return with_key_type(component ? component->build(checked, keys) : row.build(checked, keys), options.key_type);
}

std::vector<std::string> extra_option_names(Kind kind) {
  std::vector<std::string> names;
  for (const OptionSpec& spec : kind_row(kind).options) names.emplace_back(spec.name);
  return names;
}

std::unique_ptr<AnySet> load_set(std::span<const std::byte> file, std::string_view format) {
  if (detail::find_outside_format(format)) return load_set(file, LoadOptions{.format = std::string(format), .extra = {}});
  if (format != "auto" && format != "amq")
    throw Error(Errc::invalid_argument, "unknown file format '" + std::string(format) + "'");
  if (!has_container_magic(file)) {
    if (format == "auto" && BloomFilter::looks_like_guava(file))
      return with_key_type(detail::load_bloom_guava(file), KeyType::unknown);
    throw Error(Errc::bad_magic, format == "auto" ? "not an amq file or a Guava Bloom filter" : "not an amq file");
  }
  // Dispatch on the header's kind; the kind's loader validates the whole file (a
  // parse_container here as well had checksummed every file twice).
  const std::optional<Kind> kind = container_kind(file);
  if (!kind) parse_container(file);  // throws the precise error: truncated, version, kind
  // The kind's loader has checked the header, its key type byte included.
  const KeyType key_type = container_key_type(file);
  return with_key_type(kind_row(kind.value_or(Kind{})).load(file), key_type);
}

std::unique_ptr<AnySet> load_set(std::span<const std::byte> file, const LoadOptions& options) {
  if (detail::find_outside_format(options.format))
    return with_key_type(detail::linked_outside_format(options.format).load(file, checked_load_options(options)),
                         KeyType::unknown);
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
      if (kind && kind_row(*kind).open) return with_key_type(kind_row(*kind).open(path), key_type);
    }
  }
  return load_set(read_file(path), options);
}

}  // namespace amq
