// detail::FileStorage: owned (aligned, huge-page-marked when large) or mapped file bytes.
#include "amq/detail/file_storage.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace amq::detail {

void FileStorage::FreeWords::operator()(uint64_t* p) const noexcept { std::free(p); }

std::shared_ptr<FileStorage> FileStorage::allocate(size_t size, size_t huge_from) {
  auto s = std::make_shared<FileStorage>();
  const size_t words = std::max<size_t>((size + 7) / 8, 1);
  void* mem = nullptr;
  if (words * 8 >= huge_from) {
    const size_t bytes = (words * 8 + kHugePage - 1) & ~(kHugePage - 1);
    mem = std::aligned_alloc(kHugePage, bytes);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (mem) (void)::madvise(mem, bytes, MADV_HUGEPAGE);  // a hint: failure just means small pages
#endif
  } else {
    mem = std::malloc(words * 8);
  }
  if (!mem) throw std::bad_alloc();
  s->owned_.reset(static_cast<uint64_t*>(mem));
  s->owned_[words - 1] = 0;  // the padding after the last byte
  s->bytes_ = std::span<const std::byte>(static_cast<const std::byte*>(mem), size);
  return s;
}

std::shared_ptr<const FileStorage> FileStorage::copy(std::span<const std::byte> bytes, size_t huge_from) {
  auto s = allocate(bytes.size(), huge_from);
  if (!bytes.empty()) std::memcpy(s->owned_.get(), bytes.data(), bytes.size());
  return s;
}

std::shared_ptr<const FileStorage> FileStorage::map(const std::string& path) {
  auto s = std::make_shared<FileStorage>();
  s->mapped_ = MappedFile(path);
  s->bytes_ = s->mapped_.bytes();
  s->is_mapped_ = true;
  return s;
}

}  // namespace amq::detail
