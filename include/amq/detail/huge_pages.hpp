// amq/detail/huge_pages.hpp — a std::allocator replacement that asks Linux for
// transparent huge pages on large arrays.
//
// A filter probed at random addresses larger than the TLB's reach (a few MiB of 4 KiB
// pages) pays a page walk on most lookups on top of the cache miss. Arrays of at least
// kHugeThreshold bytes are allocated 2 MiB-aligned and marked MADV_HUGEPAGE, which
// works on systems whose THP mode is "madvise" (the default on many distributions) as
// well as "always"; elsewhere it is a plain aligned allocation. Smaller arrays use
// ordinary (over-aligned) operator new.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace amq::detail {

inline constexpr size_t kHugePage = size_t{2} << 20;
inline constexpr size_t kHugeThreshold = size_t{4} << 20;

template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() noexcept = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T) / 2) throw std::bad_array_new_length();
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugeThreshold) return static_cast<T*>(::operator new(bytes, std::align_val_t(alignof(T))));
    const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = std::aligned_alloc(kHugePage, rounded);
    if (!p) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    (void)::madvise(p, rounded, MADV_HUGEPAGE);  // a hint: failure just means small pages
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n * sizeof(T) < kHugeThreshold) ::operator delete(p, std::align_val_t(alignof(T)));
    else std::free(p);
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace amq::detail
