#include "amq/bloom_filter.hpp"

#include <cmath>
#include <string>

#include "amq/detail/byte_io.hpp"
#include "amq/error.hpp"
#include "amq/format.hpp"
#include "checks.hpp"

namespace amq {
namespace {

constexpr uint64_t kMaxWords = 0x7fffffff;  // Guava's long[] is int-indexed

void check_shape(uint64_t num_words, int num_hashes, int strategy, const char* what) {
  if (num_words == 0) throw Error(Errc::corrupt, std::string(what) + ": zero words");
  if (num_words > kMaxWords)
    throw Error(Errc::too_large, std::string(what) + ": " + std::to_string(num_words) + " words (limit 2^31-1)");
  if (num_hashes < 1 || num_hashes > BloomFilter::kMaxHashes)
    throw Error(Errc::corrupt, std::string(what) + ": number of hash functions " + std::to_string(num_hashes) +
                                   " not in 1..255");
  if (strategy != 0 && strategy != 1)
    throw Error(Errc::corrupt, std::string(what) + ": unknown hashing strategy ordinal " + std::to_string(strategy));
}

}  // namespace

BloomFilter BloomFilter::create(uint64_t expected_insertions, double fpp, GuavaStrategy strategy) {
  const Geometry g = geometry(expected_insertions, fpp);
  return BloomFilter(g.words, g.hashes, strategy);
}

BloomFilter::Geometry BloomFilter::geometry(uint64_t expected_insertions, double fpp) {
  detail::check_fpp(fpp);
  if (expected_insertions > (uint64_t{1} << 62))
    throw Error(Errc::too_large, "expected insertions " + std::to_string(expected_insertions) + " is too large");
  const int64_t n = expected_insertions == 0 ? 1 : static_cast<int64_t>(expected_insertions);
  const double ln2 = std::log(2.0);
  // Guava: (long) (-n * Math.log(p) / (Math.log(2) * Math.log(2)))
  const double bits_d = static_cast<double>(-n) * std::log(fpp) / (ln2 * ln2);
  if (bits_d >= 9.2e18) throw Error(Errc::too_large, "filter would need more than 2^63 bits");
  const int64_t num_bits = static_cast<int64_t>(bits_d);
  // Guava: max(1, (int) Math.round((double) m / n * Math.log(2)))
  const double k_d = std::floor(static_cast<double>(num_bits) / static_cast<double>(n) * ln2 + 0.5);
  const int k = std::max(1, static_cast<int>(static_cast<int64_t>(k_d)));
  if (num_bits <= 0)
    throw Error(Errc::invalid_argument, "a filter for " + std::to_string(n) + " keys at fpp " + detail::number_text(fpp) +
                                            " would have zero bits");
  const uint64_t words = (static_cast<uint64_t>(num_bits) + 63) / 64;
  if (words > kMaxWords)
    throw Error(Errc::too_large, "a filter of " + std::to_string(num_bits) + " bits is beyond Guava's 2^37-bit limit");
  if (k > kMaxHashes)
    throw Error(Errc::invalid_argument, "fpp " + detail::number_text(fpp) + " needs " + std::to_string(k) +
                                            " hash functions; Guava allows at most 255");
  return {words, k};
}

BloomFilter::BloomFilter(uint64_t num_words, int num_hashes, GuavaStrategy strategy)
    : num_hashes_(num_hashes), strategy_(strategy) {
  if (num_words == 0 || num_words > kMaxWords)
    throw Error(Errc::invalid_argument, "number of words must be in 1..2^31-1");
  if (num_hashes < 1 || num_hashes > kMaxHashes)
    throw Error(Errc::invalid_argument, "number of hash functions must be in 1..255");
  if (strategy != GuavaStrategy::murmur128_mitz_32 && strategy != GuavaStrategy::murmur128_mitz_64)
    throw Error(Errc::invalid_argument, "unknown strategy");
  words_.assign(num_words, 0);
  mod_ = detail::FastMod63(num_words * 64);
}

void BloomFilter::merge(const BloomFilter& other) {
  if (this == &other) return;
  if (num_hashes_ != other.num_hashes_)
    throw Error(Errc::incompatible, "cannot merge Bloom filters with different numbers of hash functions (" +
                                        std::to_string(num_hashes_) + " and " + std::to_string(other.num_hashes_) +
                                        ")");
  if (words_.size() != other.words_.size())
    throw Error(Errc::incompatible, "cannot merge Bloom filters of different sizes (" + std::to_string(bit_size()) +
                                        " and " + std::to_string(other.bit_size()) + " bits)");
  if (strategy_ != other.strategy_)
    throw Error(Errc::incompatible, "cannot merge Bloom filters with different hashing strategies");
  for (size_t i = 0; i < words_.size(); ++i) words_[i] |= other.words_[i];
}

uint64_t BloomFilter::bit_count() const noexcept {
  uint64_t c = 0;
  for (uint64_t w : words_) c += static_cast<uint64_t>(std::popcount(w));
  return c;
}

double BloomFilter::expected_fpp() const noexcept {
  return std::pow(static_cast<double>(bit_count()) / static_cast<double>(bit_size()), num_hashes_);
}

uint64_t BloomFilter::approximate_element_count() const noexcept {
  const double size = static_cast<double>(bit_size());
  const double fraction = static_cast<double>(bit_count()) / size;
  const double x = -std::log1p(-fraction) * size / num_hashes_;
  if (!std::isfinite(x)) return UINT64_MAX;
  // DoubleMath.roundToLong(x, HALF_UP) for x >= 0
  return static_cast<uint64_t>(std::floor(x + 0.5));
}

void BloomFilter::clear() noexcept { std::fill(words_.begin(), words_.end(), 0); }

std::vector<std::byte> BloomFilter::to_guava() const {
  detail::ByteWriter w;
  w.buffer().reserve(6 + words_.size() * 8);
  w.u8(static_cast<uint8_t>(strategy_));
  w.u8(static_cast<uint8_t>(num_hashes_));
  w.u32_be(static_cast<uint32_t>(words_.size()));
  for (uint64_t x : words_) w.u64_be(x);
  return w.take();
}

bool BloomFilter::looks_like_guava(std::span<const std::byte> data) noexcept {
  if (data.size() < 6) return false;
  const auto ordinal = static_cast<uint8_t>(data[0]);
  const auto k = static_cast<uint8_t>(data[1]);
  const uint32_t words = (static_cast<uint32_t>(data[2]) << 24) | (static_cast<uint32_t>(data[3]) << 16) |
                         (static_cast<uint32_t>(data[4]) << 8) | static_cast<uint32_t>(data[5]);
  return ordinal <= 1 && k >= 1 && words >= 1 && words <= kMaxWords && data.size() == 6 + uint64_t{words} * 8;
}

BloomFilter BloomFilter::from_guava(std::span<const std::byte> data) {
  detail::ByteReader r(data, "Guava Bloom filter");
  const uint8_t ordinal = r.u8();
  const int k = r.u8();
  const uint32_t words_raw = r.u32_be();
  if (words_raw > kMaxWords)
    throw Error(Errc::corrupt, "Guava Bloom filter: negative word count " +
                                   std::to_string(static_cast<int32_t>(words_raw)));
  check_shape(words_raw, k, ordinal, "Guava Bloom filter");
  if (r.remaining() < uint64_t{words_raw} * 8)
    throw Error(Errc::truncated, "Guava Bloom filter truncated: " + std::to_string(words_raw) + " words announced, " +
                                     std::to_string(r.remaining() / 8) + " present");
  BloomFilter f(words_raw, k, static_cast<GuavaStrategy>(ordinal));
  for (uint64_t& x : f.words_) x = r.u64_be();
  r.expect_end();
  return f;
}

std::vector<std::byte> BloomFilter::serialize() const {
  detail::ByteWriter params;
  params.u32(static_cast<uint32_t>(strategy_));
  params.u32(static_cast<uint32_t>(num_hashes_));
  params.u64(words_.size());
  return write_container(Kind::bloom, params.buffer(), std::as_bytes(std::span(words_)));
}

BloomFilter BloomFilter::load(std::span<const std::byte> file) {
  const Container c = parse_container(file, Kind::bloom);
  detail::ByteReader p(c.params, "bloom filter params");
  const uint32_t strategy = p.u32();
  const uint32_t k = p.u32();
  const uint64_t words = p.u64();
  p.expect_end();
  check_shape(words, static_cast<int>(std::min<uint32_t>(k, 1000)), static_cast<int>(std::min<uint32_t>(strategy, 1000)),
              "bloom filter");
  if (c.payload.size() != words * 8)
    throw Error(Errc::corrupt, "bloom filter: payload of " + std::to_string(c.payload.size()) + " bytes for " +
                                   std::to_string(words) + " words");
  BloomFilter f(words, static_cast<int>(k), static_cast<GuavaStrategy>(strategy));
  std::memcpy(f.words_.data(), c.payload.data(), c.payload.size());
  return f;
}

}  // namespace amq
