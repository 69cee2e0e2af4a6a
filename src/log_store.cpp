// LogStore: segments of checksummed records, a cuckoo index, recovery, compaction.
// docs/format.md ("Log store") describes the files.
#include "amq/log_store.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
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
#include <random>
#include <shared_mutex>  // std::shared_lock
#include <thread>
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
    std::memcpy(&klen, buf.data() + 6, 2);
    if (klen != key.size() || (want < kRecHeader + klen)) return false;
    if (!same(Bytes(buf.data() + kRecHeader, klen), key)) return false;
    uint32_t vlen;
    std::memcpy(&vlen, buf.data() + 8, 4);
    const uint64_t rsize = record_size(klen, vlen);
    if (vlen > kMaxValueSize || rsize > avail) throw Error(Errc::corrupt, s->path + ": record overruns the segment");
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

  void recover() {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::vector<uint64_t> gens;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      uint64_t gen;
      if (parse_seg_name(name, gen)) {
        gens.push_back(gen);
      } else if (name.rfind("seg-", 0) == 0 &&
                 (name.ends_with(".log.compacting") || name.ends_with(".log.tmp"))) {
        ::unlink(file(name).c_str());  // an unfinished compaction output or segment creation
      }
    }
    if (ec) sys_fail(dir, "cannot list directory", ec.value());
    std::sort(gens.begin(), gens.end());
    for (uint64_t gen : gens) {
      auto s = std::make_shared<Segment>();
      s->path = file(seg_name(gen));
      s->fd = ::open(s->path.c_str(), O_RDWR | O_CLOEXEC);
      if (s->fd < 0) sys_fail(s->path, "cannot open", errno);
      struct stat st {};
      if (::fstat(s->fd, &st) != 0) sys_fail(s->path, "cannot stat", errno);
      s->length = static_cast<uint64_t>(st.st_size);
      if (s->length < kSegHeader) throw Error(Errc::truncated, s->path + ": segment shorter than its header");
      std::array<std::byte, kSegHeader> hdr;
      pread_full(s->fd, hdr.data(), hdr.size(), 0, s->path);
      s->h = decode_seg_header(hdr.data(), s->path);
      if (s->h.gen != gen) throw Error(Errc::corrupt, s->path + ": generation does not match the file name");
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
      if (drop) {
        if (::unlink(s->path.c_str()) != 0) sys_fail(s->path, "cannot remove", errno);
        removed = true;
      } else {
        keep.push_back(s);
      }
    }
    segs = std::move(keep);
    if (removed) fsync_dir(dir);
    for (const auto& s : segs) {
      if (slots[s->h.slot]) throw Error(Errc::corrupt, s->path + ": two segments use slot " + std::to_string(s->h.slot));
      slots[s->h.slot] = s;
    }
    if (!(opt.use_snapshot && load_snapshot())) scan();
    if (!segs.empty()) next_gen = segs.back()->h.gen + 1;
    if (segs.empty() || segs.back()->h.covers != 0 || segs.back()->length >= opt.segment_bytes)
      segs.push_back(create_segment(next_gen++, false));
  }

  void scan() {
    from_snapshot = false;
    index = LogIndex(opt.expected_keys);
    seed = std::random_device{}() | (uint64_t{std::random_device{}()} << 32);
    live_bytes = 0;
    std::array<MappedFile, kSlotCount> maps;
    auto rec_at = [&](uint64_t loc) {
      RecView r;
      const Bytes b = maps[loc_slot(loc)].bytes();
      parse_header(b.data() + loc_pos(loc), b.size() - loc_pos(loc), r);
      return r;
    };
    for (size_t i = 0; i < segs.size(); ++i) {
      Segment& s = *segs[i];
      maps[s.h.slot] = MappedFile(s.path);
      const Bytes data = maps[s.h.slot].bytes();
      uint64_t size = std::min<uint64_t>(data.size(), s.length);
      uint64_t pos = kSegHeader;
      s.records = 0;
      while (pos < size) {
        RecView r;
        if (parse_record(data.data() + pos, size - pos, r)) {
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
        while (q + kRecHeader <= size && !parse_record(data.data() + q, size - q, next)) q += 8;
        const bool tail = q + kRecHeader > size;
        const std::string where = s.path + ": damaged record at offset " + std::to_string(pos);
        if (tail && (i + 1 == segs.size() || opt.skip_corrupt)) {
          // A torn write at the end (or, skipping, damage at the end of a sealed segment).
          // (Made durable by the next fdatasync of this segment, which also covers what
          // is appended in its place; until then a machine crash can only bring back
          // the same torn bytes.)
          if (::ftruncate(s.fd, static_cast<off_t>(pos)) != 0) sys_fail(s.path, "cannot truncate torn tail", errno);
          changed = true;
          (i + 1 == segs.size() ? truncated : skipped) += size - pos;
          size = pos;
          break;
        }
        if (!opt.skip_corrupt) {
          if (tail) throw Error(Errc::corrupt, where + " at the end of a sealed segment");
          throw Error(Errc::checksum_mismatch, where + " (intact records follow at offset " + std::to_string(q) +
                                                   "); open with skip_corrupt to drop it");
        }
        skipped += q - pos;
        pos = q;
      }
      s.length = size;
    }
  }

  // ---- snapshot ----

  bool load_snapshot() {
    std::vector<std::byte> bytes;
    try {
      bytes = read_file(file(kSnapName));
    } catch (const Error&) {
      return false;
    }
    try {
      if (bytes.size() < 8 + 8) return false;
      const uint64_t stored = detail::load_le64(bytes.data() + bytes.size() - 8);
      if (XXH3_64bits(bytes.data(), bytes.size() - 8) != stored) return false;
      detail::ByteReader r(std::span<const std::byte>(bytes).first(bytes.size() - 8), "index snapshot");
      if (std::memcmp(r.bytes(8).data(), kSnapMagic, 8) != 0 || r.u32() != kSnapVersion) return false;
      r.u32();
      const uint64_t sd = r.u64(), live_keys = r.u64(), lb = r.u64();
      const uint32_t nseg = r.u32();
      r.u32();
      if (nseg != segs.size()) return false;
      std::vector<uint64_t> recs(nseg);
      for (uint32_t i = 0; i < nseg; ++i) {
        const uint64_t gen = r.u64();
        const uint32_t slot = r.u32();
        r.u32();
        const uint64_t length = r.u64();
        recs[i] = r.u64();
        // Stale unless every segment is the very file the snapshot saw: segments only
        // grow by appending, so generation + length identify their contents.
        if (gen != segs[i]->h.gen || slot != segs[i]->h.slot || length != segs[i]->length) return false;
      }
      const uint32_t log2 = r.u32();
      r.u32();
      const uint64_t words = r.u64();
      if (log2 < LogIndex::kMinLog2 || log2 > LogIndex::kMaxLog2 || words != (uint64_t{LogIndex::kSlots} << log2) ||
          words * 8 != r.remaining())
        return false;
      std::vector<uint64_t> table(words);
      std::memcpy(table.data(), r.bytes(words * 8).data(), words * 8);
      LogIndex idx = LogIndex::from_raw(static_cast<int>(log2), table);
      if (idx.size() != live_keys) return false;
      for (uint64_t e : table) {
        if (e == 0) continue;
        const uint64_t loc = LogIndex::loc_of(e);
        const auto& s = slots[loc_slot(loc) % kSlotCount];
        if (loc_slot(loc) >= kSlotCount || !s || loc_pos(loc) < kSegHeader || loc_pos(loc) + kRecHeader > s->length)
          return false;
      }
      for (uint32_t i = 0; i < nseg; ++i) segs[i]->records = recs[i];
      index = std::move(idx);
      seed = sd;
      live_bytes = lb;
      from_snapshot = true;
      return true;
    } catch (const Error&) {
      return false;
    }
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
    if (!options.create_if_missing) throw Error(Errc::not_found, dir + ": no such log store directory");
    std::error_code ec;
    std::filesystem::create_directories(impl->dir, ec);
    if (ec) sys_fail(dir, "cannot create directory", ec.value());
  } else if (!S_ISDIR(st.st_mode)) {
    throw Error(Errc::invalid_argument, dir + ": not a directory");
  }
  const std::string lock = impl->file(kLockName);
  impl->lock_fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (impl->lock_fd < 0) sys_fail(lock, "cannot open lock file", errno);
  if (::flock(impl->lock_fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK)
      throw Error(Errc::locked, dir + ": the log store is open by another writer (" + lock + " is locked)");
    sys_fail(lock, "cannot lock", errno);
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
    if (segs.size() == 1 && segs.back()->length == kSegHeader) return;  // nothing written
    uint64_t total = 0;
    for (const auto& s : segs) total += s->length;
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
        if (!parse_record(data.data() + pos, end - pos, r))
          throw Error(Errc::checksum_mismatch, in->path + ": damaged record at offset " + std::to_string(pos) +
                                                   " found while compacting");
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
