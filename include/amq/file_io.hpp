// amq/file_io.hpp — whole-file reads, atomic writes, writer locks and read-only
// memory maps.
//
// write_file_atomic never leaves a partial file: it writes a temporary file in the
// same directory, fsyncs it, renames it over the target and fsyncs the directory, so
// a reader sees either the old file or the new one. On any failure the temporary file
// is removed and amq::Error(Errc::io) is thrown. A symbolic link is followed: the file
// it names is replaced and the link stays. An existing file keeps its permission bits
// and (where the process may set them) its owner and group; a new file gets
// 0666 & ~umask, as `sed -i`, editors and `install` do.
//
// Read-modify-write (load a set, insert, write it back) by several processes at once
// loses updates unless each holds a FileLock across the whole cycle:
//
//   amq::FileLock lock("words.amq");       // blocks until no other writer holds it
//   auto set = amq::open_set(lock.path()); // read under the lock...
//   set->insert(key);
//   set->write_to([&](auto bytes) { amq::write_file_atomic(lock.path(), bytes); });
//
// Memory maps: a MappedFile must not be truncated or overwritten in place while it is
// mapped; reading a page that no longer exists in the file raises SIGBUS (a signal,
// not an exception). Replace mapped files by rename, as write_file_atomic does: the
// mapping keeps the old contents until it is unmapped.
//
// Cost and choice. read_file copies the whole file into memory (one buffer of its
// size): use it for small files and for files another process may truncate or rewrite
// in place. MappedFile copies nothing and reads pages when they are first touched: use
// it for large files queried in place (the open() of BinaryFuseFilter, RibbonFilter
// and SuccinctSet map their files this way). write_file_atomic writes the data once
// and fsyncs the file and its directory. FileLock is one flock(2), held by a
// descriptor: it waits only while another writer holds the lock.
//
//   std::vector<std::byte> bytes = amq::read_file("words.amq");
//   amq::write_file_atomic("words.amq", bytes);
//   amq::MappedFile m("big.amq");          // m.bytes() stays valid while m lives
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace amq {

// Reads a whole file. Throws Errc::not_found or Errc::io with the path in the message.
std::vector<std::byte> read_file(const std::string& path);

// Atomically replaces (or creates) `path` with `data`. "-" is not special here.
// Symbolic links are followed; mode and owner of an existing file are kept. A path
// that names something other than a regular file (a device, a fifo) is not replaced:
// Errc::io.
void write_file_atomic(const std::string& path, std::span<const std::byte> data);

// The file a path names once every symbolic link in its last component is followed
// (the link's target, even if that does not exist yet); `path` itself if it is no link.
// Throws Errc::io on a loop of links.
std::string resolve_links(const std::string& path);

// An exclusive advisory lock (flock(2)) on an existing file, held until destruction,
// that serialises amq's writers of that file. The lock is taken on the file itself,
// after following symbolic links, and survives replacement by rename: once locked,
// the path is checked to still name the locked file, and if a writer replaced it
// meanwhile the new file is locked instead. Readers take no lock (writes are atomic).
// Only processes that lock cooperate: a plain `cp` over the file is not stopped.
class FileLock {
 public:
  FileLock() = default;
  // Waits for the lock without bound (no timeout) or for at most `timeout`; on
  // timeout throws Errc::locked ("PATH: locked by another writer"). Throws
  // Errc::not_found / Errc::io if the file cannot be opened.
  explicit FileLock(const std::string& path, std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  ~FileLock();
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  // The locked file's path with links followed: read and replace this path.
  const std::string& path() const noexcept { return path_; }
  bool locked() const noexcept { return fd_ >= 0; }

 private:
  int fd_ = -1;
  std::string path_;
};

// A read-only, private mapping of a whole file. The file must not shrink while mapped
// (see above): a read past its new end raises SIGBUS.
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
