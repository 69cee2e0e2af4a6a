// Internal: what the kinds' adapters (src/any_<kind>.cpp) share. Each adapter defines
// its kind's row, `const KindRow kRow_<kind>` (amq/registry.hpp), which src/registry.cpp
// lists and src/any_set.cpp dispatches through.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <utility>

#include "amq/any_set.hpp"
#include "amq/registry.hpp"

namespace amq::detail {

// The rows, one per line of amq/kinds.inc.
#define AMQ_KIND(id, value, name) extern const KindRow kRow_##id;
#include "amq/kinds.inc"
#undef AMQ_KIND

// A checked option's value (build_set and load_set hand the adapters options that
// check_options has turned into their specs' types); nullopt when not given.
std::optional<uint64_t> integer_option(const OptionMap& options, std::string_view name);
std::optional<double> real_option(const OptionMap& options, std::string_view name);
std::optional<std::string> text_option(const OptionMap& options, std::string_view name);  // choice or text
bool flag_option(const OptionMap& options, std::string_view name);
// An amq container's header, params and checksum, about: what a size estimate adds to
// the structure's own bytes.
inline constexpr uint64_t kContainerOverhead = 64;

SetInfo make_info(Kind kind, uint64_t items, uint64_t bytes, double fpp_expected, bool items_exact = true);
std::string fmt_double(double v);

// The forwarding every adapter repeats: a structure S of kind K answering contains and
// contains_many; FilterAdapter adds insert for the filters that grow by inserts.
template <class S, Kind K>
class SetAdapter : public AnySet {
 public:
  explicit SetAdapter(S s) : s_(std::move(s)) {}
  Kind kind() const noexcept override { return K; }
  bool contains(Bytes key) const override { return s_.contains(key); }
  size_t contains_many(std::span<const Bytes> keys, std::span<bool> out) const override {
    return s_.contains_many(keys, out);
  }

 protected:
  S s_;
};
template <class F, Kind K>
class FilterAdapter : public SetAdapter<F, K> {
 public:
  using SetAdapter<F, K>::SetAdapter;
  bool is_dynamic() const noexcept override { return true; }
  void insert(Bytes key) override { this->s_.insert(key); }
};

// The outside formats load_set reads beside the amq container.
std::unique_ptr<AnySet> load_bloom_guava(std::span<const std::byte> file);
std::unique_ptr<AnySet> load_blocked_bloom_parquet(std::span<const std::byte> bitset);
std::unique_ptr<AnySet> load_bip158(std::span<const std::byte> file, const LoadOptions& options);

}  // namespace amq::detail
