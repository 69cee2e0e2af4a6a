// AnySet adapter for ExpandableFilter (Kind::expandable): dynamic, grows without a
// capacity limit, and able to erase.
#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "amq/error.hpp"
#include "amq/expandable_filter.hpp"
#include "any_adapters.hpp"

namespace amq::detail {
namespace {

std::string copies_refused(const ExpandableFilter& f, Bytes key) {
  return "the expandable filter holds " + std::to_string(f.count(key)) +
         " entries matching this key in its two buckets (at most 8 copies of one key)";
}

class AnyExpandable final : public FilterAdapter<ExpandableFilter, Kind::expandable> {
 public:
  using FilterAdapter::FilterAdapter;
  void insert(Bytes key) override {
    if (!s_.insert(key)) throw Error(Errc::full, copies_refused(s_, key));
  }
  bool supports_erase() const noexcept override { return true; }
  bool erase(Bytes key) override { return s_.erase(key); }
  SetInfo info() const override {
    SetInfo i = make_info(Kind::expandable, s_.size(), serialize().size(), s_.fpp_bound(), true);
    i.params = {{"fpp", fmt_double(s_.target_fpp())},
                {"slot_bits", std::to_string(s_.slot_bits())},
                {"bucket_size", std::to_string(ExpandableFilter::kBucketSize)},
                {"buckets", std::to_string(s_.num_buckets())},
                {"level", std::to_string(s_.level())},
                {"entries", std::to_string(s_.entries())},
                {"load", fmt_double(s_.load_factor())},
                {"fpp_bound", fmt_double(s_.fpp_bound())},
                {"stash", std::to_string(s_.stash_size())},
                {"hasher", "xxh3"},
                {"seed", std::to_string(s_.seed())}};
    return i;
  }
  std::vector<std::byte> serialize() const override { return s_.serialize(); }
};


// The fewest buckets that hold n keys at the filter's load (it grows one bucket at a time).
uint64_t buckets_for(uint64_t n) {
  const double b = std::ceil(static_cast<double>(std::max<uint64_t>(n, 1)) /
                             (ExpandableFilter::kMaxLoad * ExpandableFilter::kBucketSize));
  return static_cast<uint64_t>(std::min(b, std::ldexp(1.0, ExpandableFilter::kMaxLevel)));
}

uint64_t bytes_expandable(const BuildOptions& o, std::span<const Bytes> keys) {
  // The table for the capacity (or the keys) at its largest slots (4 bytes) with an
  // eighth of room to grow and the old table while it is copied, and the set that
  // drops repeated keys (~48 bytes a key).
  const uint64_t n = keys.size();
  const uint64_t cap = std::max<uint64_t>(o.capacity.value_or(n), n);
  return 3 * buckets_for(cap) * ExpandableFilter::kBucketSize * 4 + 48 * n + 4096;
}

std::unique_ptr<AnySet> build_expandable(const BuildOptions& o, std::span<const Bytes> keys) {
  // A key repeated in the input is inserted once, as the cuckoo kinds do; the
  // capacity defaults to the distinct keys given (the filter grows past it).
  std::unordered_set<std::string_view> seen;
  seen.reserve(keys.size());
  std::vector<Bytes> first;
  first.reserve(keys.size());
  for (Bytes k : keys)
    if (seen.insert(std::string_view(reinterpret_cast<const char*>(k.data()), k.size())).second) first.push_back(k);
  ExpandableFilter f(o.capacity.value_or(first.size()), o.fpp, o.seed);
  for (Bytes k : first)
    if (!f.insert(k)) throw Error(Errc::full, copies_refused(f, k));
  return std::make_unique<AnyExpandable>(std::move(f));
}

std::unique_ptr<AnySet> load_expandable(std::span<const std::byte> file) {
  return std::make_unique<AnyExpandable>(ExpandableFilter::load(file));
}

// The table for n keys: the fewest buckets that hold them at the filter's load, of
// 16-bit slots, or of 32-bit ones when the rate needs longer remainders than 16-bit
// slots hold (the filter's constructor starts wide when a full table of 16-bit slots
// would pass 0.95 fpp; growth from a small capacity may widen later).
std::optional<uint64_t> estimate_expandable(const SizeQuery& q) {
  (void)ExpandableFilter(1, q.fpp, 0);  // throws for a rate the filter does not take
  using F = ExpandableFilter;
  const double narrow_bound =
      F::kMaxLoad * F::kBucketSize * std::ldexp(1.0, -static_cast<int>(F::kTagBits + 16 - F::kOverheadBits));
  const uint64_t slot_bytes = narrow_bound > 0.95 * q.fpp ? 4 : 2;
  return buckets_for(q.keys) * ExpandableFilter::kBucketSize * slot_bytes + kContainerOverhead;
}

constexpr std::string_view kFormats[] = {"amq"};

}  // namespace

const KindRow kRow_expandable{
    .kind = Kind::expandable,
    .name = "expandable",
    .summary = "expandable filter: a cuckoo-like table that grows a bucket at a time, keeping its rate; inserts and erases",
    .caps = {.dynamic = true, .erase = true, .counts_exactly = true, .grows = true},
    .options = {},
    .formats = kFormats,
    .build = build_expandable,
    .build_bytes = bytes_expandable,
    .load = load_expandable,
    .open = nullptr,
    .estimate = estimate_expandable,
    .lookup_cost = "2 random buckets (2 cache lines)",
    .bench_family = "expandable",
};

}  // namespace amq::detail
