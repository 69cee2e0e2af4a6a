// store_import / store_export / store_gc: a file as SHA-1-keyed chunks in a LogStore.
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
#include "log_store_segment.hpp"

namespace amq {
namespace {

constexpr char kManifestMagic[8] = {'A', 'M', 'Q', 'M', 'A', 'N', 'I', '1'};
constexpr size_t kDigest = 20;

// "path: what: strerror(err)", as the rest of the store reports system errors.
[[noreturn]] void fail(const std::string& path, const char* what, int err) { detail::logstore::sys_fail(path, what, err); }

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

namespace {

// The manifest's header, checked: magic, and a chunk list of `count` digests at
// `list_at` that fills the rest of the value.
struct Manifest {
  uint64_t total = 0, chunk_bytes = 0, count = 0;
  size_t list_at = 0;
};

Manifest parse_manifest(const std::string& manifest) {
  detail::ByteReader r(as_bytes(manifest), "manifest");
  if (std::memcmp(r.bytes(8).data(), kManifestMagic, 8) != 0) throw Error(Errc::bad_magic, "manifest: bad magic");
  Manifest m;
  m.total = r.u64();
  m.chunk_bytes = r.u64();
  m.count = r.u64();
  if (m.count > r.remaining() / kDigest || m.count * kDigest != r.remaining())
    throw Error(Errc::corrupt, "manifest: chunk list does not match its count");
  m.list_at = r.position();
  return m;
}

// Writes all of `chunk` to fd; false (errno set) on an error.
bool write_all(int fd, const std::string& chunk) {
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
}

// The chunks of an imported file, read back and checked.
struct Exporter {
  const LogStore& store;
  const std::string& manifest;
  Manifest m;
  std::string chunk;

  Bytes key(uint64_t i) const { return as_bytes(manifest).subspan(m.list_at + i * kDigest, kDigest); }

  // Fetches chunk i into `chunk` and checks it (present, SHA-1, sizes); `bad` throws.
  template <class Bad>
  void fetch(uint64_t i, uint64_t written, Bad&& bad) {
    const Bytes k = key(i);
    if (!store.get(k, chunk)) bad(Errc::not_found, "chunk " + std::to_string(i) + " is missing from the store");
    const auto md = sha1(chunk.data(), chunk.size());
    if (std::memcmp(md.data(), k.data(), kDigest) != 0)
      bad(Errc::checksum_mismatch, "chunk " + std::to_string(i) + " does not match its SHA-1");
    if (chunk.size() > m.chunk_bytes || written + chunk.size() > m.total)
      bad(Errc::corrupt, "manifest: chunks larger than the file");
  }

  // Standard output cannot be replaced atomically, so every chunk is checked first
  // and nothing is written unless the whole file can be.
  uint64_t to_stdout() {
    auto bad = [](Errc code, const std::string& msg) { throw Error(code, msg); };
    uint64_t written = 0;
    for (uint64_t i = 0; i < m.count; ++i) {
      fetch(i, written, bad);
      written += chunk.size();
    }
    if (written != m.total) bad(Errc::corrupt, "manifest: chunks add up to less than the file size");
    for (uint64_t i = 0; i < m.count; ++i) {
      if (!store.get(key(i), chunk)) bad(Errc::not_found, "chunk " + std::to_string(i) + " is missing from the store");
      if (!write_all(STDOUT_FILENO, chunk)) fail("standard output", "cannot write", errno);
    }
    return written;
  }

  // A temporary file beside `out`, fsynced, renamed into place, the directory fsynced.
  uint64_t to_file(const std::string& out) {
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
    for (uint64_t i = 0; i < m.count; ++i) {
      fetch(i, written, abandon);
      if (!write_all(fd, chunk)) abandon(Errc::io, out + ": cannot write: " + std::strerror(errno));
      written += chunk.size();
    }
    if (written != m.total) abandon(Errc::corrupt, "manifest: chunks add up to less than the file size");
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
};

}  // namespace

uint64_t store_export(const LogStore& store, const std::string& out) {
  std::string manifest;
  if (!store.get(kManifestKey, manifest))
    throw Error(Errc::not_found, store.dir() + ": no imported file (no manifest key)");
  Exporter e{store, manifest, parse_manifest(manifest), {}};
  if (e.m.chunk_bytes == 0 || e.m.chunk_bytes > LogStore::kMaxValueSize || e.m.count > e.m.total)
    throw Error(Errc::corrupt, "manifest: bad chunk size");
  return out == "-" ? e.to_stdout() : e.to_file(out);
}

GcResult store_gc(LogStore& store) {
  // The chunks the manifest lists (sorted digests), then every content-addressed key
  // outside it: 20 bytes, the SHA-1 of its value.
  std::vector<std::array<std::byte, kDigest>> listed;
  std::string manifest;
  if (store.get(kManifestKey, manifest)) {
    const Manifest m = parse_manifest(manifest);
    listed.resize(m.count);
    for (size_t i = 0; i < listed.size(); ++i) std::memcpy(listed[i].data(), manifest.data() + m.list_at + i * kDigest, kDigest);
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
