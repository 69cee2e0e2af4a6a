// The log store's locks: the in-process reader-writer lock that guards a store's
// state, and the DIR/LOCK file that keeps a second writer out (docs/decisions/0002).
#pragma once

#include <pthread.h>

#include <string>

namespace amq::detail::logstore {

inline constexpr const char* kLockName = "LOCK";

// A reader-writer lock that prefers writers: glibc's default (and so std::shared_mutex)
// lets a steady stream of gets starve puts. Not recursive: no path takes it twice.
class RwLock {
 public:
  RwLock() {
    pthread_rwlockattr_t a;
    pthread_rwlockattr_init(&a);
    pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&l_, &a);
    pthread_rwlockattr_destroy(&a);
  }
  ~RwLock() { pthread_rwlock_destroy(&l_); }
  RwLock(const RwLock&) = delete;
  RwLock& operator=(const RwLock&) = delete;
  void lock() { pthread_rwlock_wrlock(&l_); }
  void unlock() { pthread_rwlock_unlock(&l_); }
  void lock_shared() { pthread_rwlock_rdlock(&l_); }
  void unlock_shared() { pthread_rwlock_unlock(&l_); }

 private:
  pthread_rwlock_t l_;
};

// True if a writer holds the lock file `lock` (probed with a shared flock that is
// released at once). A missing file: false.
bool writer_active(const std::string& lock);

// Opens (creating it) the lock file `lock` of store `dir` and takes its exclusive
// flock; returns the descriptor, which holds the lock until it is closed. Retries for
// about 50 ms to ride over a reader's probe, then throws Errc::locked.
int lock_writer(const std::string& lock, const std::string& dir);

}  // namespace amq::detail::logstore
