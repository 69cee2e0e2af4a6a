// LogStore: the public API over LogStore::Impl (log_store_impl.hpp), appending and
// reading records, and group commit. Recovery, the snapshot and compaction have rooms
// of their own (log_store_recovery.cpp, log_store_snapshot.cpp, log_store_compact.cpp);
// docs/format.md ("Log store") describes the files.
#include "amq/log_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <shared_mutex>  // std::shared_lock
#include <tuple>

#include "log_store_impl.hpp"

namespace amq {

using namespace detail::logstore;
using detail::LogIndex;

LogStore::Impl::~Impl() {
  stop_flusher();
  if (lock_fd >= 0) ::close(lock_fd);
}

void LogStore::Impl::datasync(const Segment& s) {
  if (::fdatasync(s.fd) != 0) {
    const int err = errno;
    failed.store(err);
    sys_fail(s.path, "cannot fdatasync", err);
  }
}

// ---- segments ----------------------------------------------------------------------

uint32_t LogStore::Impl::free_slot() const {
  for (uint32_t i = 0; i < kSlotCount; ++i)
    if (!slots[i]) return i;
  throw Error(Errc::full, dir + ": 64 segments in use; run compact()");
}

// A new segment; ordinary ones are complete on disk (atomic rename) when this
// returns, compaction outputs stay "<name>.compacting" until finished.
LogStore::Impl::SegPtr LogStore::Impl::create_segment(uint64_t gen, bool compaction) {
  auto s = std::make_shared<Segment>();
  s->h.slot = free_slot();
  s->h.gen = gen;
  const std::string final_path = file(seg_name(gen));
  const std::string tmp = final_path + (compaction ? ".compacting" : ".tmp");
  s->fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (s->fd < 0) sys_fail(tmp, "cannot create segment", errno);
  s->path = tmp;
  const auto hdr = encode_seg_header(s->h);
  if (const int err = pwrite_full(s->fd, hdr.data(), hdr.size(), 0)) {
    ::unlink(tmp.c_str());
    sys_fail(tmp, "cannot write", err);
  }
  s->length = kSegHeader;
  if (!compaction) {
    if (::fdatasync(s->fd) != 0 || ::rename(tmp.c_str(), final_path.c_str()) != 0) {
      const int err = errno;
      ::unlink(tmp.c_str());
      sys_fail(final_path, "cannot create segment", err);
    }
    s->path = final_path;
    fsync_dir(dir);
  }
  slots[s->h.slot] = s;
  return s;
}

// Seals the active segment and starts a new one. Writers leave two slots free, so
// that compaction (a new active segment and an output) can always start.
void LogStore::Impl::roll(bool for_compaction) {
  if (!for_compaction) {
    int free = 0;
    for (const auto& s : slots) free += s ? 0 : 1;
    if (free < 3) throw Error(Errc::full, dir + ": 62 segments in use; run compact()");
  }
  datasync(*segs.back());
  segs.push_back(create_segment(next_gen++, false));
}

// Appends one record to the active segment; returns its location.
uint64_t LogStore::Impl::append(uint8_t type, Bytes key, Bytes value) {
  const uint64_t size = record_size(key.size(), value.size());
  if (segs.back()->length + size > opt.segment_bytes && segs.back()->length > kSegHeader) roll();
  Segment& a = *segs.back();
  encode_record(wbuf, type, key, value);
  if (const int err = pwrite_full(a.fd, wbuf.data(), size, a.length)) {
    if (::ftruncate(a.fd, static_cast<off_t>(a.length)) != 0) failed.store(errno);
    sys_fail(a.path, "cannot append", err);
  }
  const uint64_t loc = make_loc(a.h.slot, a.length);
  a.length += size;
  ++a.records;
  changed = true;
  if (opt.durability == Durability::every_write) datasync(a);
  else unsynced.store(true, std::memory_order_relaxed);
  return loc;
}

// ---- reading records ---------------------------------------------------------------

// Reads the record at `loc` if its key is `key`: true and, when `value` is given, the
// value (CRC checked). `size` gets the record size. Counts preads in `nreads`.
bool LogStore::Impl::read_if_key(uint64_t loc, Bytes key, std::string* value, uint64_t* size, uint64_t& nreads) const {
  const Segment* s = slots[loc_slot(loc)].get();
  const uint64_t pos = loc_pos(loc);
  if (!s || pos + kRecHeader > s->length) throw Error(Errc::corrupt, dir + ": index points outside the log");
  thread_local std::vector<std::byte> buf;
  const uint64_t avail = s->length - pos;
  const uint64_t want = std::min<uint64_t>(avail, kRecHeader + key.size() + (value ? 512 : 0));
  if (buf.size() < want) buf.resize(want);
  pread_full(s->fd, buf.data(), want, pos, s->path);
  ++nreads;
  const RecLengths l = record_lengths(buf.data());
  const uint64_t rsize = l.size();
  if (l.vlen > kMaxValueSize || rsize > avail) throw Error(Errc::corrupt, s->path + ": record overruns the segment");
  // The rest of the record, then its CRC.
  auto check_whole = [&] {
    if (rsize > want) {
      if (buf.size() < rsize) buf.resize(rsize);
      pread_full(s->fd, buf.data() + want, rsize - want, pos + want, s->path);
      ++nreads;
    }
    if (!crc_ok(buf.data(), rsize))
      throw Error(Errc::checksum_mismatch,
                  s->path + ": record at offset " + std::to_string(pos) + " fails its CRC-32C");
  };
  if (l.klen != key.size() || want < kRecHeader + l.klen || !same(Bytes(buf.data() + kRecHeader, l.klen), key)) {
    // Another key with the same fingerprint (rare), or damage: a changed length or key
    // must not make the key read as absent.
    check_whole();
    return false;
  }
  if (size) *size = rsize;
  if (value) {
    check_whole();
    value->assign(reinterpret_cast<const char*>(buf.data()) + kRecHeader + l.klen, l.vlen);
  }
  return true;
}

// The index slot of `key` (confirmed by reading the log), or nullptr.
uint64_t* LogStore::Impl::find(Bytes key, uint32_t fp, uint64_t* old_size, uint64_t& nreads) {
  return index.find(fp, [&](uint64_t slot) { return read_if_key(LogIndex::loc_of(slot), key, nullptr, old_size, nreads); });
}

// ---- group commit ------------------------------------------------------------------

void LogStore::Impl::start_flusher() {
  flusher = std::thread([this] {
    std::unique_lock fl(fl_mu);
    for (;;) {
      fl_cv.wait_for(fl, std::chrono::milliseconds(opt.group_commit_ms), [&] { return fl_stop; });
      if (fl_stop) return;
      if (!unsynced.exchange(false)) continue;
      SegPtr a;
      {
        std::shared_lock lk(mu);
        if (segs.empty()) continue;
        a = segs.back();
      }
      fl.unlock();
      if (::fdatasync(a->fd) != 0) failed.store(errno);
      fl.lock();
    }
  });
}

void LogStore::Impl::stop_flusher() {
  if (!flusher.joinable()) return;
  {
    std::lock_guard fl(fl_mu);
    fl_stop = true;
  }
  fl_cv.notify_all();
  flusher.join();
}

// ---- the public API ----------------------------------------------------------------

LogStore::LogStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LogStore::LogStore(LogStore&&) noexcept = default;
LogStore& LogStore::operator=(LogStore&& other) noexcept {
  if (this != &other) {
    try {
      close();
    } catch (...) {
    }
    impl_ = std::move(other.impl_);
  }
  return *this;
}
LogStore::~LogStore() {
  try {
    close();
  } catch (...) {
  }
}

LogStore LogStore::open(const std::string& dir, const LogStoreOptions& options) {
  if (options.segment_bytes < (64u << 10) || options.segment_bytes > kMaxSegmentBytes)
    throw Error(Errc::invalid_argument, "log store: segment_bytes must be in 64 KiB..4 GiB");
  if (options.durability == Durability::group_commit && (options.group_commit_ms < 1 || options.group_commit_ms > 60000))
    throw Error(Errc::invalid_argument, "log store: group_commit_ms must be in 1..60000");
  auto impl = std::make_unique<Impl>();
  impl->dir = dir.empty() ? "." : dir;
  impl->opt = options;
  struct stat st {};
  if (::stat(impl->dir.c_str(), &st) != 0) {
    if (errno != ENOENT) sys_fail(dir, "cannot stat", errno);
    if (!options.create_if_missing || options.read_only) throw Error(Errc::not_found, dir + ": no such log store directory");
    std::error_code ec;
    std::filesystem::create_directories(impl->dir, ec);
    if (ec) sys_fail(dir, "cannot create directory", ec.value());
  } else if (!S_ISDIR(st.st_mode)) {
    throw Error(Errc::invalid_argument, dir + ": not a directory");
  }
  const std::string lock = impl->file(kLockName);
  if (options.read_only) {
    // No lock held: the lock only tells whether a writer is active, whose torn tail is
    // its write in flight. (Asked again after the scan, for a writer that started
    // meanwhile.)
    impl->writer_live = writer_active(lock);
    impl->recover();
    if (!impl->writer_live && writer_active(lock)) impl->forget_torn_tails();
    return LogStore(std::move(impl));
  }
  impl->lock_fd = lock_writer(lock, dir);
  impl->recover();
  if (options.durability == Durability::group_commit) impl->start_flusher();
  return LogStore(std::move(impl));
}

namespace {
void check_key(Bytes key) {
  if (key.size() > LogStore::kMaxKeySize)
    throw Error(Errc::too_large, "log store: key of " + std::to_string(key.size()) + " bytes (limit 65535)");
}
}  // namespace

void LogStore::put(KeyView key, Bytes value) {
  if (!impl_) throw Error(Errc::invalid_argument, "log store: moved-from object");
  Impl& s = *impl_;
  const Bytes k = key.bytes();
  check_key(k);
  if (value.size() > kMaxValueSize)
    throw Error(Errc::too_large, "log store: value of " + std::to_string(value.size()) + " bytes (limit 64 MiB)");
  std::unique_lock lk(s.mu);
  s.check_writable();
  const uint32_t fp = LogIndex::fingerprint(s.hash(k));
  uint64_t old_size = 0, nreads = 0;
  uint64_t* slot = s.find(k, fp, &old_size, nreads);
  const uint64_t loc = s.append(kPut, k, value);
  if (slot) {
    *slot = LogIndex::make(fp, loc);
    s.live_bytes -= old_size;
  } else {
    s.index.insert(fp, loc);
  }
  s.live_bytes += record_size(k.size(), value.size());
}

bool LogStore::erase(KeyView key) {
  if (!impl_) throw Error(Errc::invalid_argument, "log store: moved-from object");
  Impl& s = *impl_;
  const Bytes k = key.bytes();
  check_key(k);
  std::unique_lock lk(s.mu);
  s.check_writable();
  const uint32_t fp = LogIndex::fingerprint(s.hash(k));
  uint64_t old_size = 0, nreads = 0;
  uint64_t* slot = s.find(k, fp, &old_size, nreads);
  if (!slot) return false;
  s.append(kDelete, k, {});
  s.index.erase(slot);
  s.live_bytes -= old_size;
  return true;
}

bool LogStore::lookup(KeyView key, std::string* out) const {
  if (!impl_) throw Error(Errc::invalid_argument, "log store: moved-from object");
  const Impl& s = *impl_;
  const Bytes k = key.bytes();
  if (k.size() > kMaxKeySize) return false;
  std::shared_lock lk(s.mu);
  s.check_open();
  s.gets.fetch_add(1, std::memory_order_relaxed);
  const uint32_t fp = LogIndex::fingerprint(s.hash(k));
  uint64_t nreads = 0;
  const uint64_t* slot =
      s.index.find(fp, [&](uint64_t e) { return s.read_if_key(LogIndex::loc_of(e), k, out, nullptr, nreads); });
  s.reads.fetch_add(nreads, std::memory_order_relaxed);
  return slot != nullptr;
}

bool LogStore::get(KeyView key, std::string& out) const { return lookup(key, &out); }

std::optional<std::string> LogStore::get(KeyView key) const {
  std::string v;
  if (!get(key, v)) return std::nullopt;
  return v;
}

bool LogStore::contains(KeyView key) const { return lookup(key, nullptr); }

size_t LogStore::size() const {
  if (!impl_) throw Error(Errc::invalid_argument, "log store: moved-from object");
  std::shared_lock lk(impl_->mu);
  impl_->check_open();
  return impl_->index.size();
}

void LogStore::for_each(const std::function<void(Bytes key, Bytes value)>& f) const {
  if (!impl_) throw Error(Errc::invalid_argument, "log store: moved-from object");
  const Impl& s = *impl_;
  // A consistent view: the live locations at this moment, and the segments holding
  // them (kept open by their shared pointers even if a compaction deletes their files;
  // records never change once written). f runs without the lock.
  std::vector<uint64_t> locs;
  std::array<SegPtr, kSlotCount> seg_of;
  std::array<uint64_t, kSlotCount> len_of{}, rank{};
  {
    std::shared_lock lk(s.mu);
    s.check_open();
    locs.reserve(s.index.size());
    for (uint64_t e : s.index.raw())
      if (e) locs.push_back(LogIndex::loc_of(e));
    for (size_t i = 0; i < s.segs.size(); ++i) {
      const uint32_t slot = s.segs[i]->h.slot;
      seg_of[slot] = s.segs[i];
      len_of[slot] = s.segs[i]->length;
      rank[slot] = i;
    }
  }
  // Log order: by segment generation, then position.
  std::sort(locs.begin(), locs.end(), [&](uint64_t a, uint64_t b) {
    return std::pair(rank[loc_slot(a)], loc_pos(a)) < std::pair(rank[loc_slot(b)], loc_pos(b));
  });
  std::vector<std::byte> buf;
  for (uint64_t loc : locs) {
    const Segment* seg = seg_of[loc_slot(loc)].get();
    const uint64_t pos = loc_pos(loc), length = len_of[loc_slot(loc)];
    if (!seg || pos + kRecHeader > length) throw Error(Errc::corrupt, s.dir + ": index points outside the log");
    buf.resize(kRecHeader);
    pread_full(seg->fd, buf.data(), kRecHeader, pos, seg->path);
    RecView r;
    const RecLengths l = record_lengths(buf.data());
    const uint64_t size = l.size();
    if (l.vlen > kMaxValueSize || pos + size > length) throw Error(Errc::corrupt, seg->path + ": bad record");
    buf.resize(size);
    pread_full(seg->fd, buf.data() + kRecHeader, size - kRecHeader, pos + kRecHeader, seg->path);
    if (!parse_record(buf.data(), size, r))
      throw Error(Errc::checksum_mismatch, seg->path + ": record at offset " + std::to_string(pos) + " fails its CRC-32C");
    f(r.key, r.value);
  }
}

void LogStore::sync() {
  if (!impl_) throw Error(Errc::invalid_argument, "log store: moved-from object");
  SegPtr a;
  {
    std::shared_lock lk(impl_->mu);
    impl_->check_writable();
    a = impl_->segs.back();
  }
  impl_->unsynced.store(false);
  impl_->datasync(*a);
}

LogStoreStats LogStore::stats() const {
  if (!impl_) throw Error(Errc::invalid_argument, "log store: moved-from object");
  const Impl& s = *impl_;
  std::shared_lock lk(s.mu);
  s.check_open();
  LogStoreStats st;
  for (const auto& seg : s.segs) {
    st.records += seg->records;
    st.log_bytes += seg->length;
  }
  st.live_keys = s.index.size();
  st.live_bytes = s.live_bytes;
  st.segments = s.segs.size();
  st.index_bytes = s.index.bytes();
  st.index_bytes_per_key = st.live_keys ? static_cast<double>(st.index_bytes) / static_cast<double>(st.live_keys) : 0;
  st.index_buckets = s.index.bucket_count();
  st.index_grows = s.index.grows();
  st.gets = s.gets.load();
  st.get_reads = s.reads.load();
  st.truncated_bytes = s.truncated;
  st.skipped_bytes = s.skipped;
  st.from_snapshot = s.from_snapshot;
  return st;
}

const LogStoreRecovery& LogStore::recovery() const {
  if (!impl_) throw Error(Errc::invalid_argument, "log store: moved-from object");
  return impl_->report;
}

LogStoreRecovery LogStore::verify(const std::string& dir) {
  auto impl = std::make_unique<Impl>();
  impl->dir = dir.empty() ? "." : dir;
  impl->opt = {.create_if_missing = false, .skip_corrupt = true, .read_only = true};
  impl->force_scan = true;
  struct stat st {};
  if (::stat(impl->dir.c_str(), &st) != 0) sys_fail(impl->dir, "cannot open log store", errno);
  if (!S_ISDIR(st.st_mode)) throw Error(Errc::invalid_argument, dir + ": not a directory");
  impl->writer_live = writer_active(impl->file(kLockName));
  impl->recover();
  return impl->report;
}

const std::string& LogStore::dir() const {
  if (!impl_) throw Error(Errc::invalid_argument, "log store: moved-from object");
  return impl_->dir;
}

void LogStore::close() {
  if (!impl_ || impl_->closed) return;
  Impl& s = *impl_;
  s.stop_flusher();
  std::lock_guard cg(s.compact_mu);
  std::unique_lock lk(s.mu);
  s.closed = true;
  struct Release {
    Impl& s;
    ~Release() {
      s.slots.fill(nullptr);
      s.segs.clear();
      if (s.lock_fd >= 0) ::close(s.lock_fd);
      s.lock_fd = -1;
    }
  } release{s};
  if (s.opt.read_only) return;
  if (s.failed.load()) throw Error(Errc::io, s.dir + ": closed after a failed fdatasync; writes may be lost");
  if (s.unsynced.load()) s.datasync(*s.segs.back());
  // A snapshot the store was opened from stays valid while nothing changed.
  if (s.opt.use_snapshot && (s.changed || !s.from_snapshot)) s.write_snapshot();
}

void LogStore::compact() {
  if (!impl_) throw Error(Errc::invalid_argument, "log store: moved-from object");
  impl_->compact();
}

}  // namespace amq
