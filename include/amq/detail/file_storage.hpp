// amq/detail/file_storage.hpp — the bytes of a file a structure answers from: an owned,
// 8-byte-aligned copy (built or loaded) or a read-only memory mapping (opened).
//
// Structures that query their serialized form in place (SuccinctSet, BinaryFuseFilter,
// RibbonFilter) hold one through a shared_ptr, so copies of the structure share it.
// Owned memory is whole 64-bit words with the padding after the last byte zeroed; from
// `huge_from` bytes on it is 2 MiB-aligned and marked for transparent huge pages
// (amq/detail/huge_pages.hpp), since lookups touch a few lines spread over the whole
// file and with 4 KiB pages most of them also miss the TLB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "amq/detail/huge_pages.hpp"
#include "amq/file_io.hpp"

namespace amq::detail {

class FileStorage {
 public:
  // `size` bytes of owned memory, not yet written (the last word's padding zeroed).
  static std::shared_ptr<FileStorage> allocate(size_t size, size_t huge_from = kHugeThreshold);
  // An owned copy of `bytes`.
  static std::shared_ptr<const FileStorage> copy(std::span<const std::byte> bytes,
                                                 size_t huge_from = kHugeThreshold);
  // `path` memory-mapped read-only (amq::MappedFile: throws amq::Error naming the path).
  static std::shared_ptr<const FileStorage> map(const std::string& path);

  std::span<const std::byte> bytes() const noexcept { return bytes_; }
  // The owned memory, to be written once after allocate() (empty for a mapping).
  std::span<std::byte> writable() noexcept {
    return owned_ ? std::span<std::byte>(reinterpret_cast<std::byte*>(owned_.get()), bytes_.size())
                  : std::span<std::byte>();
  }
  bool is_mapped() const noexcept { return is_mapped_; }

 private:
  struct FreeWords {
    void operator()(uint64_t* p) const noexcept;
  };
  std::unique_ptr<uint64_t[], FreeWords> owned_;
  MappedFile mapped_;
  std::span<const std::byte> bytes_;
  bool is_mapped_ = false;
};

}  // namespace amq::detail
