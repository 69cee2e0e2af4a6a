#include "amq/file_io.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <string>
#include <thread>

#include "amq/error.hpp"

namespace amq {
namespace {

[[noreturn]] void fail(const std::string& path, const char* what, int err) {
  throw Error(err == ENOENT ? Errc::not_found : Errc::io, path + ": " + what + ": " + std::strerror(err));
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_;
};

std::string dir_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// A name for a temporary file that no other process or thread picks at the same time
// (O_EXCL catches the rest).
std::string temp_suffix() {
  static std::atomic<uint64_t> counter{0};
  uint64_t x = static_cast<uint64_t>(::getpid()) * 0x9E3779B97F4A7C15ULL ^
               static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
               (counter.fetch_add(1) << 48);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 29;
  static constexpr char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string s;
  for (int i = 0; i < 8; ++i, x /= 36) s += kDigits[x % 36];
  return s;
}

}  // namespace

std::string resolve_links(const std::string& path) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    std::string target(PATH_MAX, '\0');
    const ssize_t n = ::readlink(p.c_str(), target.data(), target.size());
    if (n < 0) fail(path, "cannot read symbolic link", errno);
    target.resize(static_cast<size_t>(n));
    if (target.empty() || target[0] == '/' || p.find('/') == std::string::npos)
      p = target;
    else
      p = dir_of(p) + "/" + target;
  }
  fail(path, "cannot follow symbolic link", ELOOP);
}

std::vector<std::byte> read_file(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) fail(path, "cannot open", errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) fail(path, "cannot stat", errno);
  if (S_ISDIR(st.st_mode)) throw Error(Errc::io, path + ": is a directory");
  std::vector<std::byte> out;
  if (S_ISREG(st.st_mode)) out.reserve(static_cast<size_t>(st.st_size));
  std::byte buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(path, "cannot read", errno);
    }
    if (n == 0) break;
    out.insert(out.end(), buf, buf + n);
  }
  return out;
}

void write_file_atomic(const std::string& path, std::span<const std::byte> data) {
  // Replace the file a link names, not the link; keep an existing file's mode and owner.
  const std::string target = resolve_links(path);
  struct stat old {};
  const bool exists = ::stat(target.c_str(), &old) == 0;
  // Renaming over a device, fifo or directory would replace it (a link to /dev/null
  // would make /dev/null a regular file): only regular files are replaced.
  if (exists && !S_ISREG(old.st_mode)) throw Error(Errc::io, path + ": not a regular file, not replaced");
  std::string tmp;
  int raw = -1;
  for (int attempt = 0; raw < 0; ++attempt) {
    tmp = target + ".tmp." + temp_suffix();
    // A new file is created 0666 less the umask (the kernel applies it); a
    // replacement starts private and takes the old file's mode below.
    raw = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, exists ? 0600 : 0666);
    if (raw < 0 && (errno != EEXIST || attempt == 100)) fail(path, "cannot create temporary file", errno);
  }
  Fd fd(raw);
  auto abandon = [&](const char* what, int err) {
    ::unlink(tmp.c_str());
    fail(path, what, err);
  };
  if (exists) {
    // Owner first (a change of owner clears set-id bits), then the mode. Without the
    // privilege to give the file away, keep at least the group where allowed.
    // Failing both, the file becomes the writer's, as with `sed -i`.
    [[maybe_unused]] const bool owner_kept = ::fchown(fd.get(), old.st_uid, old.st_gid) == 0 ||
                                             ::fchown(fd.get(), static_cast<uid_t>(-1), old.st_gid) == 0;
    if (::fchmod(fd.get(), old.st_mode & 07777) != 0) abandon("cannot set mode", errno);
  }
  const std::byte* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    const ssize_t n = ::write(fd.get(), p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      abandon("cannot write", errno);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) abandon("cannot fsync", errno);
  if (::close(fd.release()) != 0) abandon("cannot close", errno);
  if (::rename(tmp.c_str(), target.c_str()) != 0) abandon("cannot rename into place", errno);
  Fd dir(::open(dir_of(target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() >= 0) ::fsync(dir.get());
}

FileLock::FileLock(const std::string& path, std::optional<std::chrono::milliseconds> timeout)
    : path_(resolve_links(path)) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = timeout ? Clock::now() + *timeout : Clock::time_point::max();
  for (;;) {
    Fd fd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) fail(path, "cannot open", errno);
    if (!timeout) {
      while (::flock(fd.get(), LOCK_EX) != 0)
        if (errno != EINTR) fail(path, "cannot lock", errno);
    } else {
      auto pause = std::chrono::milliseconds(1);
      while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
        if (errno == EINTR) continue;
        if (errno != EWOULDBLOCK) fail(path, "cannot lock", errno);
        const auto now = Clock::now();
        if (now >= deadline) throw Error(Errc::locked, path + ": locked by another writer");
        std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
        pause = std::min(pause * 2, std::chrono::milliseconds(50));
      }
    }
    // The previous holder may have renamed a new file over the one we locked: then
    // lock that one (our lock on the old, unlinked file protects nothing).
    struct stat held {}, now {};
    if (::fstat(fd.get(), &held) != 0) fail(path, "cannot stat", errno);
    if (::stat(path_.c_str(), &now) == 0 && now.st_dev == held.st_dev && now.st_ino == held.st_ino) {
      fd_ = fd.release();
      return;
    }
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);
}

FileLock::FileLock(FileLock&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) { other.fd_ = -1; }

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

MappedFile::MappedFile(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) fail(path, "cannot open", errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) fail(path, "cannot stat", errno);
  if (!S_ISREG(st.st_mode)) throw Error(Errc::io, path + ": not a regular file");
  size_ = static_cast<size_t>(st.st_size);
  if (size_ == 0) return;
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (p == MAP_FAILED) fail(path, "cannot map", errno);
  data_ = static_cast<const std::byte*>(p);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<std::byte*>(data_), size_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_) ::munmap(const_cast<std::byte*>(data_), size_);
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

}  // namespace amq
