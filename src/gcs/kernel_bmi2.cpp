// src/gcs/kernel_bmi2.cpp — Rice sets in the split layout with BMI2: the select-in-word
// that finds a group's last quotient is one pdep (CPUs with a fast one:
// cpu_has_fast_pdep). Compiled for BMI2 function by function (target attributes), so
// the rest of the build keeps its baseline; nothing on other architectures.
#include "internal.hpp"

#if AMQ_GCS_X86
#include <cstdint>
#include <span>

#include "rice_search.hpp"

#define AMQ_GCS_BMI2 __attribute__((target("bmi,bmi2,lzcnt,popcnt")))

namespace amq::detail::gcs {
namespace {

template <unsigned C>
AMQ_GCS_BMI2 bool contains_rice(const GolombCodedSet& s, uint64_t v) noexcept {
  return contains<C, true>(s, v);
}
QueryFn rice_query_for(const GolombCodedSet& s) noexcept {
  return with_width(s, []<unsigned C>() -> QueryFn { return &contains_rice<C>; });
}
AMQ_GCS_BMI2 size_t rice_many_sparse(const GolombCodedSet& s, std::span<const uint64_t> h, std::span<bool> out) {
  return with_width(s, [&]<unsigned C>() AMQ_GCS_BMI2 { return many_sparse<C, true>(s, h, out); });
}

}  // namespace

const Kernels kRiceBmi2{Isa::bmi2, &rice_query_for, &rice_many_sparse, nullptr};

}  // namespace amq::detail::gcs

#undef AMQ_GCS_BMI2
#endif
