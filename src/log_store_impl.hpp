// LogStore::Impl: the state of an open log store, shared by the rooms that work on it:
//   log_store.cpp           the public API, appends and reads, group commit
//   log_store_recovery.cpp  open's recovery: listing, checking and scanning segments
//   log_store_snapshot.cpp  the index snapshot (index.snap)
//   log_store_compact.cpp   compaction
// The codecs (log_store_record.hpp, log_store_segment.hpp, log_store_snapshot.hpp) and
// the locks (log_store_lock.hpp) know nothing of Impl.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "amq/detail/log_index.hpp"
#include "amq/error.hpp"
#include "amq/log_store.hpp"
#include "log_store_lock.hpp"
#include "log_store_record.hpp"
#include "log_store_segment.hpp"
#include "log_store_snapshot.hpp"

namespace amq {

struct LogStore::Impl {
  using SegPtr = detail::logstore::SegPtr;
  using Segment = detail::logstore::Segment;
  using SnapInfo = detail::logstore::SnapInfo;
  using SnapSeg = detail::logstore::SnapSeg;
  using SegMaps = std::array<detail::logstore::FdMap, detail::logstore::kSlotCount>;

  std::string dir;
  LogStoreOptions opt;
  int lock_fd = -1;
  mutable detail::logstore::RwLock mu;
  std::vector<SegPtr> segs;  // by generation; back() is the active segment
  std::array<SegPtr, detail::logstore::kSlotCount> slots{};
  detail::LogIndex index{0};
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

  ~Impl();

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
  void datasync(const Segment& s);

  // ---- segments and records (log_store.cpp) ----
  uint32_t free_slot() const;
  SegPtr create_segment(uint64_t gen, bool compaction);
  void roll(bool for_compaction = false);
  uint64_t append(uint8_t type, Bytes key, Bytes value);
  bool read_if_key(uint64_t loc, Bytes key, std::string* value, uint64_t* size, uint64_t& nreads) const;
  uint64_t* find(Bytes key, uint32_t fp, uint64_t* old_size, uint64_t& nreads);

  // ---- group commit (log_store.cpp) ----
  void start_flusher();
  void stop_flusher();

  // ---- recovery (log_store_recovery.cpp) ----
  struct Vanished {};  // a read-only open saw the segment files change: start again
  void recover();
  void recover_once();
  void add_damage(LogStoreDamage::Kind kind, const std::string& path, uint64_t offset, uint64_t bytes,
                  uint64_t records, bool to_end);
  std::vector<uint64_t> list_segments();
  void open_segments(const std::vector<uint64_t>& gens, std::vector<SegPtr>& bad);
  uint64_t drop_replaced_segments();
  std::map<uint64_t, const SnapSeg*> acknowledged(const SnapInfo& snap, uint64_t done, const std::vector<SegPtr>& bad);
  void scan(const std::map<uint64_t, const SnapSeg*>& acked);
  struct Window;  // a segment's bytes read through pread (log_store_recovery.cpp)
  void scan_segment(Segment& s, bool newest, const SnapSeg* ack, SegMaps& maps);
  void index_record(uint32_t slot_no, uint64_t pos, const detail::logstore::RecView& r, const SegMaps& maps);
  bool skip_damage(Segment& s, Window& w, uint64_t& pos, bool newest, const SnapSeg* ack, bool& tail_reported);
  bool drop_tail(Segment& s, Window& w, uint64_t pos, bool newest, const SnapSeg* ack, const std::string& where);
  void forget_torn_tails();

  // ---- snapshot (log_store_snapshot.cpp) ----
  std::optional<SnapInfo> read_snapshot();
  bool use_snapshot_index(const SnapInfo& info);
  void write_snapshot();

  // ---- compaction (log_store_compact.cpp) ----
  struct Compaction;  // one run's inputs, outputs and moved records
  void compact();
};

}  // namespace amq
