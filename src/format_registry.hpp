// Internal: the outside file formats AnySet reads and writes besides the amq container,
// one row each. Core (src/format_registry.cpp) holds the rows of the formats it
// implements (guava, parquet, bip158) and names the formats other components implement
// (cache-digest: amq::formats); a component fills its row in when a program links it
// (src/any_cache_digest.cpp). load_set and build_set find a format here by name.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "amq/any_set.hpp"

namespace amq::detail {

struct OutsideFormat {
  std::string_view name;       // LoadOptions::format / BuildOptions::format
  Kind kind;                   // the kind a file in this format holds
  std::string_view component;  // the component that implements it: "core" (amq::core), "formats"
  // Reads a file in this format (options.format == name).
  std::unique_ptr<AnySet> (*load)(std::span<const std::byte> file, const LoadOptions& options) = nullptr;
  // How a set of `kind` built from keys is kept in this format (options.format == name):
  // the set, and the bytes its building takes (build_bytes). Null for the formats core
  // implements, which the kind's row builds (its KindRow::formats lists them).
  std::unique_ptr<AnySet> (*build)(const BuildOptions& options, std::span<const Bytes> keys) = nullptr;
  uint64_t (*bytes)(const BuildOptions& options, std::span<const Bytes> keys) = nullptr;

  bool linked() const noexcept { return load != nullptr; }
};

// Every row, in the order they were registered.
std::vector<OutsideFormat> outside_formats();

// The row named `name`; nullopt for a name that is no outside format.
std::optional<OutsideFormat> find_outside_format(std::string_view name);

// The row named `name`, which must be an outside format, with its functions. Throws
// Errc::unsupported, naming the component, when this program does not link it.
OutsideFormat linked_outside_format(std::string_view name);

// Fills in (or adds) the row of `format.name`; a component calls it once, at start-up.
void register_outside_format(const OutsideFormat& format);

}  // namespace amq::detail
