// SuccinctSet::contains(): the descent instantiated per instruction set and per chain
// table, chosen once per set by the shared dispatch (amq/detail/dispatch.hpp).
#include "amq/detail/dispatch.hpp"
#include "descent.hpp"

namespace amq {

template <bool WithChains>
AMQ_SUCCINCT_TARGET_BMI2 bool SuccinctSet::Descent::kernel_bmi2(const SuccinctSet& self, const uint8_t* p,
                                                                size_t len) noexcept {
  return contains_t<AMQ_SUCCINCT_HAS_BMI2, WithChains>(self, p, len);
}

template <bool WithChains>
bool SuccinctSet::Descent::kernel_portable(const SuccinctSet& self, const uint8_t* p, size_t len) noexcept {
  return contains_t<false, WithChains>(self, p, len);
}

SuccinctSet::Descent::Fn SuccinctSet::Descent::select(bool with_chains) noexcept {
  using detail::Isa;
  static constexpr detail::Kernel<Fn> kPlain[] = {{Isa::bmi2, &kernel_bmi2<false>},
                                                  {Isa::portable, &kernel_portable<false>}};
  static constexpr detail::Kernel<Fn> kChains[] = {{Isa::bmi2, &kernel_bmi2<true>},
                                                   {Isa::portable, &kernel_portable<true>}};
  return with_chains ? detail::select_kernel(kChains) : detail::select_kernel(kPlain);
}

bool SuccinctSet::contains(KeyView key) const noexcept {
  if (n_ == 0) return false;
  const Bytes b = key.bytes();
  return contains_fn_(*this, reinterpret_cast<const uint8_t*>(b.data()), b.size());
}

}  // namespace amq
