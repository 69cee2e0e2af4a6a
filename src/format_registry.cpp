#include "format_registry.hpp"

#include <mutex>
#include <string>
#include <vector>

#include "amq/error.hpp"
#include "any_adapters.hpp"

namespace amq::detail {
namespace {

// Guava streams and Parquet bitsets are read from their bytes alone.
void no_options(const LoadOptions& o) {
  for (const auto& [name, value] : o.extra)
    throw Error(Errc::invalid_argument, "option --" + name + " does not apply to format '" + o.format + "'");
}

std::unique_ptr<AnySet> load_guava(std::span<const std::byte> file, const LoadOptions& o) {
  no_options(o);
  return load_bloom_guava(file);
}

std::unique_ptr<AnySet> load_parquet(std::span<const std::byte> file, const LoadOptions& o) {
  no_options(o);
  return load_blocked_bloom_parquet(file);
}

struct Registry {
  std::mutex mutex;
  std::vector<OutsideFormat> rows{
      // Built by their kind's row (any_bloom.cpp, any_blocked_bloom.cpp, any_gcs.cpp).
      {"guava", Kind::bloom, "core", load_guava},
      {"parquet", Kind::blocked_bloom, "core", load_parquet},
      {"bip158", Kind::gcs, "core", load_bip158},
      // Needs SHA-256 and base64 from libcrypto: filled in by amq::formats when linked.
      {"cache-digest", Kind::gcs, "formats"},
  };
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

std::optional<OutsideFormat> find_outside_format(std::string_view name) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  for (const OutsideFormat& f : r.rows)
    if (f.name == name) return f;
  return std::nullopt;
}

std::vector<OutsideFormat> outside_formats() {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  return r.rows;
}

OutsideFormat linked_outside_format(std::string_view name) {
  const std::optional<OutsideFormat> f = find_outside_format(name);
  if (!f) throw Error(Errc::invalid_argument, "unknown file format '" + std::string(name) + "'");
  if (!f->linked()) {
    const std::string c(f->component);
    throw Error(Errc::unsupported, "format '" + std::string(name) + "' is in the amq::" + c +
                                       " component, which this program does not link (link amq::" + c +
                                       " or amq::amq; pkg-config amq-" + c + " or amq)");
  }
  return *f;
}

void register_outside_format(const OutsideFormat& format) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  for (OutsideFormat& f : r.rows)
    if (f.name == format.name) {
      f = format;
      return;
    }
  r.rows.push_back(format);
}

}  // namespace amq::detail
