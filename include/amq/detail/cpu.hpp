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

// True if the CPU runs POPCNT, BMI1 and BMI2 with a fast pdep/pext: not AMD family
// 17h (Zen 1 and 2), which runs them in microcode, ~100x slower.
inline bool cpu_has_fast_pdep() noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
           !__builtin_cpu_is("amdfam17h");
  }();
  return has;
#else
  return false;
#endif
}

}  // namespace amq::detail
