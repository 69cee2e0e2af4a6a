// Fuzzes ExpandableFilter two ways.
//  * Input that starts with the amq magic is a file: ExpandableFilter::load must either
//    throw amq::Error or give a filter that answers queries, takes inserts and erases
//    (growing if it must), and re-serializes to bytes that load back equal.
//  * Any other input is a program of inserts, erases and counts on a filter grown from
//    capacity 1, checked against a multiset: no false negative, ever, counts never
//    below the copies, and a refused insert changes nothing.
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "amq/error.hpp"
#include "amq/expandable_filter.hpp"
#include "amq/format.hpp"

namespace {

#define CHECK(c) \
  do {           \
    if (!(c)) __builtin_trap(); \
  } while (0)

void exercise(amq::ExpandableFilter& f, std::span<const std::byte> in) {
  const auto key = in.first(std::min<size_t>(in.size(), 9));
  (void)f.contains(key);
  (void)f.count(key);
  const auto size = f.size();
  if (f.insert(key)) {
    CHECK(f.contains(key));
    CHECK(f.size() == size + 1);
    CHECK(f.erase(key));
    CHECK(f.size() == size);
  } else {
    CHECK(f.size() == size);
  }
  const auto bytes = f.serialize();
  CHECK(amq::ExpandableFilter::load(bytes) == f);
}

void run_program(const uint8_t* data, size_t size) {
  // The first byte picks the target, so programs reach both slot widths.
  const double fpp = size && (data[0] & 1) ? 1e-4 : 0.05;
  amq::ExpandableFilter f(1, fpp, size ? data[0] : 0);
  std::unordered_map<uint64_t, uint64_t> ms;
  uint64_t total = 0;
  for (size_t i = 1; i + 1 < std::min<size_t>(size, 2048); i += 2) {
    const uint8_t op = data[i] & 3;
    const uint64_t k = data[i + 1] % 97 + (data[i] >> 2) * 1000;
    if (op <= 1) {
      if (f.insert(k)) {
        ++ms[k];
        ++total;
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
  }
  for (const auto& [k, n] : ms) CHECK(f.contains(k) && f.count(k) >= n);
  CHECK(f.fpp_bound() <= f.target_fpp());
  CHECK(amq::ExpandableFilter::load(f.serialize()) == f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  if (amq::has_container_magic(in)) {
    try {
      amq::ExpandableFilter f = amq::ExpandableFilter::load(in);
      exercise(f, in);
    } catch (const amq::Error&) {
    }
    return 0;
  }
  run_program(data, size);
  return 0;
}
