// AnySet adapters for CuckooFilter (Kind::cuckoo) and ScalableCuckooFilter
// (Kind::scalable_cuckoo): dynamic, and able to erase.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "amq/cuckoo_filter.hpp"
#include "amq/error.hpp"
#include "amq/scalable_cuckoo_filter.hpp"
#include "checks.hpp"
#include "any_adapters.hpp"

namespace amq::detail {
namespace {

std::string hasher_text(uint32_t id) { return std::string(hasher_name(id)); }

std::string full_message(uint64_t items, uint64_t slots, double load) {
  return "the cuckoo filter is full at load " + fmt_double(load) + " (" + std::to_string(items) +
         " fingerprints in " + std::to_string(slots) +
         " slots): rebuild it with a larger --capacity, or as a scalable-cuckoo";
}

// Why an insert of `key` failed when its two buckets already hold `copies` of its
// fingerprint: a bucket pair holds at most 2b copies, whatever the load.
std::string copies_message(size_t copies, uint32_t bucket_size) {
  return "too many copies of this key: its two buckets hold at most 2b = " + std::to_string(2 * bucket_size) +
         " copies of one fingerprint and have " + std::to_string(copies) +
         " (adding a key stores one more copy each time)";
}

// `amq build` makes a set: a key given more than once is inserted once. Keys are told
// apart by their bytes, so two keys that share a 64-bit hash are both inserted and
// erasing one leaves the other. Returns, per key, whether it is the first of its
// bytes; costs 16 bytes a key while it runs.
std::vector<bool> first_occurrences(std::span<const Bytes> keys, uint64_t seed) {
  std::vector<std::pair<uint64_t, size_t>> order(keys.size());
  const Xxh3Hasher hash{.seed = seed};
  for (size_t i = 0; i < keys.size(); ++i) order[i] = {hash(keys[i]), i};
  std::sort(order.begin(), order.end());
  std::vector<bool> first(keys.size(), true);
  for (size_t a = 0; a < order.size();) {
    size_t b = a + 1;
    while (b < order.size() && order[b].first == order[a].first) ++b;
    for (size_t j = a + 1; j < b; ++j) {
      const Bytes kj = keys[order[j].second];
      for (size_t k = a; k < j; ++k) {
        const Bytes kk = keys[order[k].second];
        if (first[order[k].second] && std::ranges::equal(kj, kk)) {
          first[order[j].second] = false;
          break;
        }
      }
    }
    a = b;
  }
  return first;
}

class AnyCuckoo final : public SetAdapter<CuckooFilter, Kind::cuckoo> {
 public:
  using SetAdapter::SetAdapter;
  bool is_dynamic() const noexcept override { return true; }
  void insert(Bytes key) override {
    if (s_.insert(key) != CuckooStatus::full) return;
    if (const size_t c = s_.count(key); c >= 2 * s_.bucket_size())
      throw Error(Errc::full, copies_message(c, s_.bucket_size()));
    throw Error(Errc::full, full_message(s_.size(), s_.slots(), s_.load_factor()));
  }
  bool supports_erase() const noexcept override { return true; }
  bool erase(Bytes key) override { return s_.erase(key); }
  SetInfo info() const override {
    SetInfo i = make_info(Kind::cuckoo, s_.size(), serialize().size(), s_.expected_fpp(), true);
    i.params = {{"fingerprint_bits", std::to_string(s_.fingerprint_bits())},
                {"bucket_size", std::to_string(s_.bucket_size())},
                {"buckets", std::to_string(s_.num_buckets())},
                {"slots", std::to_string(s_.slots())},
                {"load", fmt_double(s_.load_factor())},
                {"fpp_bound", fmt_double(s_.fpp_bound())},
                {"hasher", hasher_text(Xxh3Hasher::id)},
                {"seed", std::to_string(s_.hasher().seed)}};
    return i;
  }
  std::vector<std::byte> serialize() const override { return s_.serialize(); }
};

class AnyScalableCuckoo final : public SetAdapter<ScalableCuckooFilter, Kind::scalable_cuckoo> {
 public:
  using SetAdapter::SetAdapter;
  bool is_dynamic() const noexcept override { return true; }
  void insert(Bytes key) override {
    if (s_.insert(key) != CuckooStatus::full) return;
    if (const size_t c = s_.count(key); c >= 2 * s_.params().bucket_size)
      throw Error(Errc::full, copies_message(c, s_.params().bucket_size));
    throw Error(Errc::full, "the scalable cuckoo filter cannot take this key (" +
                                  std::to_string(s_.num_levels()) + " of at most " +
                                  std::to_string(s_.max_levels()) +
                                  " levels; the level that matches the key is full, or no further level fits the "
                                  "false-positive budget)");
  }
  bool supports_erase() const noexcept override { return true; }
  bool erase(Bytes key) override { return s_.erase(key); }
  SetInfo info() const override {
    SetInfo i = make_info(Kind::scalable_cuckoo, s_.size(), serialize().size(), s_.expected_fpp(), true);
    const auto& p = s_.params();
    std::string bits;
    for (size_t l = 0; l < s_.num_levels(); ++l) {
      if (l) bits += ',';
      bits += std::to_string(s_.level_fingerprint_bits(l));
    }
    i.params = {{"levels", std::to_string(s_.num_levels())},
                {"max_levels", std::to_string(s_.max_levels())},
                {"fingerprint_bits", bits},
                {"bucket_size", std::to_string(p.bucket_size)},
                {"initial_capacity", std::to_string(p.initial_capacity)},
                {"growth", std::to_string(p.growth)},
                {"fpp", fmt_double(p.fpp)},
                {"fpp_bound", fmt_double(s_.fpp_bound())},
                {"slots", std::to_string(s_.slots())},
                {"load", fmt_double(s_.load_factor())},
                {"hasher", hasher_text(Xxh3Hasher::id)},
                {"seed", std::to_string(s_.hasher().seed)}};
    return i;
  }
  std::vector<std::byte> serialize() const override { return s_.serialize(); }
};

// The table build_cuckoo makes: f and b from the options, or chosen for --fpp.
CuckooParams cuckoo_geometry(const BuildOptions& o, uint64_t capacity) {
  const std::optional<uint64_t> f = integer_option(o.extra, "fingerprint-bits");
  const std::optional<uint64_t> b = integer_option(o.extra, "bucket-size");
  if (!f && !b) return choose_cuckoo_params(capacity, o.fpp);
  const uint32_t bucket = static_cast<uint32_t>(b.value_or(4));
  if (f) return cuckoo_params_for(capacity, static_cast<uint32_t>(*f), bucket);
  check_fpp(o.fpp, 1.0, false, "cuckoo filter: ");
  return cuckoo_params_for(capacity,
                           static_cast<uint32_t>(std::clamp(std::ceil(std::log2(2.0 * bucket / o.fpp)), 4.0, 32.0)),
                           bucket);
}

// `distinct`: the number of distinct keys (an upper bound will do for sizing).
ScalableCuckooParams scalable_cuckoo_params(const BuildOptions& o, uint64_t distinct) {
  ScalableCuckooParams p;
  p.initial_capacity = o.capacity.value_or(std::max<uint64_t>(distinct, 1000));
  p.fpp = o.fpp;
  p.bucket_size = static_cast<uint32_t>(integer_option(o.extra, "bucket-size").value_or(4));
  p.fingerprint_bits = static_cast<uint32_t>(integer_option(o.extra, "fingerprint-bits").value_or(0));
  p.growth = static_cast<uint32_t>(integer_option(o.extra, "growth").value_or(p.growth));
  return p;
}

// The peak of a build that first drops repeated keys (first_occurrences): its pairs of
// hash and index while they are sorted, or the filter, whichever is larger, and beside
// either the bit a key that says which keys are first.
uint64_t with_dedupe_bytes(uint64_t filter_bytes, uint64_t keys) {
  const uint64_t pairs = sizeof(std::pair<uint64_t, size_t>) * keys, first_bits = 8 * ((keys + 63) / 64);
  return std::max(filter_bytes, pairs) + first_bits;
}

uint64_t bytes_cuckoo(const BuildOptions& o, std::span<const Bytes> keys) {
  const CuckooParams g = cuckoo_geometry(o, o.capacity.value_or(keys.size()));
  return with_dedupe_bytes(detail::CuckooTable::table_bytes(g.num_buckets, g.fingerprint_bits, g.bucket_size),
                           keys.size());
}

// The bytes of the levels `keys` keys fill: level 0, and each next one while they do not fit.
uint64_t level_bytes(ScalableCuckooParams p, uint64_t keys) {
  check_scalable_cuckoo_params(p, Errc::invalid_argument);
  p.fpp = scalable_cuckoo_budget(p);  // as the filter's constructor
  const uint32_t limit = scalable_cuckoo_level_limit(p);
  uint64_t bytes = 0, room = 0;
  for (uint32_t i = 0; i < limit && (i == 0 || room < keys); ++i) {
    const CuckooLevelGeometry g = scalable_cuckoo_level(p, i);
    bytes += detail::CuckooTable::table_bytes(std::min(g.num_buckets, detail::CuckooTable::kMaxBuckets),
                                              g.fingerprint_bits, p.bucket_size);
    room += g.capacity;
  }
  return bytes;
}

uint64_t bytes_scalable_cuckoo(const BuildOptions& o, std::span<const Bytes> keys) {
  return with_dedupe_bytes(level_bytes(scalable_cuckoo_params(o, keys.size()), keys.size()), keys.size());
}

std::unique_ptr<AnySet> build_cuckoo(const BuildOptions& o, std::span<const Bytes> keys) {
  const std::vector<bool> first = first_occurrences(keys, o.seed);
  const uint64_t distinct = static_cast<uint64_t>(std::count(first.begin(), first.end(), true));
  const CuckooParams g = cuckoo_geometry(o, o.capacity.value_or(distinct));
  auto f = CuckooFilter::with_buckets(g.num_buckets, g.fingerprint_bits, g.bucket_size, Xxh3Hasher{.seed = o.seed});
  uint64_t done = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!first[i]) continue;
    if (f.insert(keys[i]) == CuckooStatus::full) {
      // Distinct keys can still share a fingerprint and bucket pair (likely only with
      // very short fingerprints).
      if (const size_t c = f.count(keys[i]); c >= 2 * f.bucket_size())
        throw Error(Errc::full, "cuckoo filter cannot take key " + std::to_string(done + 1) + " of " +
                                    std::to_string(distinct) + " distinct keys: " + std::to_string(c) +
                                    " other keys share its fingerprint and buckets, and a bucket pair holds at most "
                                    "2b = " + std::to_string(2 * f.bucket_size()) +
                                    ": use more --fingerprint-bits");
      throw Error(Errc::full, "cuckoo filter full at load " + fmt_double(f.load_factor()) + " after " +
                                  std::to_string(done) + " of " + std::to_string(distinct) + " distinct keys (" +
                                  std::to_string(f.slots()) +
                                  " slots): give a larger --capacity, or build a scalable-cuckoo");
    }
    ++done;
  }
  return std::make_unique<AnyCuckoo>(std::move(f));
}

std::unique_ptr<AnySet> load_cuckoo(std::span<const std::byte> file) {
  return std::make_unique<AnyCuckoo>(CuckooFilter::load(file));
}

std::unique_ptr<AnySet> build_scalable_cuckoo(const BuildOptions& o, std::span<const Bytes> keys) {
  const std::vector<bool> first = first_occurrences(keys, o.seed);
  const uint64_t distinct = static_cast<uint64_t>(std::count(first.begin(), first.end(), true));
  ScalableCuckooFilter f(scalable_cuckoo_params(o, distinct), Xxh3Hasher{.seed = o.seed});
  uint64_t done = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!first[i]) continue;
    if (f.insert(keys[i]) == CuckooStatus::full)
      throw Error(Errc::full, "scalable cuckoo filter cannot take key " + std::to_string(done + 1) + " of " +
                                  std::to_string(distinct) + " distinct keys (" + std::to_string(f.num_levels()) +
                                  " levels opened, at most " + std::to_string(f.max_levels()) + ")");
    ++done;
  }
  return std::make_unique<AnyScalableCuckoo>(std::move(f));
}

std::unique_ptr<AnySet> load_scalable_cuckoo(std::span<const std::byte> file) {
  return std::make_unique<AnyScalableCuckoo>(ScalableCuckooFilter::load(file));
}

std::optional<uint64_t> estimate_cuckoo(const SizeQuery& q) {
  BuildOptions o;
  o.fpp = q.fpp;
  o.extra = q.options;
  const CuckooParams g = cuckoo_geometry(o, q.keys);
  return detail::CuckooTable::table_bytes(g.num_buckets, g.fingerprint_bits, g.bucket_size) + kContainerOverhead;
}

std::optional<uint64_t> estimate_scalable_cuckoo(const SizeQuery& q) {
  BuildOptions o;
  o.fpp = q.fpp;
  o.extra = q.options;
  return level_bytes(scalable_cuckoo_params(o, q.keys), q.keys) + kContainerOverhead;
}

constexpr std::string_view kBucketSizes[] = {"2", "4", "8"};
constexpr OptionSpec kFingerprintBits{.name = "fingerprint-bits",
                                      .type = OptionType::integer,
                                      .help = "fingerprint bits f",
                                      .int_min = 4,
                                      .int_max = 32,
                                      .default_help = "from --fpp"};
constexpr OptionSpec kBucketSize{.name = "bucket-size",
                                 .type = OptionType::integer,
                                 .help = "slots per bucket",
                                 .int_min = 2,
                                 .int_max = 8,
                                 .choices = kBucketSizes,
                                 .default_text = "4"};
constexpr OptionSpec kCuckooOptions[] = {kFingerprintBits, kBucketSize};
constexpr OptionSpec kScalableOptions[] = {
    kFingerprintBits,
    kBucketSize,
    {.name = "growth",
     .type = OptionType::integer,
     .help = "size factor of each new level",
     .int_min = 1,
     .int_max = 16,
     .default_text = "2"},
};
constexpr std::string_view kFormats[] = {"amq"};
constexpr std::string_view kScalableListParams[] = {"fingerprint_bits"};

}  // namespace

const KindRow kRow_cuckoo{
    .kind = Kind::cuckoo,
    .name = "cuckoo",
    .summary = "cuckoo filter: fingerprints in buckets of two choices; takes inserts and erases up to a fixed capacity",
    .caps = {.dynamic = true, .erase = true, .counts_exactly = true},
    .options = kCuckooOptions,
    .formats = kFormats,
    .build = build_cuckoo,
    .build_bytes = bytes_cuckoo,
    .load = load_cuckoo,
    .open = nullptr,
    .estimate = estimate_cuckoo,
    .lookup_cost = "2 random buckets (2 cache lines)",
    .bench_family = "cuckoo",
};

const KindRow kRow_scalable_cuckoo{
    .kind = Kind::scalable_cuckoo,
    .name = "scalable-cuckoo",
    .summary = "scalable cuckoo filter: opens a larger level when full; takes inserts and erases without a limit",
    .caps = {.dynamic = true, .erase = true, .counts_exactly = true, .grows = true},
    .options = kScalableOptions,
    .formats = kFormats,
    .build = build_scalable_cuckoo,
    .build_bytes = bytes_scalable_cuckoo,
    .load = load_scalable_cuckoo,
    .open = nullptr,
    .estimate = estimate_scalable_cuckoo,
    .lookup_cost = "2 random buckets in each level",
    .bench_family = "cuckoo",
    .list_params = kScalableListParams,
};

}  // namespace amq::detail
