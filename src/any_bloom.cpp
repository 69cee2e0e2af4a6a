// AnySet adapter for BloomFilter (Kind::bloom), in amq or Guava format.
#include <string>

#include "amq/bloom_filter.hpp"
#include "amq/error.hpp"
#include "any_adapters.hpp"

namespace amq::detail {
namespace {

class AnyBloom final : public AnySet {
 public:
  AnyBloom(BloomFilter f, bool guava) : f_(std::move(f)), guava_(guava) {}
  Kind kind() const noexcept override { return Kind::bloom; }
  bool contains(Bytes key) const override { return f_.contains(key); }
  size_t contains_many(std::span<const Bytes> keys, std::span<bool> out) const override {
    return f_.contains_many(keys, out);
  }
  bool is_dynamic() const noexcept override { return true; }
  void insert(Bytes key) override { f_.insert(key); }
  SetInfo info() const override {
    SetInfo i = make_info(Kind::bloom, f_.approximate_element_count(), serialize().size(), f_.expected_fpp(), false);
    i.format = guava_ ? "guava" : "amq";
    i.params = {{"bits", std::to_string(f_.bit_size())},
                {"hashes", std::to_string(f_.num_hashes())},
                {"strategy", f_.strategy() == GuavaStrategy::murmur128_mitz_64 ? "MURMUR128_MITZ_64"
                                                                               : "MURMUR128_MITZ_32"},
                {"bits_set", std::to_string(f_.bit_count())}};
    return i;
  }
  std::vector<std::byte> serialize() const override { return guava_ ? f_.to_guava() : f_.serialize(); }

 private:
  BloomFilter f_;
  bool guava_;
};

}  // namespace

std::unique_ptr<AnySet> build_bloom(const BuildOptions& o, std::span<const Bytes> keys) {
  const bool guava = require_format(o, {"amq", "guava"}, Kind::bloom) == "guava";
  if (o.seed != 0)
    throw Error(Errc::invalid_argument, "a bloom filter takes no seed: it hashes as Guava does (murmur3, seed 0)");
  auto f = BloomFilter::create(o.capacity.value_or(keys.size()), o.fpp);
  for (Bytes k : keys) f.insert(k);
  return std::make_unique<AnyBloom>(std::move(f), guava);
}

std::unique_ptr<AnySet> load_bloom(std::span<const std::byte> file, bool guava) {
  return std::make_unique<AnyBloom>(guava ? BloomFilter::from_guava(file) : BloomFilter::load(file), guava);
}

}  // namespace amq::detail
