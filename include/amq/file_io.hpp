// amq/file_io.hpp — whole-file reads, atomic writes and read-only memory maps.
//
// write_file_atomic never leaves a partial file: it writes a temporary file in the
// same directory, fsyncs it, renames it over the target and fsyncs the directory, so
// a reader sees either the old file or the new one. On any failure the temporary file
// is removed and amq::Error(Errc::io) is thrown.
//
//   std::vector<std::byte> bytes = amq::read_file("words.amq");
//   amq::write_file_atomic("words.amq", bytes);
//   amq::MappedFile m("big.amq");          // m.bytes() stays valid while m lives
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace amq {

// Reads a whole file. Throws Errc::not_found or Errc::io with the path in the message.
std::vector<std::byte> read_file(const std::string& path);

// Atomically replaces (or creates) `path` with `data`. "-" is not special here.
void write_file_atomic(const std::string& path, std::span<const std::byte> data);

class MappedFile {
 public:
  MappedFile() = default;
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }

 private:
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace amq
