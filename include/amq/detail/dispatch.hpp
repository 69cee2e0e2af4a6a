// amq/detail/dispatch.hpp — the one way every structure picks a CPU-specific kernel.
//
// A structure with kernels for several instruction sets lists them, most capable
// first, each with the instruction set it needs; `select_kernel` returns the first
// one this CPU runs and the current `allowed_isas()` mask lets through. The last
// entry must be Isa::portable, which always qualifies.
//
//   using ContainsFn = bool (*)(const Table&, uint64_t);
//   static constexpr Kernel<ContainsFn> kContains[] = {
//       {Isa::bmi2, &contains_bmi2}, {Isa::portable, &contains_portable}};
//   contains_ = select_kernel(kContains);   // once, when the object is built or loaded
//
// Tests run every variant on one machine by narrowing the mask around the code that
// selects (`ScopedIsaMask only_portable(isa_bit(Isa::portable));`). A structure
// selects when it is built or loaded and keeps its choice, so a test narrows the
// mask before it builds or loads the object under test.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>

#include "amq/detail/cpu.hpp"

namespace amq::detail {

// What a kernel needs beyond baseline x86-64 (or any other architecture).
//   portable: nothing.
//   bmi2:     POPCNT, BMI1 and BMI2 with a fast pdep/pext (cpu_has_fast_pdep).
//   avx2:     AVX2 and POPCNT (cpu_has_avx2).
enum class Isa : uint8_t { portable = 0, bmi2 = 1, avx2 = 2 };

constexpr uint32_t isa_bit(Isa isa) noexcept { return 1u << static_cast<unsigned>(isa); }
constexpr uint32_t kAllIsas = isa_bit(Isa::portable) | isa_bit(Isa::bmi2) | isa_bit(Isa::avx2);

inline bool cpu_runs(Isa isa) noexcept {
  switch (isa) {
    case Isa::portable: return true;
    case Isa::bmi2: return cpu_has_fast_pdep();
    case Isa::avx2: return cpu_has_avx2();
  }
  return false;
}

// The instruction sets kernels may be selected for (all, unless a test narrowed it).
inline std::atomic<uint32_t>& isa_mask_storage() noexcept {
  static std::atomic<uint32_t> mask{kAllIsas};
  return mask;
}
inline uint32_t allowed_isas() noexcept { return isa_mask_storage().load(std::memory_order_relaxed); }

// True if a kernel for `isa` may run here: the CPU runs it and the mask allows it.
inline bool isa_usable(Isa isa) noexcept {
  return isa == Isa::portable || ((allowed_isas() & isa_bit(isa)) != 0 && cpu_runs(isa));
}

template <class Fn>
struct Kernel {
  Isa isa;
  Fn fn;
};

// The first kernel of `kernels` (most capable first, ending with Isa::portable) that
// isa_usable allows.
template <class Fn>
Fn select_kernel(std::span<const Kernel<Fn>> kernels) noexcept {
  for (const Kernel<Fn>& k : kernels)
    if (isa_usable(k.isa)) return k.fn;
  return kernels.back().fn;
}
template <class Fn, size_t N>
Fn select_kernel(const Kernel<Fn> (&kernels)[N]) noexcept {
  return select_kernel(std::span<const Kernel<Fn>>(kernels, N));
}

// Narrows allowed_isas() for its lifetime (tests and benchmarks: run a variant the CPU
// would not be given by default). Not for concurrent use with code that selects.
class ScopedIsaMask {
 public:
  explicit ScopedIsaMask(uint32_t mask) noexcept
      : saved_(isa_mask_storage().exchange(mask | isa_bit(Isa::portable))) {}
  ~ScopedIsaMask() { isa_mask_storage().store(saved_); }
  ScopedIsaMask(const ScopedIsaMask&) = delete;
  ScopedIsaMask& operator=(const ScopedIsaMask&) = delete;

 private:
  uint32_t saved_;
};

}  // namespace amq::detail
