// store_import / store_export: a file as SHA-1-keyed chunks in a LogStore (seed 003's demo).
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "amq/detail/byte_io.hpp"
#include "amq/error.hpp"
#include "amq/log_store.hpp"

namespace amq {
namespace {

constexpr char kManifestMagic[8] = {'A', 'M', 'Q', 'M', 'A', 'N', 'I', '1'};
constexpr size_t kDigest = 20;

[[noreturn]] void fail(const std::string& path, const char* what, int err) {
  throw Error(err == ENOENT ? Errc::not_found : Errc::io, path + ": " + what + ": " + std::strerror(err));
}

std::array<std::byte, kDigest> sha1(const void* data, size_t n) {
  std::array<std::byte, kDigest> md{};
  unsigned int len = 0;
  if (EVP_Digest(data, n, reinterpret_cast<unsigned char*>(md.data()), &len, EVP_sha1(), nullptr) != 1 ||
      len != kDigest)
    throw Error(Errc::io, "SHA-1 failed (OpenSSL)");
  return md;
}

// Reads up to n bytes (fewer only at end of file).
size_t read_some(int fd, std::byte* p, size_t n, const std::string& path) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, p + got, n - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      fail(path, "cannot read", errno);
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

}  // namespace

ImportResult store_import(LogStore& store, const std::string& file, size_t chunk_bytes) {
  if (chunk_bytes == 0 || chunk_bytes > LogStore::kMaxValueSize)
    throw Error(Errc::invalid_argument, "chunk size must be 1 byte .. 64 MiB");
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(file, "cannot open", errno);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  ImportResult res;
  std::vector<std::byte> chunk(chunk_bytes);
  detail::ByteWriter hashes;
  for (;;) {
    const size_t n = read_some(fd, chunk.data(), chunk_bytes, file);
    if (n == 0) break;
    const auto md = sha1(chunk.data(), n);
    const Bytes key(md.data(), md.size());
    if (!store.contains(key)) {
      store.put(key, Bytes(chunk.data(), n));
      ++res.new_chunks;
    }
    hashes.bytes(key);
    res.bytes += n;
    ++res.chunks;
    if (n < chunk_bytes) break;
  }
  detail::ByteWriter m;
  m.bytes(std::string_view(kManifestMagic, 8));
  m.u64(res.bytes);
  m.u64(chunk_bytes);
  m.u64(res.chunks);
  if (hashes.size() + m.size() > LogStore::kMaxValueSize)
    throw Error(Errc::too_large, file + ": too many chunks for one manifest; use a larger chunk size");
  m.bytes(hashes.buffer());
  store.put(kManifestKey, Bytes(m.buffer()));
  store.sync();
  return res;
}

uint64_t store_export(const LogStore& store, const std::string& out) {
  std::string manifest;
  if (!store.get(kManifestKey, manifest))
    throw Error(Errc::not_found, store.dir() + ": no imported file (no manifest key)");
  detail::ByteReader r(as_bytes(manifest), "manifest");
  if (std::memcmp(r.bytes(8).data(), kManifestMagic, 8) != 0) throw Error(Errc::bad_magic, "manifest: bad magic");
  const uint64_t total = r.u64(), chunk_bytes = r.u64(), count = r.u64();
  if (count > r.remaining() / kDigest || count * kDigest != r.remaining())
    throw Error(Errc::corrupt, "manifest: chunk list does not match its count");
  if (chunk_bytes == 0 || chunk_bytes > LogStore::kMaxValueSize || count > total)
    throw Error(Errc::corrupt, "manifest: bad chunk size");

  // Fetches chunk i into `chunk` and checks it (present, SHA-1, sizes); `bad` throws.
  const size_t list_at = r.position();
  auto fetch = [&](uint64_t i, uint64_t written, std::string& chunk, auto&& bad) {
    const Bytes key = as_bytes(manifest).subspan(list_at + i * kDigest, kDigest);
    if (!store.get(key, chunk)) bad(Errc::not_found, "chunk " + std::to_string(i) + " is missing from the store");
    const auto md = sha1(chunk.data(), chunk.size());
    if (std::memcmp(md.data(), key.data(), kDigest) != 0)
      bad(Errc::checksum_mismatch, "chunk " + std::to_string(i) + " does not match its SHA-1");
    if (chunk.size() > chunk_bytes || written + chunk.size() > total)
      bad(Errc::corrupt, "manifest: chunks larger than the file");
  };
  auto write_all = [](int fd, const std::string& chunk) {
    const char* p = chunk.data();
    size_t left = chunk.size();
    while (left > 0) {
      const ssize_t w = ::write(fd, p, left);
      if (w < 0) {
        if (errno == EINTR) continue;
        return false;
      }
      p += w;
      left -= static_cast<size_t>(w);
    }
    return true;
  };
  std::string chunk;

  if (out == "-") {
    // Standard output cannot be replaced atomically, so every chunk is checked first
    // and nothing is written unless the whole file can be.
    auto bad = [](Errc code, const std::string& msg) { throw Error(code, msg); };
    uint64_t written = 0;
    for (uint64_t i = 0; i < count; ++i) {
      fetch(i, written, chunk, bad);
      written += chunk.size();
    }
    if (written != total) bad(Errc::corrupt, "manifest: chunks add up to less than the file size");
    for (uint64_t i = 0; i < count; ++i) {
      if (!store.get(as_bytes(manifest).subspan(list_at + i * kDigest, kDigest), chunk))
        bad(Errc::not_found, "chunk " + std::to_string(i) + " is missing from the store");
      if (!write_all(STDOUT_FILENO, chunk)) fail("standard output", "cannot write", errno);
    }
    return written;
  }

  std::string tmp = out + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) fail(out, "cannot create temporary file", errno);
  ::fchmod(fd, 0644);
  auto abandon = [&](Errc code, const std::string& msg) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw Error(code, msg);
  };
  uint64_t written = 0;
  for (uint64_t i = 0; i < count; ++i) {
    fetch(i, written, chunk, abandon);
    if (!write_all(fd, chunk)) abandon(Errc::io, out + ": cannot write: " + std::strerror(errno));
    written += chunk.size();
  }
  if (written != total) abandon(Errc::corrupt, "manifest: chunks add up to less than the file size");
  if (::fsync(fd) != 0) abandon(Errc::io, out + ": cannot fsync: " + std::strerror(errno));
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    fail(out, "cannot close", errno);
  }
  if (::rename(tmp.c_str(), out.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail(out, "cannot rename into place", err);
  }
  const auto slash = out.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : out.substr(0, slash));
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return written;
}

GcResult store_gc(LogStore& store) {
  // The chunks the manifest lists (sorted digests), then every content-addressed key
  // outside it: 20 bytes, the SHA-1 of its value.
  std::vector<std::array<std::byte, kDigest>> listed;
  std::string manifest;
  if (store.get(kManifestKey, manifest)) {
    detail::ByteReader r(as_bytes(manifest), "manifest");
    if (std::memcmp(r.bytes(8).data(), kManifestMagic, 8) != 0) throw Error(Errc::bad_magic, "manifest: bad magic");
    r.u64();
    r.u64();
    const uint64_t count = r.u64();
    if (count > r.remaining() / kDigest || count * kDigest != r.remaining())
      throw Error(Errc::corrupt, "manifest: chunk list does not match its count");
    listed.resize(count);
    for (auto& d : listed) std::memcpy(d.data(), r.bytes(kDigest).data(), kDigest);
    std::sort(listed.begin(), listed.end());
  }
  std::vector<std::array<std::byte, kDigest>> orphans;
  GcResult res;
  store.for_each([&](Bytes key, Bytes value) {
    if (key.size() != kDigest) return;
    std::array<std::byte, kDigest> k;
    std::memcpy(k.data(), key.data(), kDigest);
    if (std::binary_search(listed.begin(), listed.end(), k)) return;
    if (sha1(value.data(), value.size()) != k) return;  // not a chunk: a key put by hand
    orphans.push_back(k);
    res.removed_bytes += value.size();
  });
  for (const auto& k : orphans)
    if (store.erase(Bytes(k.data(), k.size()))) ++res.removed;
  if (res.removed > 0) {
    store.sync();
    store.compact();
  }
  return res;
}

}  // namespace amq
