// The log store's lock file (log_store_lock.hpp).
#include "log_store_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "amq/error.hpp"
#include "log_store_segment.hpp"

namespace amq::detail::logstore {

bool writer_active(const std::string& lock) {
  const int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return false;
    sys_fail(lock, "cannot open lock file", errno);
  }
  const int err = ::flock(fd, LOCK_SH | LOCK_NB) == 0 ? 0 : errno;
  ::close(fd);  // releases the shared lock
  if (err != 0 && err != EWOULDBLOCK) sys_fail(lock, "cannot lock", err);
  return err == EWOULDBLOCK;
}

int lock_writer(const std::string& lock, const std::string& dir) {
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) sys_fail(lock, "cannot open lock file", errno);
  // A reader asking whether a writer is active holds a shared lock for a moment.
  for (int attempt = 0; ::flock(fd, LOCK_EX | LOCK_NB) != 0; ++attempt) {
    const int err = errno;
    if (err != EWOULDBLOCK || attempt == 50) ::close(fd);
    if (err != EWOULDBLOCK) sys_fail(lock, "cannot lock", err);
    if (attempt == 50)
      throw Error(Errc::locked, dir + ": the log store is open by another writer (" + lock + " is locked)");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return fd;
}

}  // namespace amq::detail::logstore
