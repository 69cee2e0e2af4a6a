// amq/detail/cpu.hpp — run-time CPU feature checks for the dispatched kernels, each
// made once.
#pragma once

namespace amq::detail {

// True if the CPU (and OS) run AVX2 code, and POPCNT, which every AVX2 CPU has and
// the AVX2 kernels use too.
inline bool cpu_has_avx2() noexcept {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
  }();
  return has;
#else
  return false;
#endif
}

}  // namespace amq::detail
