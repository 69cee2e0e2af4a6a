// LogStore: segments of checksummed records, a cuckoo index, recovery, compaction.
// docs/format.md ("Log store") describes the files.
#include "amq/log_store.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <shared_mutex>  // std::shared_lock
#include <thread>
#include <tuple>
#include <vector>

#include "amq/detail/byte_io.hpp"
#include "amq/detail/crc32c.hpp"
#include "amq/detail/log_index.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"

namespace amq {
namespace {

using detail::LogIndex;

// ---- files -----------------------------------------------------------------

constexpr char kSegMagic[8] = {'A', 'M', 'Q', 'S', 'E', 'G', '\r', '\n'};
constexpr char kSnapMagic[8] = {'A', 'M', 'Q', 'L', 'S', 'N', 'P', '\n'};
constexpr uint16_t kSegVersion = 1;
constexpr uint32_t kSnapVersion = 1;
constexpr size_t kSegHeader = 40;
constexpr size_t kRecHeader = 12;
constexpr uint8_t kPut = 1;
constexpr uint8_t kDelete = 2;
constexpr int kSlotCount = 64;      // 6 bits of a location
constexpr int kPosBits = 30;        // position / 8
constexpr uint64_t kMaxSegmentBytes = uint64_t{4} << 30;
constexpr uint64_t kPosLimit = uint64_t{8} << 30;  // (2^30 positions of 8 bytes)
constexpr const char* kSnapName = "index.snap";
constexpr const char* kLockName = "LOCK";

uint64_t record_size(size_t klen, size_t vlen) { return (kRecHeader + klen + vlen + 7) & ~uint64_t{7}; }
uint64_t make_loc(uint32_t slot, uint64_t pos) { return (uint64_t{slot} << kPosBits) | (pos >> 3); }
uint32_t loc_slot(uint64_t loc) { return static_cast<uint32_t>(loc >> kPosBits); }
uint64_t loc_pos(uint64_t loc) { return (loc & ((uint64_t{1} << kPosBits) - 1)) << 3; }

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

// Returns 0 or the errno of the failure.
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

struct SegHeader {
  uint32_t slot = 0;
  uint64_t gen = 0;
  uint64_t covers = 0;  // > 0: compaction output replacing every segment with gen <= covers
  uint32_t part = 0, nparts = 0;
};

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
  const uint32_t crc = detail::crc32c(b.data(), b.size());  // with the crc field zero
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
  if (detail::crc32c(copy.data(), copy.size()) != crc)
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

// ---- records ----------------------------------------------------------------

struct RecView {
  uint8_t type = 0;
  Bytes key, value;
  uint64_t size = 0;
};

// Header fields only; false if implausible or longer than `avail`.
bool parse_header(const std::byte* p, size_t avail, RecView& r) {
  if (avail < kRecHeader) return false;
  const uint8_t type = static_cast<uint8_t>(p[4]);
  const uint8_t reserved = static_cast<uint8_t>(p[5]);
  uint16_t klen;
  uint32_t vlen;
  std::memcpy(&klen, p + 6, 2);
  std::memcpy(&vlen, p + 8, 4);
  if ((type != kPut && type != kDelete) || reserved != 0 || vlen > LogStore::kMaxValueSize) return false;
  if (type == kDelete && vlen != 0) return false;
  r.type = type;
  r.size = record_size(klen, vlen);
  if (r.size > avail) return false;
  r.key = Bytes(p + kRecHeader, klen);
  r.value = Bytes(p + kRecHeader + klen, vlen);
  return true;
}

bool crc_ok(const std::byte* p, uint64_t size) {
  uint32_t crc;
  std::memcpy(&crc, p, 4);
  return detail::crc32c(p + 4, size - 4) == crc;
}

bool parse_record(const std::byte* p, size_t avail, RecView& r) { return parse_header(p, avail, r) && crc_ok(p, r.size); }

void encode_record(std::vector<std::byte>& buf, uint8_t type, Bytes key, Bytes value) {
  const uint64_t size = record_size(key.size(), value.size());
  buf.assign(size, std::byte{0});
  std::byte* p = buf.data();
  p[4] = std::byte{type};
  const auto klen = static_cast<uint16_t>(key.size());
  const auto vlen = static_cast<uint32_t>(value.size());
  std::memcpy(p + 6, &klen, 2);
  std::memcpy(p + 8, &vlen, 4);
  if (!key.empty()) std::memcpy(p + kRecHeader, key.data(), key.size());
  if (!value.empty()) std::memcpy(p + kRecHeader + key.size(), value.data(), value.size());
  const uint32_t crc = detail::crc32c(p + 4, size - 4);
  std::memcpy(p, &crc, 4);
}

bool same(Bytes a, Bytes b) { return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0); }

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

struct Segment {
  SegHeader h;
  int fd = -1;
  std::string path;
  uint64_t length = 0;   // bytes of header + intact records
  uint64_t records = 0;
  Segment() = default;
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;
  ~Segment() {
    if (fd >= 0) ::close(fd);
  }
};
using SegPtr = std::shared_ptr<Segment>;

// A read-only map of a segment through its descriptor.
struct FdMap {
  const std::byte* data = nullptr;
  size_t size = 0;
  FdMap() = default;
  FdMap(const FdMap&) = delete;
  FdMap& operator=(const FdMap&) = delete;
  ~FdMap() {
    if (data) ::munmap(const_cast<std::byte*>(data), size);
  }
  void map(const Segment& s) {
    void* p = ::mmap(nullptr, s.length, PROT_READ, MAP_SHARED, s.fd, 0);
    if (p == MAP_FAILED) sys_fail(s.path, "cannot map", errno);
    data = static_cast<const std::byte*>(p);
    size = s.length;
  }
};

}  // namespace

// ---- the store ------------------------------------------------------------------

struct LogStore::Impl {
  std::string dir;
  LogStoreOptions opt;
  int lock_fd = -1;
  mutable RwLock mu;
  std::vector<SegPtr> segs;  // by generation; back() is the active segment
  std::array<SegPtr, kSlotCount> slots{};
  LogIndex index{0};
  uint64_t seed = 0;
  uint64_t next_gen = 1;
  uint64_t live_bytes = 0;
  uint64_t truncated = 0, skipped = 0;
  LogStoreRecovery report;
  bool writer_live = false;  // read-only: a writer held the lock while this one opened
  bool force_scan = false;   // verify: scan even when the snapshot matches
  bool from_snapshot = false;
  bool changed = false;    // anything written, cut or compacted since open
  bool closed = false;
  std::atomic<bool> unsynced{false};  // appended since the last fdatasync of the active segment
  std::atomic<int> failed{0};  // errno of a failed fdatasync: the store refuses writes
  mutable std::atomic<uint64_t> gets{0}, reads{0};
  std::vector<std::byte> wbuf;
  std::mutex compact_mu;
  std::thread flusher;
  std::mutex fl_mu;
  std::condition_variable fl_cv;
  bool fl_stop = false;

  ~Impl() {
    stop_flusher();
    if (lock_fd >= 0) ::close(lock_fd);
  }

  std::string file(const std::string& name) const { return dir + "/" + name; }
  uint64_t hash(Bytes key) const { return XXH3_64bits_withSeed(key.data(), key.size(), seed); }

  void check_open() const {
    if (closed) throw Error(Errc::invalid_argument, dir + ": log store is closed");
  }
  void check_writable() const {
    check_open();
    if (opt.read_only) throw Error(Errc::invalid_argument, dir + ": log store opened read-only");
    if (const int err = failed.load())
      throw Error(Errc::io, dir + ": an earlier fdatasync failed (" + std::strerror(err) +
                                "); reopen the store to recover");
  }

  void datasync(const Segment& s) {
    if (::fdatasync(s.fd) != 0) {
      const int err = errno;
      failed.store(err);
      sys_fail(s.path, "cannot fdatasync", err);
    }
  }

  // ---- segments ----

  uint32_t free_slot() const {
    for (uint32_t i = 0; i < kSlotCount; ++i)
      if (!slots[i]) return i;
    throw Error(Errc::full, dir + ": 64 segments in use; run compact()");
  }

  // A new segment; ordinary ones are complete on disk (atomic rename) when this
  // returns, compaction outputs stay "<name>.compacting" until finished.
  SegPtr create_segment(uint64_t gen, bool compaction) {
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
  void roll(bool for_compaction = false) {
    if (!for_compaction) {
      int free = 0;
      for (const auto& s : slots) free += s ? 0 : 1;
      if (free < 3) throw Error(Errc::full, dir + ": 62 segments in use; run compact()");
    }
    datasync(*segs.back());
    segs.push_back(create_segment(next_gen++, false));
  }

  // Appends one record to the active segment; returns its location.
  uint64_t append(uint8_t type, Bytes key, Bytes value) {
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

  // ---- reading records ----

  // Reads the record at `loc` if its key is `key`: true and, when `value` is given, the
  // value (CRC checked). `size` gets the record size. Counts preads in `nreads`.
  bool read_if_key(uint64_t loc, Bytes key, std::string* value, uint64_t* size, uint64_t& nreads) const {
    const Segment* s = slots[loc_slot(loc)].get();
    const uint64_t pos = loc_pos(loc);
    if (!s || pos + kRecHeader > s->length) throw Error(Errc::corrupt, dir + ": index points outside the log");
    thread_local std::vector<std::byte> buf;
    const uint64_t avail = s->length - pos;
    const uint64_t want = std::min<uint64_t>(avail, kRecHeader + key.size() + (value ? 512 : 0));
    if (buf.size() < want) buf.resize(want);
    pread_full(s->fd, buf.data(), want, pos, s->path);
    ++nreads;
    uint16_t klen;
    uint32_t vlen;
    std::memcpy(&klen, buf.data() + 6, 2);
    std::memcpy(&vlen, buf.data() + 8, 4);
    const uint64_t rsize = record_size(klen, vlen);
    if (vlen > kMaxValueSize || rsize > avail) throw Error(Errc::corrupt, s->path + ": record overruns the segment");
    if (klen != key.size() || want < kRecHeader + klen || !same(Bytes(buf.data() + kRecHeader, klen), key)) {
      // Another key with the same fingerprint (rare), or damage: a changed length or key
      // must not make the key read as absent.
      if (buf.size() < rsize) buf.resize(rsize);
      if (rsize > want) {
        pread_full(s->fd, buf.data() + want, rsize - want, pos + want, s->path);
        ++nreads;
      }
      if (!crc_ok(buf.data(), rsize))
        throw Error(Errc::checksum_mismatch,
                    s->path + ": record at offset " + std::to_string(pos) + " fails its CRC-32C");
      return false;
    }
    if (size) *size = rsize;
    if (value) {
      if (rsize > want) {
        if (buf.size() < rsize) buf.resize(rsize);
        pread_full(s->fd, buf.data() + want, rsize - want, pos + want, s->path);
        ++nreads;
      }
      if (!crc_ok(buf.data(), rsize))
        throw Error(Errc::checksum_mismatch,
                    s->path + ": record at offset " + std::to_string(pos) + " fails its CRC-32C");
      value->assign(reinterpret_cast<const char*>(buf.data()) + kRecHeader + klen, vlen);
    }
    return true;
  }

  // The index slot of `key` (confirmed by reading the log), or nullptr.
  uint64_t* find(Bytes key, uint32_t fp, uint64_t* old_size, uint64_t& nreads) {
    return index.find(fp, [&](uint64_t slot) { return read_if_key(LogIndex::loc_of(slot), key, nullptr, old_size, nreads); });
  }

  // ---- recovery ----

  struct SnapSeg {
    uint64_t gen = 0;
    uint32_t slot = 0;
    uint64_t length = 0, records = 0;
  };
  struct SnapInfo {
    uint64_t seed = 0, live_keys = 0, live_bytes = 0;
    std::vector<SnapSeg> segs;
    uint32_t log2 = 0;
    std::vector<uint64_t> table;
  };

  // Opens and checks the segment files, drops compaction leftovers, loads the snapshot
  // or scans. A read-only open modifies nothing and retries when a writer deletes a
  // segment between the listing and the open (a compaction finishing).
  void recover() {
    for (int attempt = 0;; ++attempt) {
      try {
        recover_once();
        return;
      } catch (const Vanished&) {
        if (attempt == 20) throw Error(Errc::io, dir + ": segments keep disappearing while opening");
      }
    }
  }

  struct Vanished {};

  void add_damage(LogStoreDamage::Kind kind, const std::string& path, uint64_t offset, uint64_t bytes, uint64_t records,
                  bool to_end) {
    report.damage.push_back({kind, path, offset, bytes, records, to_end});
    report.dropped_bytes += bytes;
    report.dropped_records += records;
    if (kind == LogStoreDamage::Kind::lost_acknowledged) report.acknowledged_lost = true;
    if (kind != LogStoreDamage::Kind::bad_snapshot &&
        std::none_of(report.damage.begin(), report.damage.end() - 1, [&](const LogStoreDamage& d) { return d.file == path; }))
      ++report.segments_affected;
  }

  // The generations of the segment files (a writer also removes leftovers).
  std::vector<uint64_t> list_segments() {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::vector<uint64_t> gens;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      uint64_t gen;
      if (parse_seg_name(name, gen)) {
        gens.push_back(gen);
      } else if (!opt.read_only && name.rfind("seg-", 0) == 0 &&
                 (name.ends_with(".log.compacting") || name.ends_with(".log.tmp"))) {
        ::unlink(file(name).c_str());  // an unfinished compaction output or segment creation
      }
    }
    if (ec) sys_fail(dir, "cannot list directory", ec.value());
    std::sort(gens.begin(), gens.end());
    return gens;
  }

  void recover_once() {
    segs.clear();
    slots.fill(nullptr);
    report = {};
    truncated = skipped = 0;
    // The snapshot first: every segment it lists is either still there or replaced by
    // a finished compaction whose outputs are there when the directory is listed.
    std::optional<SnapInfo> snap;
    if (opt.use_snapshot) snap = read_snapshot();
    const std::vector<uint64_t> gens = list_segments();
    std::vector<SegPtr> bad;  // segments whose header is damaged (skip_corrupt)
    for (uint64_t gen : gens) {
      auto s = std::make_shared<Segment>();
      s->path = file(seg_name(gen));
      s->fd = ::open(s->path.c_str(), (opt.read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
      if (s->fd < 0) {
        if (errno == ENOENT && opt.read_only) throw Vanished{};
        sys_fail(s->path, "cannot open", errno);
      }
      struct stat st {};
      if (::fstat(s->fd, &st) != 0) sys_fail(s->path, "cannot stat", errno);
      s->length = static_cast<uint64_t>(st.st_size);
      s->h.gen = gen;
      try {
        if (s->length < kSegHeader) throw Error(Errc::truncated, s->path + ": segment shorter than its header");
        std::array<std::byte, kSegHeader> hdr;
        pread_full(s->fd, hdr.data(), hdr.size(), 0, s->path);
        s->h = decode_seg_header(hdr.data(), s->path);
        if (s->h.gen != gen) throw Error(Errc::corrupt, s->path + ": generation does not match the file name");
      } catch (const Error&) {
        if (!opt.skip_corrupt) throw;
        // Ignored, not deleted: the damage stays visible (verify, the next open) until
        // someone removes the file.
        add_damage(LogStoreDamage::Kind::bad_segment, s->path, 0, s->length, 0, true);
        bad.push_back(s);
        continue;
      }
      segs.push_back(std::move(s));
    }
    // A compaction that finished renaming all its outputs replaces every segment it
    // covers; outputs of one that did not are duplicates of data still in its inputs.
    std::map<uint64_t, std::vector<SegPtr>> groups;
    for (const auto& s : segs)
      if (s->h.covers) groups[s->h.covers].push_back(s);
    uint64_t done = 0;
    std::vector<SegPtr> partial;
    for (const auto& [covers, parts] : groups) {
      std::vector<bool> seen(parts.front()->h.nparts, false);
      bool complete = true;
      for (const auto& p : parts) {
        if (p->h.nparts != seen.size() || seen[p->h.part]) complete = false;
        else seen[p->h.part] = true;
      }
      complete = complete && std::all_of(seen.begin(), seen.end(), [](bool b) { return b; });
      if (complete) done = std::max(done, covers);
      else partial.insert(partial.end(), parts.begin(), parts.end());
    }
    std::vector<SegPtr> keep;
    bool removed = false;
    for (const auto& s : segs) {
      const bool drop = s->h.gen <= done || std::find(partial.begin(), partial.end(), s) != partial.end();
      if (!drop) {
        keep.push_back(s);
      } else if (!opt.read_only) {
        if (::unlink(s->path.c_str()) != 0) sys_fail(s->path, "cannot remove", errno);
        removed = true;
      }
    }
    segs = std::move(keep);
    if (removed) fsync_dir(dir);
    // A listing taken while a writer renames and deletes files may miss some; a
    // second one that differs means the set changed meanwhile: start again.
    if (opt.read_only && list_segments() != gens) throw Vanished{};
    for (const auto& s : segs) {
      if (slots[s->h.slot]) throw Error(Errc::corrupt, s->path + ": two segments use slot " + std::to_string(s->h.slot));
      slots[s->h.slot] = s;
    }

    // What the last close() made durable: every segment the snapshot lists that no
    // finished compaction has replaced since must still be there, at least that long.
    std::map<uint64_t, const SnapSeg*> acked;
    if (snap) {
      for (const SnapSeg& a : snap->segs) {
        if (a.gen <= done) continue;
        const bool present = std::any_of(segs.begin(), segs.end(), [&](const SegPtr& s) { return s->h.gen == a.gen; });
        const bool damaged = std::any_of(bad.begin(), bad.end(), [&](const SegPtr& s) { return s->h.gen == a.gen; });
        if (present) {
          acked[a.gen] = &a;
        } else if (!damaged) {
          const std::string path = file(seg_name(a.gen));
          if (!opt.skip_corrupt)
            throw Error(Errc::corrupt, path + ": segment missing (" + std::to_string(a.length) + " bytes, " +
                                           std::to_string(a.records) +
                                           " records made durable by the last close); open with skip_corrupt (--skip-corrupt) to "
                                           "drop them");
          add_damage(LogStoreDamage::Kind::lost_acknowledged, path, 0, a.length, a.records, true);
        }
      }
    }
    if (!(snap && !force_scan && use_snapshot_index(*snap))) scan(acked);
    if (!segs.empty()) next_gen = segs.back()->h.gen + 1;
    for (const auto& b : bad) next_gen = std::max(next_gen, b->h.gen + 1);
    // A writer that dropped durable data without a snapshot to record it removes the
    // old one, whose lengths would report the same loss at every open.
    if (!opt.read_only && !opt.use_snapshot && changed && !report.clean()) ::unlink(file(kSnapName).c_str());
    if (!opt.read_only && (segs.empty() || segs.back()->h.covers != 0 || segs.back()->length >= opt.segment_bytes))
      segs.push_back(create_segment(next_gen++, false));
  }

  // Records of a segment read through a window (pread, not mmap: a read-only open
  // survives a writer cutting a torn tail under it).
  struct Window {
    const Segment& seg;
    uint64_t size;
    std::vector<std::byte> buf;
    uint64_t start = 0, len = 0;

    // Up to n bytes at pos (fewer at the end of the file): a pointer and their count.
    std::pair<const std::byte*, uint64_t> at(uint64_t pos, uint64_t n) {
      if (pos >= size) return {nullptr, 0};
      n = std::min(n, size - pos);
      if (pos < start || pos + n > start + len) {
        const uint64_t want = std::min(std::max<uint64_t>(n, 1u << 20), size - pos);
        if (buf.size() < want) buf.resize(want);
        uint64_t got = 0;
        while (got < want) {
          const ssize_t r = ::pread(seg.fd, buf.data() + got, want - got, static_cast<off_t>(pos + got));
          if (r < 0) {
            if (errno == EINTR) continue;
            sys_fail(seg.path, "cannot read", errno);
          }
          if (r == 0) break;
          got += static_cast<uint64_t>(r);
        }
        start = pos;
        len = got;
        if (got < want) size = pos + got;  // the file was cut meanwhile
        n = std::min(n, got);
      }
      return {buf.data() + (pos - start), n};
    }

    // The record at pos if it is intact.
    bool record(uint64_t pos, RecView& r) {
      auto [p, n] = at(pos, kRecHeader);
      if (n < kRecHeader) return false;
      uint16_t klen;
      uint32_t vlen;
      std::memcpy(&klen, p + 6, 2);
      std::memcpy(&vlen, p + 8, 4);
      if (vlen > LogStore::kMaxValueSize) return false;
      const uint64_t want = record_size(klen, vlen);
      std::tie(p, n) = at(pos, want);
      return parse_record(p, n, r);
    }

    // Records whose headers can be read in [pos, end) (at least 1 when not empty).
    uint64_t count_records(uint64_t pos, uint64_t end) {
      uint64_t count = 0;
      while (pos < end) {
        ++count;
        auto [p, n] = at(pos, kRecHeader);
        RecView r;
        if (!parse_header(p, n < kRecHeader ? 0 : ~size_t{0}, r) || r.size == 0) break;
        pos += r.size;
      }
      return count;
    }
  };

  void scan(const std::map<uint64_t, const SnapSeg*>& acked) {
    from_snapshot = false;
    index = LogIndex(opt.expected_keys);
    seed = std::random_device{}() | (uint64_t{std::random_device{}()} << 32);
    live_bytes = 0;
    // The header and key of a record scanned before, through a map of its segment. (A
    // writer cuts a segment only at its first damaged record, never below an intact
    // one, so these pages stay inside the file even in a read-only open.)
    std::array<FdMap, kSlotCount> maps;
    auto rec_at = [&](uint64_t loc) {
      RecView r;
      const FdMap& m = maps[loc_slot(loc)];
      parse_header(m.data + loc_pos(loc), m.size - loc_pos(loc), r);
      return r;
    };
    for (size_t i = 0; i < segs.size(); ++i) {
      Segment& s = *segs[i];
      const bool newest = i + 1 == segs.size();
      const auto ack = acked.find(s.h.gen);
      const uint64_t ack_len = ack == acked.end() ? 0 : ack->second->length;
      Window w{s, s.length, {}, 0, 0};
      maps[s.h.slot].map(s);  // (by descriptor: a compaction may have deleted the file)
      uint64_t pos = kSegHeader;
      s.records = 0;
      bool tail_reported = false;
      while (pos < w.size) {
        RecView r;
        if (w.record(pos, r)) {
          if (pos + r.size > kPosLimit) throw Error(Errc::too_large, s.path + ": segment longer than 8 GiB");
          const uint64_t h = hash(r.key);
          const uint32_t fp = LogIndex::fingerprint(h);
          const uint64_t loc = make_loc(s.h.slot, pos);
          uint64_t* slot = index.find(fp, [&](uint64_t e) { return same(rec_at(LogIndex::loc_of(e)).key, r.key); });
          if (slot) {
            live_bytes -= rec_at(LogIndex::loc_of(*slot)).size;
            if (r.type == kPut) *slot = LogIndex::make(fp, loc);
            else index.erase(slot);
          } else if (r.type == kPut) {
            index.insert(fp, loc);
          }
          if (r.type == kPut) live_bytes += r.size;
          ++s.records;
          pos += r.size;
          continue;
        }
        // Damaged or incomplete record at pos: is anything intact after it?
        uint64_t q = pos + 8;
        RecView next;
        while (q + kRecHeader <= w.size && !w.record(q, next)) q += 8;
        const bool tail = q + kRecHeader > w.size;
        const std::string where = s.path + ": damaged record at offset " + std::to_string(pos);
        if (tail) {
          const uint64_t end = w.size;
          // A torn write: at the end of the newest segment, past what the last close
          // made durable. In a read-only open while a writer is active, the writer's
          // write in flight: ignored, not reported.
          const bool torn = newest && pos >= ack_len;
          if (!torn && !opt.skip_corrupt) {
            if (pos < ack_len)
              throw Error(Errc::corrupt, where + ", within the " + std::to_string(ack_len) +
                                             " bytes the last close made durable; open with skip_corrupt (--skip-corrupt) "
                                             "to drop the rest of the segment");
            throw Error(Errc::corrupt, where + " at the end of a sealed segment");
          }
          if (pos < ack_len) {
            // Lost: everything from pos to the durable length (the file may be shorter).
            const uint64_t recs = ack->second->records > s.records ? ack->second->records - s.records : 1;
            add_damage(LogStoreDamage::Kind::lost_acknowledged, s.path, pos, std::max(end, ack_len) - pos, recs, true);
            skipped += end - pos;
            tail_reported = true;
          } else if (!(torn && writer_live)) {
            add_damage(torn ? LogStoreDamage::Kind::torn_tail : LogStoreDamage::Kind::corrupt, s.path, pos, end - pos,
                       w.count_records(pos, end), true);
            (torn ? truncated : skipped) += end - pos;
          }
          if (!opt.read_only) {
            // (Made durable by the next fdatasync of this segment, which also covers
            // what is appended in its place; until then a machine crash can only bring
            // back the same torn bytes.)
            if (::ftruncate(s.fd, static_cast<off_t>(pos)) != 0) sys_fail(s.path, "cannot truncate torn tail", errno);
            changed = true;
          }
          w.size = pos;
          break;
        }
        if (!opt.skip_corrupt)
          throw Error(Errc::checksum_mismatch, where + " (intact records follow at offset " + std::to_string(q) +
                                                   "); open with skip_corrupt (--skip-corrupt) to drop it");
        add_damage(LogStoreDamage::Kind::corrupt, s.path, pos, q - pos, w.count_records(pos, q), false);
        skipped += q - pos;
        pos = q;
      }
      s.length = w.size;
      // Cut at a record boundary below what the last close made durable.
      if (s.length < ack_len && !tail_reported) {
        if (!opt.skip_corrupt)
          throw Error(Errc::corrupt, s.path + ": " + std::to_string(ack_len - s.length) +
                                         " bytes missing at the end (the last close made " + std::to_string(ack_len) +
                                         " durable); open with skip_corrupt (--skip-corrupt) to drop them");
        add_damage(LogStoreDamage::Kind::lost_acknowledged, s.path, s.length, ack_len - s.length,
                   ack->second->records > s.records ? ack->second->records - s.records : 1, true);
      }
    }
  }

  // ---- snapshot ----

  // The snapshot if it is present and intact; a damaged one is reported and ignored.
  std::optional<SnapInfo> read_snapshot() {
    const std::string path = file(kSnapName);
    std::vector<std::byte> bytes;
    try {
      bytes = read_file(path);
    } catch (const Error& e) {
      if (e.code() == Errc::not_found) return std::nullopt;
      throw;
    }
    auto damaged = [&]() -> std::optional<SnapInfo> {
      add_damage(LogStoreDamage::Kind::bad_snapshot, path, 0, 0, 0, false);
      return std::nullopt;
    };
    try {
      if (bytes.size() < 8 + 8) return damaged();
      const uint64_t stored = detail::load_le64(bytes.data() + bytes.size() - 8);
      if (XXH3_64bits(bytes.data(), bytes.size() - 8) != stored) return damaged();
      detail::ByteReader r(std::span<const std::byte>(bytes).first(bytes.size() - 8), "index snapshot");
      if (std::memcmp(r.bytes(8).data(), kSnapMagic, 8) != 0 || r.u32() != kSnapVersion) return damaged();
      r.u32();
      SnapInfo info;
      info.seed = r.u64();
      info.live_keys = r.u64();
      info.live_bytes = r.u64();
      const uint32_t nseg = r.u32();
      r.u32();
      if (nseg > r.remaining() / 32) return damaged();
      info.segs.resize(nseg);
      for (auto& sg : info.segs) {
        sg.gen = r.u64();
        sg.slot = r.u32();
        r.u32();
        sg.length = r.u64();
        sg.records = r.u64();
      }
      info.log2 = r.u32();
      r.u32();
      const uint64_t words = r.u64();
      if (info.log2 < LogIndex::kMinLog2 || info.log2 > LogIndex::kMaxLog2 ||
          words != (uint64_t{LogIndex::kSlots} << info.log2) || words * 8 != r.remaining())
        return damaged();
      info.table.resize(words);
      std::memcpy(info.table.data(), r.bytes(words * 8).data(), words * 8);
      return info;
    } catch (const Error&) {
      return damaged();
    }
  }

  // Uses the snapshot's index if it describes exactly the segment files present.
  bool use_snapshot_index(const SnapInfo& info) {
    if (info.segs.size() != segs.size()) return false;
    for (size_t i = 0; i < segs.size(); ++i) {
      // Stale unless every segment is the very file the snapshot saw: segments only
      // grow by appending, so generation + length identify their contents.
      const SnapSeg& a = info.segs[i];
      if (a.gen != segs[i]->h.gen || a.slot != segs[i]->h.slot || a.length != segs[i]->length) return false;
    }
    try {
      LogIndex idx = LogIndex::from_raw(static_cast<int>(info.log2), info.table);
      if (idx.size() != info.live_keys) return false;
      for (uint64_t e : info.table) {
        if (e == 0) continue;
        const uint64_t loc = LogIndex::loc_of(e);
        const auto& s = slots[loc_slot(loc) % kSlotCount];
        if (loc_slot(loc) >= kSlotCount || !s || loc_pos(loc) < kSegHeader || loc_pos(loc) + kRecHeader > s->length)
          return false;
      }
      for (size_t i = 0; i < segs.size(); ++i) segs[i]->records = info.segs[i].records;
      index = std::move(idx);
    } catch (const Error&) {
      return false;
    }
    seed = info.seed;
    live_bytes = info.live_bytes;
    from_snapshot = true;
    return true;
  }

  void write_snapshot() {
    detail::ByteWriter w;
    w.bytes(std::string_view(kSnapMagic, 8));
    w.u32(kSnapVersion);
    w.u32(0);
    w.u64(seed);
    w.u64(index.size());
    w.u64(live_bytes);
    w.u32(static_cast<uint32_t>(segs.size()));
    w.u32(0);
    for (const auto& s : segs) {
      w.u64(s->h.gen);
      w.u32(s->h.slot);
      w.u32(0);
      w.u64(s->length);
      w.u64(s->records);
    }
    w.u32(static_cast<uint32_t>(index.log2_buckets()));
    w.u32(0);
    const auto raw = index.raw();
    w.u64(raw.size());
    w.bytes(std::as_bytes(raw));
    w.u64(XXH3_64bits(w.buffer().data(), w.size()));
    write_file_atomic(file(kSnapName), w.buffer());
  }

  // ---- group commit ----

  void start_flusher() {
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

  void stop_flusher() {
    if (!flusher.joinable()) return;
    {
      std::lock_guard fl(fl_mu);
      fl_stop = true;
    }
    fl_cv.notify_all();
    flusher.join();
  }

  // ---- compaction ----

  void compact();
};

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

namespace {
// True if a writer holds the store's lock (the shared lock is released at once).
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

LogStoreRecovery summarize(std::vector<LogStoreDamage> damage) {
  LogStoreRecovery r;
  std::vector<std::string> files;
  for (const auto& d : damage) {
    r.dropped_bytes += d.bytes;
    r.dropped_records += d.records;
    if (d.kind == LogStoreDamage::Kind::lost_acknowledged) r.acknowledged_lost = true;
    if (d.kind != LogStoreDamage::Kind::bad_snapshot && std::find(files.begin(), files.end(), d.file) == files.end())
      files.push_back(d.file);
  }
  r.segments_affected = files.size();
  r.damage = std::move(damage);
  return r;
}

std::string plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}
}  // namespace

std::string LogStoreDamage::describe() const {
  const auto slash = file.find_last_of('/');
  std::string out = slash == std::string::npos ? file : file.substr(slash + 1);
  if (kind == Kind::bad_snapshot) return out + ": damaged (ignored: the index is rebuilt from the log)";
  out += ": " + plural(bytes, "byte", "bytes") + " (" + plural(records, "record", "records") + ") at offset " +
         std::to_string(offset) + ": ";
  switch (kind) {
    case Kind::torn_tail: return out + "torn write at the end (a crash interrupted it)";
    case Kind::corrupt: return out + "damaged records";
    case Kind::lost_acknowledged: return out + "missing or damaged, though made durable by the last close";
    case Kind::bad_segment: return out + "segment header damaged (segment ignored)";
    case Kind::bad_snapshot: break;
  }
  return out;
}

std::string LogStoreRecovery::summary() const {
  if (damage.empty()) return "no damage";
  std::string out = "dropped " + plural(dropped_bytes, "byte", "bytes") + " (" +
                    plural(dropped_records, "record", "records") + ") in " +
                    plural(segments_affected, "segment", "segments") + ": " + damage.front().describe();
  if (damage.size() > 1) out += "; and " + std::to_string(damage.size() - 1) + " more";
  return out;
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
    if (!impl->writer_live && writer_active(lock)) {
      auto& d = impl->report.damage;
      d.erase(std::remove_if(d.begin(), d.end(),
                             [](const LogStoreDamage& x) { return x.kind == LogStoreDamage::Kind::torn_tail; }),
              d.end());
      impl->report = summarize(std::move(d));
      impl->truncated = 0;
    }
    return LogStore(std::move(impl));
  }
  impl->lock_fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (impl->lock_fd < 0) sys_fail(lock, "cannot open lock file", errno);
  // A reader asking whether a writer is active holds a shared lock for a moment.
  for (int attempt = 0; ::flock(impl->lock_fd, LOCK_EX | LOCK_NB) != 0; ++attempt) {
    if (errno != EWOULDBLOCK) sys_fail(lock, "cannot lock", errno);
    if (attempt == 50)
      throw Error(Errc::locked, dir + ": the log store is open by another writer (" + lock + " is locked)");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
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
    uint16_t klen;
    uint32_t vlen;
    std::memcpy(&klen, buf.data() + 6, 2);
    std::memcpy(&vlen, buf.data() + 8, 4);
    const uint64_t size = record_size(klen, vlen);
    if (vlen > kMaxValueSize || pos + size > length) throw Error(Errc::corrupt, seg->path + ": bad record");
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

void LogStore::Impl::compact() {
  std::lock_guard cg(compact_mu);
  std::vector<SegPtr> inputs;
  uint64_t covers = 0, first_gen = 0, max_parts = 0;
  {
    std::unique_lock lk(mu);
    check_writable();
    uint64_t total = 0, records = 0;
    for (const auto& s : segs) {
      total += s->length;
      records += s->length - kSegHeader;
    }
    if (records == live_bytes) return;  // no dead record, tombstone or damaged byte
    max_parts = total / opt.segment_bytes + 2;
    covers = segs.back()->h.gen;
    first_gen = next_gen;
    next_gen += max_parts;
    // New writes go to a fresh active segment; every older one is compacted.
    roll(true);
    changed = true;
    inputs.assign(segs.begin(), segs.end() - 1);
  }
  struct Move {
    uint32_t fp;
    uint64_t from, to;
  };
  std::vector<Move> moves;
  std::vector<SegPtr> outputs;
  std::vector<std::byte> out_buf;
  uint64_t out_flushed = 0;  // bytes of the current output already written
  auto flush = [&] {
    Segment& o = *outputs.back();
    if (const int err = pwrite_full(o.fd, out_buf.data(), out_buf.size(), out_flushed)) sys_fail(o.path, "cannot write", err);
    out_flushed += out_buf.size();
    out_buf.clear();
  };
  auto abandon = [&] {
    std::unique_lock lk(mu);
    for (const auto& o : outputs) {
      slots[o->h.slot] = nullptr;
      ::unlink(o->path.c_str());
    }
  };
  try {
    for (const auto& in : inputs) {
      MappedFile map(in->path);
      const Bytes data = map.bytes();
      const uint64_t end = std::min<uint64_t>(in->length, data.size());
      struct Cand {
        uint32_t fp;
        uint64_t loc, pos, size;
      };
      std::vector<Cand> batch;
      auto process = [&] {
        std::vector<char> live(batch.size());
        {
          std::shared_lock lk(mu);
          for (size_t i = 0; i < batch.size(); ++i)
            live[i] = index.find(batch[i].fp, [&](uint64_t e) { return LogIndex::loc_of(e) == batch[i].loc; }) != nullptr;
        }
        for (size_t i = 0; i < batch.size(); ++i) {
          if (!live[i]) continue;
          const Cand& c = batch[i];
          if (outputs.empty() || outputs.back()->length + c.size > opt.segment_bytes) {
            if (!outputs.empty()) flush();
            if (outputs.size() == max_parts) throw Error(Errc::corrupt, dir + ": compaction output larger than its input");
            // (free_slot() throws Errc::full when the live data needs more segments than
            // are free; the compaction is then abandoned and nothing is lost.)
            std::unique_lock lk(mu);
            outputs.push_back(create_segment(first_gen + outputs.size(), true));
            out_flushed = kSegHeader;
          }
          Segment& o = *outputs.back();
          out_buf.insert(out_buf.end(), data.data() + c.pos, data.data() + c.pos + c.size);
          moves.push_back({c.fp, c.loc, make_loc(o.h.slot, o.length)});
          o.length += c.size;
          ++o.records;
          if (out_buf.size() >= (1u << 20)) flush();
        }
        batch.clear();
      };
      for (uint64_t pos = kSegHeader; pos < end;) {
        RecView r;
        if (!parse_record(data.data() + pos, end - pos, r)) {
          // Damage that open skipped (skip_corrupt) holds no live record: compaction
          // drops it. Damage found only now may have been live: an error.
          const auto skipped_at = std::find_if(report.damage.begin(), report.damage.end(), [&](const LogStoreDamage& d) {
            return d.kind == LogStoreDamage::Kind::corrupt && d.file == in->path && d.offset == pos;
          });
          if (skipped_at == report.damage.end())
            throw Error(Errc::checksum_mismatch, in->path + ": damaged record at offset " + std::to_string(pos) +
                                                     " found while compacting");
          pos += skipped_at->bytes;
          continue;
        }
        if (r.type == kPut) batch.push_back({LogIndex::fingerprint(hash(r.key)), make_loc(in->h.slot, pos), pos, r.size});
        if (batch.size() >= 4096) process();
        pos += r.size;
      }
      process();
    }
    if (!outputs.empty()) flush();
    // Final headers (part i of n), then make every output durable and visible.
    for (size_t i = 0; i < outputs.size(); ++i) {
      Segment& o = *outputs[i];
      o.h.covers = covers;
      o.h.part = static_cast<uint32_t>(i);
      o.h.nparts = static_cast<uint32_t>(outputs.size());
      const auto hdr = encode_seg_header(o.h);
      if (const int err = pwrite_full(o.fd, hdr.data(), hdr.size(), 0)) sys_fail(o.path, "cannot write", err);
      if (::fdatasync(o.fd) != 0) sys_fail(o.path, "cannot fdatasync", errno);
    }
    for (const auto& o : outputs) {
      const std::string final_path = file(seg_name(o->h.gen));
      if (::rename(o->path.c_str(), final_path.c_str()) != 0) sys_fail(final_path, "cannot rename", errno);
      o->path = final_path;
    }
    fsync_dir(dir);
  } catch (...) {
    abandon();
    throw;
  }
  {
    std::unique_lock lk(mu);
    for (const Move& m : moves) {
      uint64_t* slot = index.find(m.fp, [&](uint64_t e) { return LogIndex::loc_of(e) == m.from; });
      if (slot) *slot = LogIndex::make(m.fp, m.to);
    }
    for (const auto& in : inputs) slots[in->h.slot] = nullptr;
    std::vector<SegPtr> now(outputs);
    for (const auto& s : segs)
      if (std::find(inputs.begin(), inputs.end(), s) == inputs.end()) now.push_back(s);
    segs = std::move(now);
  }
  for (const auto& in : inputs) ::unlink(in->path.c_str());
  fsync_dir(dir);
}

}  // namespace amq
