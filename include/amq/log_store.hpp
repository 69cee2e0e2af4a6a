// amq/log_store.hpp — a persistent key-value store: an append-only log on disk found
// through an in-memory cuckoo index.
//
// LogStore keeps every put and erase as a checksummed record appended to a log file
// (a "segment") in one directory, and an in-memory index of about 8 bytes per key
// (detail/log_index.hpp: 4-way cuckoo buckets of a 28-bit fingerprint and a 36-bit
// log location) that finds a key's newest record in about one read. Choose it over a
// filter when you need the values back and they must survive a crash; choose an LSM
// store (LevelDB) when you need ordered scans or data much larger than RAM / 8 bytes.
//
// Guarantees
//  * Keys are byte strings of 0..kMaxKeySize bytes; values 0..kMaxValueSize bytes.
//    Larger ones throw Errc::too_large. Every record carries a CRC-32C; get() checks it
//    and throws Errc::checksum_mismatch if the bytes on disk changed.
//  * Durability (LogStoreOptions::durability). Every put/erase is written to the file
//    (pwrite) before it returns, so a crash of the process (kill -9) never loses an
//    acknowledged write, whatever the policy. The policies differ for a crash of the
//    machine (power loss, kernel panic):
//      none          nothing is flushed until sync() or close(); a machine crash may
//                    lose writes made since the last sync()/close().
//      every_write   fdatasync before put/erase return: nothing acknowledged is lost.
//      group_commit  a background thread fdatasyncs every group_commit_ms ms when
//                    there are new writes: a machine crash loses at most the writes of
//                    the last group_commit_ms ms (plus the fdatasync in progress).
//    In every case what survives is a prefix of the writes: the log is append-only and
//    recovery keeps every intact record up to the first torn one.
//  * Recovery (open): the segments are scanned (or the index snapshot is loaded when it
//    matches the segment files exactly) and the index is rebuilt. Whatever recovery
//    drops is reported, never silent: recovery() lists each damaged range (segment,
//    offset, bytes, records) and stats() counts them.
//      - A torn record at the end of the newest segment, past what the last close()
//        made durable, is the write a crash interrupted: it is dropped (cut off by a
//        writer) and reported as LogStoreDamage::Kind::torn_tail.
//      - Anything missing or damaged that the last close() had made durable (the
//        snapshot records every segment's length: a shorter segment, a missing one, a
//        bad record below that length) is damage, not a crash: open throws Errc::corrupt.
//        A deleted key's tombstone in the lost bytes would otherwise bring the key back.
//      - A damaged record followed by intact ones is corruption: open throws
//        Errc::checksum_mismatch; a damaged segment header throws too.
//    With skip_corrupt the damage is dropped instead (skipped, or cut off by a writer)
//    and reported. Without a usable index.snap (deleted, damaged or use_snapshot =
//    false) a segment cut exactly at a record boundary looks like a crash before those
//    writes and cannot be detected; verify() reports a damaged snapshot.
//  * get() checks the CRC of the record it returns, and of any record its index points
//    to with another key (Errc::checksum_mismatch): damage never reads as "absent".
//  * compact() rewrites the live records of all sealed segments into new segments
//    (fsync, atomic rename, directory fsync) and deletes the old ones; other threads
//    keep reading and writing meanwhile (new writes go to a fresh active segment). A
//    crash at any moment of a compaction loses nothing. With no dead record it does
//    nothing.
//  * One writer per directory, any number of readers: a writer holds an exclusive flock
//    on DIR/LOCK while open (another writer gets Errc::locked). A read-only open
//    (LogStoreOptions::read_only) takes no lock and never modifies a file: it reads the
//    consistent prefix present when it opens (segments are append-only; files a writer
//    deletes stay readable through the open descriptors), so it works while a writer is
//    active and does not see that writer's later writes. A torn record at the end is
//    then the writer's write in flight and is ignored without a report.
//  * Thread-safe: any method may be called from several threads; gets run in parallel,
//    puts and erases are serialised (and not starved by a stream of gets).
//
// Cost
//  * Memory: the index, 8 bytes a slot at up to ~96% load (stats().index_bytes), plus
//    one descriptor per segment; values stay on disk. The index doubles when full.
//  * put / erase: a lookup in the index (confirmed by reading the old record) and one
//    pwrite of the record, plus an fdatasync with every_write. get / contains: one
//    pread in the common case (stats().get_reads counts them), more only when another
//    key shares the fingerprint or the value is long.
//  * open: loads index.snap (one read of the index) when it matches the segments, else
//    scans every record of every segment once. compact(): one pass over the sealed
//    segments, writing only live records; memory for one (fingerprint, old, new
//    location) entry per live record moved.
//  * A segment is sealed when the next record would take it past segment_bytes; at most
//    64 segments exist (writes stop at 62 with Errc::full until compact()), so the log
//    holds about 62 x segment_bytes at most.
//
//   auto db = amq::LogStore::open("/var/lib/app/db", {.durability = amq::Durability::group_commit});
//   db.put("apple", "red");
//   std::optional<std::string> v = db.get("apple");   // "red"
//   db.erase("apple");
//   db.compact();                                      // reclaim dead records' space
//   db.close();                                        // syncs, writes the index snapshot
//
//   auto ro = amq::LogStore::open("/var/lib/app/db", {.read_only = true});  // beside a writer
//   if (!ro.recovery().clean()) std::cerr << ro.recovery().summary() << '\n';
//   amq::LogStoreRecovery damage = amq::LogStore::verify("/var/lib/app/db");
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "amq/hash.hpp"

namespace amq {

enum class Durability { none, every_write, group_commit };

struct LogStoreOptions {
  Durability durability = Durability::none;
  uint32_t group_commit_ms = 10;       // group_commit: flush interval, 1..60000
  bool create_if_missing = true;       // else open throws Errc::not_found for a missing dir
  bool skip_corrupt = false;           // drop damaged records (reported in recovery()) instead of failing
  bool use_snapshot = true;            // load / write DIR/index.snap
  uint64_t segment_bytes = 1ull << 30; // seal the active segment past this size (64 KiB..4 GiB)
  uint64_t expected_keys = 0;          // presize the index (it grows anyway)
  bool read_only = false;              // no lock, no file modified; put/erase/compact/sync throw
};

struct LogStoreStats {
  uint64_t records = 0;          // records in the segment files (puts and tombstones, live or dead)
  uint64_t live_keys = 0;
  uint64_t log_bytes = 0;        // size of all segment files
  uint64_t live_bytes = 0;       // bytes of the records that are the current value of a key
  uint64_t segments = 0;
  uint64_t index_bytes = 0;      // memory of the cuckoo table
  double index_bytes_per_key = 0;
  uint64_t index_buckets = 0;
  uint64_t index_grows = 0;
  uint64_t gets = 0;             // get/contains calls since open
  uint64_t get_reads = 0;        // preads those calls made (confirming tags, reading values)
  uint64_t truncated_bytes = 0;  // torn tail dropped at open (cut off by a writer)
  uint64_t skipped_bytes = 0;    // damaged bytes dropped at open (skip_corrupt)
  bool from_snapshot = false;    // open used the index snapshot
};

// One damaged range found by recovery or verify.
struct LogStoreDamage {
  enum class Kind {
    torn_tail,           // a torn record at the end of the newest segment, past the last close
    corrupt,             // records failing their CRC / framing (skipped or cut with skip_corrupt)
    lost_acknowledged,   // bytes or records the last close made durable are missing or damaged
    bad_segment,         // a segment file whose header is damaged or that is too short (ignored)
    bad_snapshot,        // index.snap is damaged (ignored: no data lost, but truncation goes undetected)
  };
  Kind kind = Kind::torn_tail;
  std::string file;       // the file's path
  uint64_t offset = 0;    // where the range starts in the file
  uint64_t bytes = 0;     // bytes in the range
  uint64_t records = 0;   // records in it: exact for lost_acknowledged, else those whose headers
                          // could be read (at least 1 when bytes > 0)
  bool to_end = false;    // the range runs to the end of the file: if the file was cut, the
                          // records that followed are lost too (counted only when the snapshot
                          // recorded them: lost_acknowledged)
  std::string describe() const;  // "seg-....log: 16 bytes (1 record) at offset 96: torn tail"
};

// What recovery dropped at open (LogStore::recovery()) or what verify() found.
struct LogStoreRecovery {
  uint64_t dropped_bytes = 0;       // sum of the ranges' bytes
  uint64_t dropped_records = 0;     // sum of the ranges' records
  uint64_t segments_affected = 0;   // segment files with at least one range
  bool acknowledged_lost = false;   // some range is lost_acknowledged
  std::vector<LogStoreDamage> damage;
  bool clean() const { return damage.empty(); }
  // One line: "dropped 16 bytes (1 record) in 1 segment: <first range>[; and N more]".
  std::string summary() const;
};

class LogStore {
 public:
  static constexpr size_t kMaxKeySize = 65535;
  static constexpr size_t kMaxValueSize = size_t{64} << 20;  // 64 MiB

  // Opens (creating it if allowed) the store in directory `dir`. Throws Errc::locked,
  // Errc::not_found, Errc::io, Errc::invalid_argument, or the recovery errors above.
  static LogStore open(const std::string& dir, const LogStoreOptions& options = {});

  LogStore(LogStore&&) noexcept;
  LogStore& operator=(LogStore&&) noexcept;
  ~LogStore();  // close(), ignoring errors

  // Sets key to value (replacing any value).
  void put(KeyView key, Bytes value);
  void put(KeyView key, std::string_view value) { put(key, as_bytes(value)); }
  // The key's value, or nullopt.
  std::optional<std::string> get(KeyView key) const;
  // Same, into `out` (reusing its memory); false if absent.
  bool get(KeyView key, std::string& out) const;
  bool contains(KeyView key) const;
  // Removes the key (appends a tombstone); false if it was absent (nothing written).
  bool erase(KeyView key);
  // Number of live keys.
  size_t size() const;
  // Calls f(key, value) for every pair live when the call starts, in log order (a
  // consistent snapshot: later writes are not seen). f may use the store, writes too.
  void for_each(const std::function<void(Bytes key, Bytes value)>& f) const;

  // Makes every write so far durable (fdatasync).
  void sync();
  // Rewrites the live records, dropping dead ones and tombstones (see above). Needs
  // free segment slots: there are 64, and writes stop (Errc::full) at 62 in use so
  // that a compaction can always start; one whose live data needs more segments than
  // remain free throws Errc::full and changes nothing.
  void compact();
  LogStoreStats stats() const;
  // What open's recovery dropped or skipped (empty when the store was intact).
  const LogStoreRecovery& recovery() const;
  const std::string& dir() const;
  // Syncs, writes the index snapshot, releases the lock (read-only: only closes the
  // files). Further calls throw.
  void close();

  // Checks every record's CRC, every segment header, the segments against the lengths
  // the snapshot recorded, and the snapshot itself, without changing any file (a
  // read-only open with skip_corrupt that always scans). Runs while a writer is active.
  // Throws only when the directory cannot be read (Errc::not_found, Errc::io).
  static LogStoreRecovery verify(const std::string& dir);

 private:
  struct Impl;
  // get and contains: finds the key; copies its value into *out when out is not null.
  bool lookup(KeyView key, std::string* out) const;
  explicit LogStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A file stored as chunks (amq store import/export): cuts `file` into chunks
// of `chunk_bytes`, stores each under its 20-byte SHA-1 (identical chunks once), and
// the list under the key kManifestKey. export writes the file back byte-identical,
// atomically (temporary file, fsync, rename), checking every chunk's SHA-1.
inline constexpr std::string_view kManifestKey = "amq:manifest";
struct ImportResult {
  uint64_t bytes = 0;
  uint64_t chunks = 0;
  uint64_t new_chunks = 0;  // chunks not already in the store
};
ImportResult store_import(LogStore& store, const std::string& file, size_t chunk_bytes = 64 * 1024);
uint64_t store_export(const LogStore& store, const std::string& out);
// Removes the chunks no manifest refers to (left by an interrupted import, or by the file
// a later import replaced): every key of 20 bytes whose value's SHA-1 is the key and that
// is not in the manifest. Then compacts when anything was removed.
struct GcResult {
  uint64_t removed = 0;        // chunks erased
  uint64_t removed_bytes = 0;  // their values' bytes
};
GcResult store_gc(LogStore& store);

}  // namespace amq
