// src/gcs/test_peer.hpp — for tests only: run a GolombCodedSet's query kernels for each
// instruction set this CPU has, on one machine.
#pragma once

#include <cstdint>

#include "amq/detail/dispatch.hpp"
#include "amq/golomb_coded_set.hpp"
#include "internal.hpp"

namespace amq::detail {

struct GcsTestPeer {
  // Chooses s's kernels again as a build or load would under ScopedIsaMask(mask);
  // returns the instruction set of the kernels chosen.
  static Isa select(GolombCodedSet& s, uint32_t mask) noexcept {
    const ScopedIsaMask scope(mask);
    s.select_kernels();
    return isa(s);
  }
  // The instruction set of s's kernels.
  static Isa isa(const GolombCodedSet& s) noexcept { return s.kernels_->isa; }
};

}  // namespace amq::detail
