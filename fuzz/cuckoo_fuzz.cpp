// Fuzzes the cuckoo filters two ways.
//  * Input that starts with the amq magic is a file: CuckooFilter::load and
//    ScalableCuckooFilter::load must either throw amq::Error or give a filter that
//    answers queries, takes inserts and erases, and re-serializes to bytes that load
//    back equal.
//  * Any other input is a program of operations on small filters (short fingerprints,
//    many collisions) checked against a multiset: no false negative, ever, counts
//    never below the copies, and a failed insert changes the size of nothing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <unordered_map>
#include <vector>

#include "amq/cuckoo_filter.hpp"
#include "amq/error.hpp"
#include "amq/format.hpp"
#include "amq/scalable_cuckoo_filter.hpp"

namespace {

#define CHECK(c) \
  do {           \
    if (!(c)) __builtin_trap(); \
  } while (0)

template <class F>
void exercise(F& f, std::span<const std::byte> in) {
  const auto key = in.first(std::min<size_t>(in.size(), 9));
  (void)f.contains(key);
  (void)f.count(key);
  const auto size = f.size();
  if (f.insert(key) == amq::CuckooStatus::inserted) {
    CHECK(f.contains(key));
    CHECK(f.size() == size + 1);
    CHECK(f.erase(key));
    CHECK(f.size() == size);
  } else {
    CHECK(f.size() == size);
  }
  const auto bytes = f.serialize();
  CHECK(F::load(bytes) == f);
}

// A program's inserts stop after kMaxFailed have failed. Each failed insert runs a
// full chain of kicks and rolls it back; under coverage instrumentation a program
// that kept inserting into a full filter took ~10 ms, so the target ran ~110 inputs a
// second where most other targets run tens of thousands. Erases and counts go on.
constexpr int kMaxFailed = 4;

template <class F>
void run_program(F& f, const uint8_t* data, size_t size) {
  std::unordered_map<uint64_t, uint64_t> ms;
  uint64_t total = 0;
  int failed = 0;
  for (size_t i = 0; i + 1 < std::min<size_t>(size, 1024); i += 2) {
    const uint8_t op = data[i] & 3;
    const uint64_t k = data[i + 1] % 97;
    if (op <= 1) {
      if (failed == kMaxFailed) continue;
      const auto s = f.insert(k);
      if (s == amq::CuckooStatus::inserted) {
        ++ms[k];
        ++total;
      } else {
        ++failed;
      }
      CHECK(f.size() == total);
    } else if (op == 2) {
      auto it = ms.find(k);
      if (it != ms.end()) {
        CHECK(f.erase(k));
        --total;
        if (--it->second == 0) ms.erase(it);
      }
    } else {
      auto it = ms.find(k);
      if (it != ms.end()) CHECK(f.count(k) >= it->second);
    }
    if (ms.count(k)) CHECK(f.contains(k));
    if (i % 64 == 0)
      for (const auto& [key, n] : ms) CHECK(f.contains(key));
  }
  for (const auto& [key, n] : ms) CHECK(f.contains(key) && f.count(key) >= n);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  if (amq::has_container_magic(in)) {
    try {
      auto f = amq::CuckooFilter::load(in);
      exercise(f, in);
    } catch (const amq::Error&) {
    }
    try {
      auto f = amq::ScalableCuckooFilter::load(in);
      exercise(f, in);
    } catch (const amq::Error&) {
    }
    return 0;
  }
  if (size < 2) return 0;
  const uint32_t f_bits = 4 + data[0] % 6;
  const uint32_t b = 2u << (data[1] % 3);
  auto plain = amq::CuckooFilter::with_buckets(2 + 2 * (data[0] >> 4), f_bits, b);
  run_program(plain, data + 2, size - 2);
  amq::ScalableCuckooFilter scalable({.initial_capacity = 1u + data[1] / 16,
                                      .bucket_size = b,
                                      .growth = 1u + data[0] % 3,
                                      .fingerprint_bits = f_bits});
  run_program(scalable, data + 2, size - 2);
  return 0;
}
