// The log store's recovery (open and verify): list and check the segment files, drop
// what a finished or unfinished compaction left, check the segments against the lengths
// the last close made durable, then load the index snapshot or scan every record.
// docs/decisions/0002-log-store-recovery.md gives the rules; LogStoreRecovery reports
// what was dropped.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <tuple>

#include "log_store_impl.hpp"

namespace amq {

using namespace detail::logstore;
using detail::LogIndex;

// ---- the report ------------------------------------------------------------------

namespace {

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

void LogStore::Impl::add_damage(LogStoreDamage::Kind kind, const std::string& path, uint64_t offset, uint64_t bytes,
                                uint64_t records, bool to_end) {
  report.damage.push_back({kind, path, offset, bytes, records, to_end});
  report.dropped_bytes += bytes;
  report.dropped_records += records;
  if (kind == LogStoreDamage::Kind::lost_acknowledged) report.acknowledged_lost = true;
  if (kind != LogStoreDamage::Kind::bad_snapshot &&
      std::none_of(report.damage.begin(), report.damage.end() - 1, [&](const LogStoreDamage& d) { return d.file == path; }))
    ++report.segments_affected;
}

// A read-only open that found no writer, but a writer that started during the scan: a
// torn tail it saw is that writer's write in flight, not damage.
void LogStore::Impl::forget_torn_tails() {
  auto& d = report.damage;
  d.erase(std::remove_if(d.begin(), d.end(), [](const LogStoreDamage& x) { return x.kind == LogStoreDamage::Kind::torn_tail; }),
          d.end());
  report = summarize(std::move(d));
  truncated = 0;
}

// ---- the segment files -----------------------------------------------------------

// Opens and checks the segment files, drops compaction leftovers, loads the snapshot
// or scans. A read-only open modifies nothing and retries when a writer deletes a
// segment between the listing and the open (a compaction finishing).
void LogStore::Impl::recover() {
  for (int attempt = 0;; ++attempt) {
    try {
      recover_once();
      return;
    } catch (const Vanished&) {
      if (attempt == 20) throw Error(Errc::io, dir + ": segments keep disappearing while opening");
    }
  }
}

// The generations of the segment files (a writer also removes leftovers).
std::vector<uint64_t> LogStore::Impl::list_segments() {
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

void LogStore::Impl::recover_once() {
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
  open_segments(gens, bad);
  const uint64_t done = drop_replaced_segments();
  // A listing taken while a writer renames and deletes files may miss some; a
  // second one that differs means the set changed meanwhile: start again.
  if (opt.read_only && list_segments() != gens) throw Vanished{};
  for (const auto& s : segs) {
    if (slots[s->h.slot]) throw Error(Errc::corrupt, s->path + ": two segments use slot " + std::to_string(s->h.slot));
    slots[s->h.slot] = s;
  }
  std::map<uint64_t, const SnapSeg*> acked;
  if (snap) acked = acknowledged(*snap, done, bad);
  if (!(snap && !force_scan && use_snapshot_index(*snap))) scan(acked);
  if (!segs.empty()) next_gen = segs.back()->h.gen + 1;
  for (const auto& b : bad) next_gen = std::max(next_gen, b->h.gen + 1);
  // A writer that dropped durable data without a snapshot to record it removes the
  // old one, whose lengths would report the same loss at every open.
  if (!opt.read_only && !opt.use_snapshot && changed && !report.clean()) ::unlink(file(kSnapName).c_str());
  if (!opt.read_only && (segs.empty() || segs.back()->h.covers != 0 || segs.back()->length >= opt.segment_bytes))
    segs.push_back(create_segment(next_gen++, false));
}

// Opens the segments `gens` into segs, checking their headers; with skip_corrupt a
// damaged one goes to `bad` (reported) instead of failing the open.
void LogStore::Impl::open_segments(const std::vector<uint64_t>& gens, std::vector<SegPtr>& bad) {
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
}

// A compaction that finished renaming all its outputs replaces every segment it
// covers; outputs of one that did not are duplicates of data still in its inputs.
// Both leave segs (and, for a writer, the directory). Returns the highest generation a
// finished compaction covers (0: none).
uint64_t LogStore::Impl::drop_replaced_segments() {
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
  return done;
}

// What the last close() made durable: every segment the snapshot lists that no
// finished compaction has replaced since (gen > done) must still be there, at least
// that long. Returns those present, by generation; a missing one is an error, or with
// skip_corrupt reported as lost.
std::map<uint64_t, const LogStore::Impl::SnapSeg*> LogStore::Impl::acknowledged(const SnapInfo& snap, uint64_t done,
                                                                                const std::vector<SegPtr>& bad) {
  std::map<uint64_t, const SnapSeg*> acked;
  for (const SnapSeg& a : snap.segs) {
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
  return acked;
}

// ---- the scan --------------------------------------------------------------------

// Records of a segment read through a window (pread, not mmap: a read-only open
// survives a writer cutting a torn tail under it).
struct LogStore::Impl::Window {
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
    const RecLengths l = record_lengths(p);
    if (l.vlen > LogStore::kMaxValueSize) return false;
    std::tie(p, n) = at(pos, l.size());
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

// Rebuilds the index from every record of every segment, in log order.
void LogStore::Impl::scan(const std::map<uint64_t, const SnapSeg*>& acked) {
  from_snapshot = false;
  index = LogIndex(opt.expected_keys);
  seed = std::random_device{}() | (uint64_t{std::random_device{}()} << 32);
  live_bytes = 0;
  // The header and key of a record scanned before, through a map of its segment. (A
  // writer cuts a segment only at its first damaged record, never below an intact
  // one, so these pages stay inside the file even in a read-only open.)
  SegMaps maps;
  for (size_t i = 0; i < segs.size(); ++i) {
    const auto ack = acked.find(segs[i]->h.gen);
    scan_segment(*segs[i], i + 1 == segs.size(), ack == acked.end() ? nullptr : ack->second, maps);
  }
}

// Indexes the intact records of s, drops (or refuses) the damage, and checks s against
// `ack`, what the last close made durable of it (nullptr: nothing).
void LogStore::Impl::scan_segment(Segment& s, bool newest, const SnapSeg* ack, SegMaps& maps) {
  const uint64_t ack_len = ack ? ack->length : 0;
  Window w{s, s.length, {}, 0, 0};
  maps[s.h.slot].map(s);  // (by descriptor: a compaction may have deleted the file)
  uint64_t pos = kSegHeader;
  s.records = 0;
  bool tail_reported = false;
  while (pos < w.size) {
    RecView r;
    if (w.record(pos, r)) {
      if (pos + r.size > kPosLimit) throw Error(Errc::too_large, s.path + ": segment longer than 8 GiB");
      index_record(s.h.slot, pos, r, maps);
      ++s.records;
      pos += r.size;
      continue;
    }
    if (skip_damage(s, w, pos, newest, ack, tail_reported)) break;
  }
  s.length = w.size;
  // Cut at a record boundary below what the last close made durable.
  if (s.length < ack_len && !tail_reported) {
    if (!opt.skip_corrupt)
      throw Error(Errc::corrupt, s.path + ": " + std::to_string(ack_len - s.length) +
                                     " bytes missing at the end (the last close made " + std::to_string(ack_len) +
                                     " durable); open with skip_corrupt (--skip-corrupt) to drop them");
    add_damage(LogStoreDamage::Kind::lost_acknowledged, s.path, s.length, ack_len - s.length,
               ack->records > s.records ? ack->records - s.records : 1, true);
  }
}

// Applies the intact record r at (slot, pos) to the index and live_bytes.
void LogStore::Impl::index_record(uint32_t slot_no, uint64_t pos, const RecView& r, const SegMaps& maps) {
  auto rec_at = [&](uint64_t loc) {
    RecView v;
    const FdMap& m = maps[loc_slot(loc)];
    parse_header(m.data + loc_pos(loc), m.size - loc_pos(loc), v);
    return v;
  };
  const uint32_t fp = LogIndex::fingerprint(hash(r.key));
  const uint64_t loc = make_loc(slot_no, pos);
  uint64_t* slot = index.find(fp, [&](uint64_t e) { return same(rec_at(LogIndex::loc_of(e)).key, r.key); });
  if (slot) {
    live_bytes -= rec_at(LogIndex::loc_of(*slot)).size;
    if (r.type == kPut) *slot = LogIndex::make(fp, loc);
    else index.erase(slot);
  } else if (r.type == kPut) {
    index.insert(fp, loc);
  }
  if (r.type == kPut) live_bytes += r.size;
}

// A damaged or incomplete record at pos. Damage followed by intact records is skipped
// (pos moves past it; false) or refused; damage that runs to the end goes to
// drop_tail (true: the segment ends at pos).
bool LogStore::Impl::skip_damage(Segment& s, Window& w, uint64_t& pos, bool newest, const SnapSeg* ack,
                                 bool& tail_reported) {
  // Is anything intact after it?
  uint64_t q = pos + 8;
  RecView next;
  while (q + kRecHeader <= w.size && !w.record(q, next)) q += 8;
  const std::string where = s.path + ": damaged record at offset " + std::to_string(pos);
  if (q + kRecHeader > w.size) {
    tail_reported = drop_tail(s, w, pos, newest, ack, where);
    return true;
  }
  if (!opt.skip_corrupt)
    throw Error(Errc::checksum_mismatch, where + " (intact records follow at offset " + std::to_string(q) +
                                             "); open with skip_corrupt (--skip-corrupt) to drop it");
  add_damage(LogStoreDamage::Kind::corrupt, s.path, pos, q - pos, w.count_records(pos, q), false);
  skipped += q - pos;
  pos = q;
  return false;
}

// Damage from pos to the end of s: a torn write (dropped and reported), or damage that
// open refuses without skip_corrupt. A writer cuts it off. Returns true when it was
// reported as lost durable data (the caller's length check must not report it again).
bool LogStore::Impl::drop_tail(Segment& s, Window& w, uint64_t pos, bool newest, const SnapSeg* ack,
                               const std::string& where) {
  const uint64_t ack_len = ack ? ack->length : 0;
  const uint64_t end = w.size;
  bool lost = false;
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
    const uint64_t recs = ack->records > s.records ? ack->records - s.records : 1;
    add_damage(LogStoreDamage::Kind::lost_acknowledged, s.path, pos, std::max(end, ack_len) - pos, recs, true);
    skipped += end - pos;
    lost = true;
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
  return lost;
}

}  // namespace amq
