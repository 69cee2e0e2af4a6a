#include "amq/scalable_cuckoo_filter.hpp"

#include <cmath>
#include <string>

#include "amq/detail/byte_io.hpp"
#include "amq/error.hpp"
#include "amq/format.hpp"
#include "checks.hpp"

namespace amq::detail {
namespace {

constexpr uint64_t kMaxInitialCapacity = uint64_t{1} << 40;

uint64_t pad8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

}  // namespace

void check_scalable_cuckoo_params(const ScalableCuckooParams& p, Errc code) {
  const auto fail = [&](const std::string& what) { throw Error(code, "scalable cuckoo filter: " + what); };
  if (p.initial_capacity < 1 || p.initial_capacity > kMaxInitialCapacity)
    fail("initial capacity must be in 1..2^40, got " + std::to_string(p.initial_capacity));
  if (p.bucket_size != 2 && p.bucket_size != 4 && p.bucket_size != 8)
    fail("bucket size must be 2, 4 or 8, got " + std::to_string(p.bucket_size));
  if (p.growth < 1 || p.growth > 16) fail("growth must be an integer in 1..16, got " + std::to_string(p.growth));
  if (p.fingerprint_bits != 0) {
    if (p.fingerprint_bits < CuckooTable::kMinFingerprintBits || p.fingerprint_bits > CuckooTable::kMaxFingerprintBits)
      fail("fingerprint bits must be in 4..32, got " + std::to_string(p.fingerprint_bits));
  } else {
    check_fpp(p.fpp, 1.0, false, "scalable cuckoo filter: ", code);
    if (std::ceil(std::log2(4.0 * p.bucket_size / p.fpp)) > CuckooTable::kMaxFingerprintBits)
      fail("false-positive probability " + number_text(p.fpp) + " needs fingerprints longer than 32 bits");
  }
}

uint32_t scalable_cuckoo_base_bits(const ScalableCuckooParams& p) noexcept {
  if (p.fingerprint_bits != 0) return p.fingerprint_bits;
  const double need = std::ceil(std::log2(4.0 * p.bucket_size / p.fpp));
  return static_cast<uint32_t>(std::max(8.0, need));
}

double scalable_cuckoo_budget(const ScalableCuckooParams& p) noexcept {
  if (p.fingerprint_bits != 0) return 4.0 * p.bucket_size / std::ldexp(1.0, static_cast<int>(p.fingerprint_bits));
  return p.fpp;
}

CuckooLevelGeometry scalable_cuckoo_level(const ScalableCuckooParams& p, uint32_t i) noexcept {
  const uint32_t b = p.bucket_size;
  const uint32_t f0 = scalable_cuckoo_base_bits(p);
  const uint64_t m0 = CuckooTable::buckets_for(p.initial_capacity, b, f0);
  // growth^i, saturated past 2^32 (such a level is beyond the limit anyway).
  uint64_t ext = 1;
  for (uint32_t k = 0; k < i && ext <= CuckooTable::kMaxBuckets; ++k) ext *= p.growth;
  const uint64_t m = ext <= CuckooTable::kMaxBuckets / m0 ? m0 * ext : CuckooTable::kMaxBuckets + 2;
  const double cap = std::floor(static_cast<double>(m) * b * CuckooTable::design_load(b, f0));
  const uint32_t f = std::min<uint32_t>(CuckooTable::kMaxFingerprintBits, f0 + i);
  return {std::max<uint64_t>(1, static_cast<uint64_t>(cap)), m, ext, f};
}

uint32_t scalable_cuckoo_level_limit(const ScalableCuckooParams& p) noexcept {
  const double budget = scalable_cuckoo_budget(p) * (1 + 1e-12);
  double sum = 0;
  uint32_t n = 0;
  while (n < kMaxCuckooLevels) {
    const CuckooLevelGeometry g = scalable_cuckoo_level(p, n);
    if (g.num_buckets > CuckooTable::kMaxBuckets) break;
    sum += 2.0 * p.bucket_size / std::ldexp(1.0, static_cast<int>(g.fingerprint_bits));
    if (sum > budget) break;
    ++n;
  }
  return std::max<uint32_t>(n, 1);
}

std::vector<std::byte> serialize_scalable_cuckoo(uint32_t hasher_id, uint64_t seed, const ScalableCuckooParams& p,
                                                 std::span<const CuckooTable> levels) {
  ByteWriter w;
  w.u32(hasher_id);
  w.u32(p.bucket_size);
  w.u32(p.fingerprint_bits);
  w.u32(static_cast<uint32_t>(levels.size()));
  w.u64(seed);
  w.u64(p.initial_capacity);
  w.u32(p.growth);
  w.u32(0);  // reserved
  w.f64(p.fpp);
  ByteWriter payload;
  for (const auto& l : levels) {
    w.u32(l.fingerprint_bits());
    w.u32(0);
    w.u64(l.num_buckets());
    w.u64(l.size());
    payload.bytes(l.table());
    payload.pad_to(8);
  }
  return write_container(Kind::scalable_cuckoo, w.buffer(), payload.buffer());
}

LoadedScalableCuckoo parse_scalable_cuckoo(std::span<const std::byte> file) {
  const Container c = parse_container(file, Kind::scalable_cuckoo);
  ByteReader r(c.params, "scalable cuckoo filter params");
  LoadedScalableCuckoo out{};
  out.hasher_id = r.u32();
  ScalableCuckooParams& p = out.params;
  p.bucket_size = r.u32();
  p.fingerprint_bits = r.u32();
  const uint32_t num_levels = r.u32();
  out.seed = r.u64();
  p.initial_capacity = r.u64();
  p.growth = r.u32();
  const uint32_t reserved_p = r.u32();
  p.fpp = r.f64();
  if (reserved_p != 0) throw Error(Errc::corrupt, "scalable cuckoo filter: reserved field is not zero");
  check_scalable_cuckoo_params(p, Errc::corrupt);
  if (p.fingerprint_bits != 0 && p.fpp != scalable_cuckoo_budget(p))
    throw Error(Errc::corrupt, "scalable cuckoo filter: stored fpp does not match the fingerprint bits");
  const uint32_t limit = scalable_cuckoo_level_limit(p);
  if (num_levels < 1 || num_levels > limit)
    throw Error(Errc::corrupt, "scalable cuckoo filter: " + std::to_string(num_levels) +
                                   " levels (these parameters allow 1.." + std::to_string(limit) + ")");
  if (r.remaining() != uint64_t{num_levels} * 24)
    throw Error(Errc::corrupt, "scalable cuckoo filter: params hold " + std::to_string(r.remaining()) +
                                   " bytes of level records, " + std::to_string(num_levels) + " levels need " +
                                   std::to_string(num_levels * 24));
  struct Rec {
    CuckooLevelGeometry g;
    uint64_t count;
  };
  std::vector<Rec> recs;
  uint64_t payload_needed = 0;
  for (uint32_t i = 0; i < num_levels; ++i) {
    const uint32_t f = r.u32();
    const uint32_t reserved = r.u32();
    const uint64_t m = r.u64();
    const uint64_t count = r.u64();
    const CuckooLevelGeometry g = scalable_cuckoo_level(p, i);
    if (reserved != 0 || f != g.fingerprint_bits || m != g.num_buckets)
      throw Error(Errc::corrupt, "scalable cuckoo filter: level " + std::to_string(i) + " has " + std::to_string(m) +
                                     " buckets of " + std::to_string(f) + "-bit fingerprints, the parameters give " +
                                     std::to_string(g.num_buckets) + " of " + std::to_string(g.fingerprint_bits));
    if (count > m * p.bucket_size)
      throw Error(Errc::corrupt, "scalable cuckoo filter: level " + std::to_string(i) + " claims " +
                                     std::to_string(count) + " fingerprints in " +
                                     std::to_string(m * p.bucket_size) + " slots");
    payload_needed += pad8(CuckooTable::table_bytes(m, f, p.bucket_size));
    recs.push_back({g, count});
  }
  r.expect_end();
  // Checked before any table is allocated.
  if (c.payload.size() != payload_needed)
    throw Error(Errc::corrupt, "scalable cuckoo filter: payload of " + std::to_string(c.payload.size()) +
                                   " bytes, the levels need " + std::to_string(payload_needed));
  uint64_t at = 0;
  for (uint32_t i = 0; i < num_levels; ++i) {
    const auto& g = recs[i].g;
    CuckooTable t(g.num_buckets, g.fingerprint_bits, p.bucket_size, out.seed + i, scalable_cuckoo_base_bits(p));
    const uint64_t n = t.bytes();
    const std::string what = "scalable cuckoo filter level " + std::to_string(i);
    t.load_table(c.payload.subspan(at, n), recs[i].count, what.c_str());
    for (uint64_t k = at + n; k < at + pad8(n); ++k)
      if (c.payload[k] != std::byte{0})
        throw Error(Errc::corrupt, what + ": non-zero padding after the table");
    at += pad8(n);
    out.levels.push_back(std::move(t));
  }
  return out;
}

}  // namespace amq::detail
