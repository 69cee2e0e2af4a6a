// The log store's segment files (log_store_segment.hpp): naming, the header codec, and
// the I/O helpers.
#include "log_store_segment.hpp"

#include <fcntl.h>

#include <cstdio>
#include <cstring>

#include "amq/detail/crc32c.hpp"
#include "amq/error.hpp"

namespace amq::detail::logstore {

[[noreturn]] void sys_fail(const std::string& path, const std::string& what, int err) {
  throw Error(err == ENOENT ? Errc::not_found : Errc::io, path + ": " + what + ": " + std::strerror(err));
}

void pread_full(int fd, void* buf, size_t n, uint64_t off, const std::string& path) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(off));
    if (r < 0) {
      if (errno == EINTR) continue;
      sys_fail(path, "cannot read", errno);
    }
    if (r == 0) throw Error(Errc::io, path + ": unexpected end of file at offset " + std::to_string(off));
    p += r;
    n -= static_cast<size_t>(r);
    off += static_cast<uint64_t>(r);
  }
}

int pwrite_full(int fd, const void* buf, size_t n, uint64_t off) {
  const auto* p = static_cast<const char*>(buf);
  while (n > 0) {
    const ssize_t r = ::pwrite(fd, p, n, static_cast<off_t>(off));
    if (r < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += r;
    n -= static_cast<size_t>(r);
    off += static_cast<uint64_t>(r);
  }
  return 0;
}

void fsync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) sys_fail(dir, "cannot open directory", errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) sys_fail(dir, "cannot fsync directory", err);
}

std::string seg_name(uint64_t gen) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "seg-%016llx.log", static_cast<unsigned long long>(gen));
  return buf;
}

bool parse_seg_name(const std::string& name, uint64_t& gen) {
  if (name.size() != 24 || name.compare(0, 4, "seg-") != 0 || name.compare(20, 4, ".log") != 0) return false;
  gen = 0;
  for (size_t i = 4; i < 20; ++i) {
    const char c = name[i];
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else return false;
    gen = gen << 4 | static_cast<uint64_t>(d);
  }
  return true;
}

std::array<std::byte, kSegHeader> encode_seg_header(const SegHeader& h) {
  std::array<std::byte, kSegHeader> b{};
  std::memcpy(b.data(), kSegMagic, 8);
  const uint16_t version = kSegVersion, slot = static_cast<uint16_t>(h.slot);
  std::memcpy(b.data() + 8, &version, 2);
  std::memcpy(b.data() + 10, &slot, 2);
  std::memcpy(b.data() + 16, &h.gen, 8);
  std::memcpy(b.data() + 24, &h.covers, 8);
  std::memcpy(b.data() + 32, &h.part, 4);
  std::memcpy(b.data() + 36, &h.nparts, 4);
  const uint32_t crc = crc32c(b.data(), b.size());  // with the crc field zero
  std::memcpy(b.data() + 12, &crc, 4);
  return b;
}

SegHeader decode_seg_header(const std::byte* p, const std::string& path) {
  if (std::memcmp(p, kSegMagic, 8) != 0) throw Error(Errc::bad_magic, path + ": not a log store segment");
  uint16_t version, slot;
  uint32_t crc;
  std::memcpy(&version, p + 8, 2);
  std::memcpy(&slot, p + 10, 2);
  std::memcpy(&crc, p + 12, 4);
  std::array<std::byte, kSegHeader> copy;
  std::memcpy(copy.data(), p, kSegHeader);
  std::memset(copy.data() + 12, 0, 4);
  if (crc32c(copy.data(), copy.size()) != crc)
    throw Error(Errc::checksum_mismatch, path + ": segment header checksum mismatch");
  if (version != kSegVersion)
    throw Error(Errc::unsupported_version, path + ": segment version " + std::to_string(version));
  SegHeader h;
  h.slot = slot;
  std::memcpy(&h.gen, p + 16, 8);
  std::memcpy(&h.covers, p + 24, 8);
  std::memcpy(&h.part, p + 32, 4);
  std::memcpy(&h.nparts, p + 36, 4);
  if (h.slot >= kSlotCount) throw Error(Errc::corrupt, path + ": segment slot out of range");
  if (h.covers != 0 && (h.nparts == 0 || h.part >= h.nparts || h.covers >= h.gen))
    throw Error(Errc::corrupt, path + ": bad compaction fields in segment header");
  return h;
}

}  // namespace amq::detail::logstore
