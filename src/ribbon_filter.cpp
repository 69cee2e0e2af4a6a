#include "amq/ribbon_filter.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <new>
#include <string>

#include "amq/detail/byte_io.hpp"
#include "amq/detail/file_storage.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "amq/format.hpp"

namespace amq {
namespace {

// Slots per key on a first attempt: enough that banding 128-wide rows succeeds for
// most seeds (the overhead needed grows with log n: ~2% at 10^3 keys, ~5% at 10^6).
double slot_factor(uint64_t n) noexcept {
  if (n == 0) return 1.0;
  return std::max(1.02, 1.04 + 0.01 * std::log10(static_cast<double>(n) / 1e5));
}

struct Shape {
  uint64_t blocks;
  uint64_t lower_blocks;
  unsigned lower_cols;
};

// r = the most columns with 2^-r >= fpp; the share of r-column start blocks is the
// largest whose mixture of 2^-r and 2^-(r+1) is at most fpp.
Shape shape_for(uint64_t blocks, double fpp) {
  unsigned r = 0;
  while (r < 63 && std::ldexp(1.0, -static_cast<int>(r + 1)) >= fpp) ++r;
  const double f = std::clamp(fpp * std::ldexp(1.0, static_cast<int>(r + 1)) - 1.0, 0.0, 1.0);
  uint64_t lower = static_cast<uint64_t>(std::floor(f * static_cast<double>(blocks - 2)));
  lower = std::min(lower, blocks - 2);
  if (lower == blocks - 2) lower = blocks;  // the last two blocks are never start blocks
  return {blocks, lower, r};
}

struct Slot {
  uint64_t lo, hi;  // the row's coefficients; lo == 0 only for an empty slot (bit 0 is set)
  uint64_t result;
};
using Band = std::vector<Slot, detail::HugePageAllocator<Slot>>;
// Large scratch arrays on huge pages: a fresh array of 4 KiB pages costs a page fault
// every 512 keys.
using Scratch = std::vector<uint64_t, detail::HugePageAllocator<uint64_t>>;

// The keys' mixed hashes a = splitmix64(h ^ mix) in start order, by one counting-sort
// pass on their top bits (a row's start slot grows with a): about one bucket a block.
void sort_mixed(std::span<const uint64_t> hashes, uint64_t mix, uint64_t blocks, Scratch& out,
                std::vector<uint64_t>& counts) {
  const int bits = std::clamp(static_cast<int>(std::bit_width(blocks)), 1, 20);
  const int shift = 64 - bits;
  counts.assign((size_t{1} << bits) + 1, 0);
  for (uint64_t h : hashes) ++counts[(detail::splitmix64(h ^ mix) >> shift) + 1];
  for (size_t i = 1; i < counts.size(); ++i) counts[i] += counts[i - 1];
  out.resize(hashes.size());
  for (uint64_t h : hashes) {
    const uint64_t a = detail::splitmix64(h ^ mix);
    out[counts[a >> shift]++] = a;
  }
}

// On-the-fly elimination of every key's row into the band, in start order. False when
// a row vanishes with a non-zero result (this seed cannot hold the set).
bool band_rows(std::span<const uint64_t> mixed, const Shape& sh, Band& band, uint64_t& redundant) {
  redundant = 0;
  const uint64_t lo_mask = sh.lower_cols >= 64 ? ~uint64_t{0} : (uint64_t{1} << sh.lower_cols) - 1;
  const uint64_t hi_mask = sh.lower_cols + 1 >= 64 ? ~uint64_t{0} : (uint64_t{1} << (sh.lower_cols + 1)) - 1;
  for (uint64_t a : mixed) {
    const RibbonFilter::Row row = RibbonFilter::row_from_mixed(a, sh.blocks);
    uint64_t s = row.start, lo = row.coeff_lo, hi = row.coeff_hi;
    uint64_t res = row.result & (s / 64 < sh.lower_blocks ? lo_mask : hi_mask);
    for (;;) {
      Slot& slot = band[s];
      if (slot.lo == 0) {
        slot = {lo, hi, res};
        break;
      }
      lo ^= slot.lo;
      hi ^= slot.hi;
      res ^= slot.result;
      if (lo == 0) {
        if (hi == 0) {
          if (res != 0) return false;
          ++redundant;  // 0 = 0: implied by the rows already banded
          break;
        }
        s += 64;
        lo = hi;
        hi = 0;
      }
      const int tz = std::countr_zero(lo);
      s += static_cast<uint64_t>(tz);
      if (tz) {
        lo = (lo >> tz) | (hi << (64 - tz));
        hi >>= tz;
      }
    }
  }
  return true;
}

}  // namespace

void RibbonFilter::set_shape(uint64_t blocks, uint64_t lower_blocks, unsigned lower_cols) noexcept {
  blocks_ = blocks;
  lower_blocks_ = lower_blocks;
  lower_cols_ = lower_cols;
  num_words_ = static_cast<size_t>(block_offset(blocks));
  max_cols_ = lower_cols + (lower_blocks < blocks);
  lower_mask_ = lower_cols == 0 ? 0 : ~uint64_t{0} >> (64 - lower_cols);
  upper_mask_ = ~uint64_t{0} >> (63 - lower_cols);
  // The vector lookup reads whole groups of 8 columns from the start block's third block.
  const uint64_t group = (uint64_t{max_cols_} + 7) / 8 * 8;
  fast_blocks_ = max_cols_ == 0 ? blocks : blocks - 2;
  while (fast_blocks_ > 0 && block_offset(fast_blocks_ + 1) + group > num_words_) --fast_blocks_;
  prefetch_batches_ = num_words_ * 8 > detail::last_level_cache_bytes() / 4;
}

RibbonFilter RibbonFilter::from_hashes(std::span<const uint64_t> hashes, double fpp, uint64_t seed) {
  if (!(fpp >= std::ldexp(1.0, -63) && fpp < 1.0))
    throw Error(Errc::invalid_argument,
                "ribbon filter: false-positive probability must be in [2^-63, 1), got " + std::to_string(fpp));
  const uint64_t n = hashes.size();
  if (n > (uint64_t{1} << 44))
    throw Error(Errc::too_large, "ribbon filter: " + std::to_string(n) + " keys is too many (limit 2^44)");
  try {
    return build_attempts(hashes, fpp, seed);
  } catch (const std::bad_alloc&) {
    throw Error(Errc::too_large, "ribbon filter: out of memory building " + std::to_string(n) +
                                     " keys (construction needs about " + std::to_string(n * 42) + " bytes)");
  }
}

RibbonFilter RibbonFilter::build_attempts(std::span<const uint64_t> hashes, double fpp, uint64_t seed) {
  const uint64_t n = hashes.size();
  const uint64_t base =
      std::max<uint64_t>(3, static_cast<uint64_t>(std::ceil(static_cast<double>(n) * slot_factor(n) / 64)) + 2);
  Band band;
  Scratch mixed;
  std::vector<uint64_t> counts;
  for (unsigned attempt = 0; attempt < kMaxAttempts; ++attempt) {
    // Past the fourth failure each attempt adds 1/16 of the slots (and a block).
    const uint64_t extra = attempt < 4 ? 0 : (attempt - 3) * (base / 16 + 1);
    const Shape sh = shape_for(base + extra, fpp);
    band.assign(sh.blocks * 64, Slot{0, 0, 0});
    const uint64_t mix = mix_of(attempt);
    uint64_t redundant = 0;
    sort_mixed(hashes, mix, sh.blocks, mixed, counts);
    if (!band_rows(mixed, sh, band, redundant)) continue;

    RibbonFilter f;
    f.seed_ = seed;
    f.ribbon_seed_ = attempt;
    f.mix_ = mix;
    f.keys_ = n - redundant;
    f.set_shape(sh.blocks, sh.lower_blocks, sh.lower_cols);
    auto storage = detail::FileStorage::allocate(f.num_words_ * 8);
    uint64_t* const out = reinterpret_cast<uint64_t*>(storage->writable().data());
    if (f.num_words_) std::memset(out, 0, f.num_words_ * 8);
    // Back-substitution, last slot first. state[j] holds column j of the 64 slots from
    // the current one on (bit k: slot i + k), so a block's words are the states at its
    // first slot. Free slots take pseudo-random values.
    const unsigned cols = sh.lower_cols + (sh.lower_blocks < sh.blocks);
    uint64_t st_lo[kMaxColumns] = {}, st_hi[kMaxColumns] = {};
    for (uint64_t i = sh.blocks * 64; i-- > 0;) {
      const Slot slot = band[i];
      const uint64_t fill = slot.lo ? slot.result : detail::splitmix64(i ^ mix);
      for (unsigned j = 0; j < cols; ++j) {
        const uint64_t hi = (st_hi[j] << 1) | (st_lo[j] >> 63), lo = st_lo[j] << 1;
        const uint64_t dot = static_cast<uint64_t>(std::popcount((slot.lo & lo) ^ (slot.hi & hi)));
        st_hi[j] = hi;
        st_lo[j] = lo | ((fill >> j ^ dot) & 1);
      }
      if (i % 64 == 0) {
        const uint64_t b = i / 64;
        std::copy_n(st_lo, f.columns_of(b), out + f.block_offset(b));
      }
    }
    f.words_ = out;
    f.storage_ = std::move(storage);
    return f;
  }
  throw Error(Errc::invalid_argument, "ribbon filter: no seed of " + std::to_string(kMaxAttempts) +
                                          " could hold the keys (is the hash broken?)");
}

size_t RibbonFilter::contains_many_hashes(std::span<const uint64_t> hashes, std::span<bool> out) const noexcept {
  const size_t n = hashes.size();
  size_t found = 0;
  Row rows[kChunk];
  for (size_t i = 0; i < n; i += kChunk) {
    const size_t m = std::min(kChunk, n - i);
    for (size_t k = 0; k < m; ++k) {
      rows[k] = row_of(hashes[i + k]);
      if (prefetch_batches_) prefetch_row(rows[k]);
    }
    for (size_t k = 0; k < m; ++k) found += (out[i + k] = contains_row(rows[k]));
  }
  return found;
}

double RibbonFilter::expected_fpp() const noexcept {
  // Start blocks are 0 .. blocks - 3, each with 64 start slots.
  const uint64_t starts = blocks_ - 2;
  const uint64_t lower = std::min(lower_blocks_, starts);
  return (static_cast<double>(lower) * std::ldexp(1.0, -static_cast<int>(lower_cols_)) +
          static_cast<double>(starts - lower) * std::ldexp(1.0, -static_cast<int>(lower_cols_ + 1))) /
         static_cast<double>(starts);
}

double RibbonFilter::bits_per_slot() const noexcept {
  return static_cast<double>(num_words_) / static_cast<double>(blocks_);
}

bool RibbonFilter::operator==(const RibbonFilter& o) const noexcept {
  return seed_ == o.seed_ && ribbon_seed_ == o.ribbon_seed_ && keys_ == o.keys_ && blocks_ == o.blocks_ &&
         lower_blocks_ == o.lower_blocks_ && lower_cols_ == o.lower_cols_ && num_words_ == o.num_words_ &&
         (num_words_ == 0 || std::memcmp(words_, o.words_, num_words_ * 8) == 0);
}

// Params (56 bytes): hasher id u32, ribbon width u32, seed u64, ribbon seed u64, keys
// u64, blocks u64, lower blocks u64, lower columns u32, reserved u32.
std::vector<std::byte> RibbonFilter::serialize() const {
  detail::ByteWriter p;
  p.u32(Xxh3Hasher::id);
  p.u32(kWidth);
  p.u64(seed_);
  p.u64(ribbon_seed_);
  p.u64(keys_);
  p.u64(blocks_);
  p.u64(lower_blocks_);
  p.u32(lower_cols_);
  p.u32(0);
  return write_container(Kind::ribbon, p.buffer(), std::as_bytes(words()));
}

namespace {

struct Parsed {
  uint64_t seed, ribbon_seed, keys, blocks, lower_blocks;
  unsigned lower_cols;
  std::span<const std::byte> payload;
};

Parsed parse(std::span<const std::byte> file, bool verify_checksum) {
  const Container c = parse_container(file, Kind::ribbon, verify_checksum);
  detail::ByteReader r(c.params, "ribbon filter params");
  const uint32_t hasher = r.u32();
  const uint32_t width = r.u32();
  Parsed out{};
  out.seed = r.u64();
  out.ribbon_seed = r.u64();
  out.keys = r.u64();
  out.blocks = r.u64();
  out.lower_blocks = r.u64();
  const uint32_t cols = r.u32();
  const uint32_t reserved = r.u32();
  r.expect_end();
  if (hasher != Xxh3Hasher::id)
    throw Error(Errc::unsupported, "ribbon filter hashed with " + std::string(hasher_name(hasher)) + " (id " +
                                       std::to_string(hasher) + "); this build reads xxh3");
  if (width != RibbonFilter::kWidth)
    throw Error(Errc::unsupported, "ribbon filter of width " + std::to_string(width) + " (this build reads 128)");
  if (reserved != 0) throw Error(Errc::corrupt, "ribbon filter: reserved params field is not zero");
  if (out.blocks < 3) throw Error(Errc::corrupt, "ribbon filter: fewer than 3 blocks");
  if (out.blocks > RibbonFilter::kMaxBlocks)
    throw Error(Errc::too_large, "ribbon filter: " + std::to_string(out.blocks) + " blocks (limit 2^40)");
  if (out.lower_blocks > out.blocks) throw Error(Errc::corrupt, "ribbon filter: more lower blocks than blocks");
  if (cols >= RibbonFilter::kMaxColumns)
    throw Error(Errc::corrupt, "ribbon filter: " + std::to_string(cols) + " lower result columns (limit 63)");
  if (out.keys > out.blocks * 64) throw Error(Errc::corrupt, "ribbon filter: more keys than slots");
  out.lower_cols = cols;
  const uint64_t words = out.blocks * cols + (out.blocks - out.lower_blocks);  // < 2^47
  if (c.payload.size() != words * 8)
    throw Error(c.payload.size() < words * 8 ? Errc::truncated : Errc::corrupt,
                "ribbon filter: payload of " + std::to_string(c.payload.size()) + " bytes, shape needs " +
                    std::to_string(words * 8));
  out.payload = c.payload;
  return out;
}

}  // namespace

bool RibbonFilter::is_mapped() const noexcept { return storage_ && storage_->is_mapped(); }

RibbonFilter RibbonFilter::load(std::span<const std::byte> file) {
  const Parsed p = parse(file, true);
  RibbonFilter f;
  f.seed_ = p.seed;
  f.ribbon_seed_ = p.ribbon_seed;
  f.mix_ = mix_of(p.ribbon_seed);
  f.keys_ = p.keys;
  f.set_shape(p.blocks, p.lower_blocks, p.lower_cols);
  auto words = detail::FileStorage::copy(p.payload);
  f.words_ = reinterpret_cast<const uint64_t*>(words->bytes().data());
  f.storage_ = std::move(words);
  return f;
}

RibbonFilter RibbonFilter::open(const std::string& path, bool verify_checksum) {
  auto mapped = detail::FileStorage::map(path);
  try {
    const Parsed p = parse(mapped->bytes(), verify_checksum);
    RibbonFilter f;
    f.seed_ = p.seed;
    f.ribbon_seed_ = p.ribbon_seed;
    f.mix_ = mix_of(p.ribbon_seed);
    f.keys_ = p.keys;
    f.set_shape(p.blocks, p.lower_blocks, p.lower_cols);
    f.words_ = reinterpret_cast<const uint64_t*>(p.payload.data());  // 8-aligned in a page-aligned mapping
    f.storage_ = std::move(mapped);
    return f;
  } catch (const Error& e) {
    throw Error(e.code(), path + ": " + e.what());
  }
}

}  // namespace amq
