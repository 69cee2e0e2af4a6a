#include "amq/cuckoo_filter.hpp"

#include <cmath>
#include <string>

#include "amq/detail/byte_io.hpp"
#include "amq/error.hpp"
#include "amq/format.hpp"
#include "checks.hpp"

namespace amq {

CuckooParams cuckoo_params_for(uint64_t capacity, uint32_t fingerprint_bits, uint32_t bucket_size) {
  using detail::CuckooTable;
  if (fingerprint_bits < CuckooTable::kMinFingerprintBits || fingerprint_bits > CuckooTable::kMaxFingerprintBits)
    throw Error(Errc::invalid_argument,
                "cuckoo filter: fingerprint bits must be in 4..32, got " + std::to_string(fingerprint_bits));
  if (bucket_size != 2 && bucket_size != 4 && bucket_size != 8)
    throw Error(Errc::invalid_argument,
                "cuckoo filter: bucket size must be 2, 4 or 8, got " + std::to_string(bucket_size));
  const double max_capacity =
      static_cast<double>(CuckooTable::kMaxBuckets) * bucket_size * CuckooTable::design_load(bucket_size, fingerprint_bits);
  if (static_cast<double>(capacity) > max_capacity)
    throw Error(Errc::too_large, "cuckoo filter: capacity " + std::to_string(capacity) +
                                     " needs more than 2^32 buckets of " + std::to_string(bucket_size));
  return {fingerprint_bits, bucket_size, CuckooTable::buckets_for(capacity, bucket_size, fingerprint_bits),
          2.0 * bucket_size / std::ldexp(1.0, static_cast<int>(fingerprint_bits))};
}

CuckooParams choose_cuckoo_params(uint64_t capacity, double fpp) {
  if (!(fpp > 0.0 && fpp < 1.0))
    throw Error(Errc::invalid_argument,
                "cuckoo filter: false-positive probability must be in (0, 1), got " + std::to_string(fpp));
  uint32_t best_f = 0, best_b = 0;
  double best_cost = 0;
  for (uint32_t b : {2u, 4u, 8u}) {
    const double need = std::ceil(std::log2(2.0 * b / fpp));
    if (need > detail::CuckooTable::kMaxFingerprintBits) continue;
    const uint32_t f = std::max<uint32_t>(detail::CuckooTable::kMinFingerprintBits, static_cast<uint32_t>(need));
    const double cost = f / detail::CuckooTable::design_load(b, f);
    if (best_b == 0 || cost < best_cost - 1e-9) {
      best_f = f;
      best_b = b;
      best_cost = cost;
    }
  }
  if (best_b == 0)
    throw Error(Errc::invalid_argument, "cuckoo filter: false-positive probability " + detail::number_text(fpp) +
                                            " needs fingerprints longer than 32 bits");
  return cuckoo_params_for(capacity, best_f, best_b);
}

namespace detail {

void check_hasher(uint32_t file_id, uint32_t want_id, const char* what) {
  if (file_id != want_id)
    throw Error(Errc::incompatible, std::string(what) + ": file was made with hasher " +
                                        std::string(hasher_name(file_id)) + " (id " + std::to_string(file_id) +
                                        "), this type hashes with " + std::string(hasher_name(want_id)) + " (id " +
                                        std::to_string(want_id) + ")");
}

std::vector<std::byte> serialize_cuckoo(uint32_t hasher_id, uint64_t seed, const CuckooTable& t) {
  ByteWriter p;
  p.u32(hasher_id);
  p.u32(t.fingerprint_bits());
  p.u32(t.bucket_size());
  p.u32(0);  // reserved
  p.u64(seed);
  p.u64(t.num_buckets());
  p.u64(t.size());
  return write_container(Kind::cuckoo, p.buffer(), t.table());
}

LoadedCuckoo parse_cuckoo(std::span<const std::byte> file) {
  const Container c = parse_container(file, Kind::cuckoo);
  ByteReader p(c.params, "cuckoo filter params");
  const uint32_t hasher_id = p.u32();
  const uint32_t f = p.u32();
  const uint32_t b = p.u32();
  const uint32_t reserved = p.u32();
  const uint64_t seed = p.u64();
  const uint64_t m = p.u64();
  const uint64_t count = p.u64();
  p.expect_end();
  if (reserved != 0) throw Error(Errc::corrupt, "cuckoo filter: reserved field is not zero");
  if (!CuckooTable::valid_geometry(m, f, b))
    throw Error(Errc::corrupt, "cuckoo filter: impossible geometry (" + std::to_string(m) + " buckets, " +
                                   std::to_string(f) + "-bit fingerprints, " + std::to_string(b) + " slots)");
  if (count > m * b)
    throw Error(Errc::corrupt, "cuckoo filter: " + std::to_string(count) + " fingerprints in " +
                                   std::to_string(m * b) + " slots");
  // The payload length is checked before the table is allocated.
  if (c.payload.size() != CuckooTable::table_bytes(m, f, b))
    throw Error(Errc::corrupt, "cuckoo filter: payload of " + std::to_string(c.payload.size()) + " bytes, the " +
                                   std::to_string(m) + "-bucket table needs " +
                                   std::to_string(CuckooTable::table_bytes(m, f, b)));
  CuckooTable t(m, f, b, seed);
  t.load_table(c.payload, count, "cuckoo filter");
  return {hasher_id, seed, std::move(t)};
}

}  // namespace detail
}  // namespace amq
