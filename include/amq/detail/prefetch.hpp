// amq/detail/prefetch.hpp — a read prefetch hint, and the batch size the batched
// queries (`contains_many`) use: hash a batch, prefetch every line it will touch, then
// probe, so the cache misses of a batch overlap instead of following one another.
#pragma once

#include <cstddef>
#include <cstdint>

namespace amq::detail {

inline constexpr size_t kBatch = 16;

inline void prefetch(const void* p) noexcept { __builtin_prefetch(p, 0, 3); }

// Prefetches the line at byte `off` from `base`: a guess, which may lie outside the
// array or even below it (off wrapped), so the address is integer arithmetic, never a
// pointer past its object (UBSan, under the fuzzer, caught such a pointer wrapping).
[[gnu::always_inline]] inline void prefetch_guess(const void* base, uint64_t off) noexcept {
  __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(base) + off), 0, 3);
}

// The last-level cache's size (the largest cache of CPU 0 in sysfs; 32 MiB when the
// system does not say), read once. contains_many answers a structure smaller than
// this key by key: there prefetching only adds work, as out-of-order execution
// already overlaps the misses.
size_t last_level_cache_bytes() noexcept;

// The size of one core's L2 cache (sysfs for CPU 0, else sysconf, else 1 MiB), read
// once. A structure larger than this misses L2 on most random probes, which is where
// prefetching a batch of probes pays for its extra work (BloomFilter::contains_many).
size_t l2_cache_bytes() noexcept;

}  // namespace amq::detail
