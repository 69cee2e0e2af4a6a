// amq/detail/prefetch.hpp — a read prefetch hint, and the batch size the batched
// queries (`contains_many`) use: hash a batch, prefetch every line it will touch, then
// probe, so the cache misses of a batch overlap instead of following one another.
#pragma once

#include <cstddef>

namespace amq::detail {

inline constexpr size_t kBatch = 16;

inline void prefetch(const void* p) noexcept { __builtin_prefetch(p, 0, 3); }

}  // namespace amq::detail
