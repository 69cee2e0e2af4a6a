// Internal: one build/load pair per kind, defined in src/any_<kind>.cpp and
// dispatched by src/any_set.cpp.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <utility>

#include "amq/any_set.hpp"

namespace amq::detail {

std::string require_format(const BuildOptions& o, std::initializer_list<std::string_view> allowed, Kind kind);
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

// bytes_<kind>: build_bytes for the kind (see any_set.hpp).
uint64_t bytes_bloom(const BuildOptions&, std::span<const Bytes>);
uint64_t bytes_blocked_bloom(const BuildOptions&, std::span<const Bytes>);
uint64_t bytes_scalable_bloom(const BuildOptions&, std::span<const Bytes>);
uint64_t bytes_cuckoo(const BuildOptions&, std::span<const Bytes>);
uint64_t bytes_scalable_cuckoo(const BuildOptions&, std::span<const Bytes>);
uint64_t bytes_gcs(const BuildOptions&, std::span<const Bytes>);
uint64_t bytes_succinct(const BuildOptions&, std::span<const Bytes>);
uint64_t bytes_binary_fuse(const BuildOptions&, std::span<const Bytes>);
uint64_t bytes_ribbon(const BuildOptions&, std::span<const Bytes>);
uint64_t bytes_expandable(const BuildOptions&, std::span<const Bytes>);

std::unique_ptr<AnySet> build_bloom(const BuildOptions&, std::span<const Bytes>);
std::unique_ptr<AnySet> load_bloom(std::span<const std::byte> file, bool guava);
std::unique_ptr<AnySet> build_blocked_bloom(const BuildOptions&, std::span<const Bytes>);
std::unique_ptr<AnySet> load_blocked_bloom(std::span<const std::byte> file);
std::unique_ptr<AnySet> load_blocked_bloom_parquet(std::span<const std::byte> bitset);
std::unique_ptr<AnySet> build_scalable_bloom(const BuildOptions&, std::span<const Bytes>);
std::unique_ptr<AnySet> load_scalable_bloom(std::span<const std::byte> file);
std::unique_ptr<AnySet> build_cuckoo(const BuildOptions&, std::span<const Bytes>);
std::unique_ptr<AnySet> load_cuckoo(std::span<const std::byte> file);
std::unique_ptr<AnySet> build_scalable_cuckoo(const BuildOptions&, std::span<const Bytes>);
std::unique_ptr<AnySet> load_scalable_cuckoo(std::span<const std::byte> file);
std::unique_ptr<AnySet> build_gcs(const BuildOptions&, std::span<const Bytes>);
std::unique_ptr<AnySet> load_gcs(std::span<const std::byte> file);
std::unique_ptr<AnySet> load_bip158(std::span<const std::byte> file, const LoadOptions& options);
std::unique_ptr<AnySet> build_succinct(const BuildOptions&, std::span<const Bytes>);
std::unique_ptr<AnySet> load_succinct(std::span<const std::byte> file);
std::unique_ptr<AnySet> build_expandable(const BuildOptions&, std::span<const Bytes>);
std::unique_ptr<AnySet> load_expandable(std::span<const std::byte> file);
std::unique_ptr<AnySet> open_succinct(const std::string& path);  // memory-mapped
std::unique_ptr<AnySet> build_binary_fuse(const BuildOptions&, std::span<const Bytes>);
std::unique_ptr<AnySet> load_binary_fuse(std::span<const std::byte> file);
std::unique_ptr<AnySet> open_binary_fuse(const std::string& path);  // memory-mapped
std::unique_ptr<AnySet> build_ribbon(const BuildOptions&, std::span<const Bytes>);
std::unique_ptr<AnySet> load_ribbon(std::span<const std::byte> file);
std::unique_ptr<AnySet> open_ribbon(const std::string& path);  // memory-mapped

}  // namespace amq::detail
