// The log store's compaction: the live records of every sealed segment are copied into
// new segments (compaction outputs, "part i of n" covering the newest input), made
// durable and renamed into place; then the index points at the copies and the inputs
// are deleted. Readers and writers carry on meanwhile: new writes go to a fresh active
// segment, and the store's lock is held only to pick the inputs, to ask which records
// are live, to create an output, and to switch the index over. A crash at any moment
// loses nothing: recovery drops the outputs of an unfinished compaction and the inputs
// of a finished one (log_store_recovery.cpp).
#include <unistd.h>

#include <algorithm>
#include <shared_mutex>  // std::shared_lock

#include "amq/file_io.hpp"
#include "log_store_impl.hpp"

namespace amq {

using namespace detail::logstore;
using detail::LogIndex;

struct LogStore::Impl::Compaction {
  struct Move {
    uint32_t fp;
    uint64_t from, to;
  };
  // A put record of an input that may be live.
  struct Cand {
    uint32_t fp;
    uint64_t loc, pos, size;
  };

  Impl& s;
  std::vector<SegPtr> inputs;
  uint64_t covers = 0, first_gen = 0, max_parts = 0;
  std::vector<Move> moves;
  std::vector<SegPtr> outputs;
  std::vector<std::byte> out_buf;
  uint64_t out_flushed = 0;  // bytes of the current output already written

  explicit Compaction(Impl& store) : s(store) {}

  // Under the store's lock: seals the active segment and takes every older one as
  // input. False when there is nothing to reclaim.
  bool begin() {
    std::unique_lock lk(s.mu);
    s.check_writable();
    uint64_t total = 0, records = 0;
    for (const auto& seg : s.segs) {
      total += seg->length;
      records += seg->length - kSegHeader;
    }
    if (records == s.live_bytes) return false;  // no dead record, tombstone or damaged byte
    max_parts = total / s.opt.segment_bytes + 2;
    covers = s.segs.back()->h.gen;
    first_gen = s.next_gen;
    s.next_gen += max_parts;
    // New writes go to a fresh active segment; every older one is compacted.
    s.roll(true);
    s.changed = true;
    inputs.assign(s.segs.begin(), s.segs.end() - 1);
    return true;
  }

  void flush() {
    Segment& o = *outputs.back();
    if (const int err = pwrite_full(o.fd, out_buf.data(), out_buf.size(), out_flushed)) sys_fail(o.path, "cannot write", err);
    out_flushed += out_buf.size();
    out_buf.clear();
  }

  // Copies the records of `in` that the index still points at.
  void copy_segment(const Segment& in) {
    MappedFile map(in.path);
    const Bytes data = map.bytes();
    const uint64_t end = std::min<uint64_t>(in.length, data.size());
    std::vector<Cand> batch;
    for (uint64_t pos = kSegHeader; pos < end;) {
      RecView r;
      if (!parse_record(data.data() + pos, end - pos, r)) {
        // Damage that open skipped (skip_corrupt) holds no live record: compaction
        // drops it. Damage found only now may have been live: an error.
        const auto skipped_at = std::find_if(s.report.damage.begin(), s.report.damage.end(), [&](const LogStoreDamage& d) {
          return d.kind == LogStoreDamage::Kind::corrupt && d.file == in.path && d.offset == pos;
        });
        if (skipped_at == s.report.damage.end())
          throw Error(Errc::checksum_mismatch, in.path + ": damaged record at offset " + std::to_string(pos) +
                                                   " found while compacting");
        pos += skipped_at->bytes;
        continue;
      }
      if (r.type == kPut) batch.push_back({LogIndex::fingerprint(s.hash(r.key)), make_loc(in.h.slot, pos), pos, r.size});
      if (batch.size() >= 4096) copy_live(batch, data);
      pos += r.size;
    }
    copy_live(batch, data);
  }

  // Copies the candidates that are live (one shared lock for the batch) and empties it.
  void copy_live(std::vector<Cand>& batch, Bytes data) {
    std::vector<char> live(batch.size());
    {
      std::shared_lock lk(s.mu);
      for (size_t i = 0; i < batch.size(); ++i)
        live[i] = s.index.find(batch[i].fp, [&](uint64_t e) { return LogIndex::loc_of(e) == batch[i].loc; }) != nullptr;
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      if (!live[i]) continue;
      const Cand& c = batch[i];
      if (outputs.empty() || outputs.back()->length + c.size > s.opt.segment_bytes) {
        if (!outputs.empty()) flush();
        if (outputs.size() == max_parts) throw Error(Errc::corrupt, s.dir + ": compaction output larger than its input");
        // (free_slot() throws Errc::full when the live data needs more segments than
        // are free; the compaction is then abandoned and nothing is lost.)
        std::unique_lock lk(s.mu);
        outputs.push_back(s.create_segment(first_gen + outputs.size(), true));
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
  }

  // Final headers (part i of n), then makes every output durable and visible.
  void finish() {
    if (!outputs.empty()) flush();
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
      const std::string final_path = s.file(seg_name(o->h.gen));
      if (::rename(o->path.c_str(), final_path.c_str()) != 0) sys_fail(final_path, "cannot rename", errno);
      o->path = final_path;
    }
    fsync_dir(s.dir);
  }

  // After a failure: the outputs go; the inputs and the index are untouched.
  void abandon() {
    std::unique_lock lk(s.mu);
    for (const auto& o : outputs) {
      s.slots[o->h.slot] = nullptr;
      ::unlink(o->path.c_str());
    }
  }

  // Points the index at the copies (where a record is still live), replaces the
  // inputs by the outputs, and deletes the inputs.
  void install() {
    {
      std::unique_lock lk(s.mu);
      for (const Move& m : moves) {
        uint64_t* slot = s.index.find(m.fp, [&](uint64_t e) { return LogIndex::loc_of(e) == m.from; });
        if (slot) *slot = LogIndex::make(m.fp, m.to);
      }
      for (const auto& in : inputs) s.slots[in->h.slot] = nullptr;
      std::vector<SegPtr> now(outputs);
      for (const auto& seg : s.segs)
        if (std::find(inputs.begin(), inputs.end(), seg) == inputs.end()) now.push_back(seg);
      s.segs = std::move(now);
    }
    for (const auto& in : inputs) ::unlink(in->path.c_str());
    fsync_dir(s.dir);
  }
};

void LogStore::Impl::compact() {
  std::lock_guard cg(compact_mu);
  Compaction c(*this);
  if (!c.begin()) return;
  try {
    for (const auto& in : c.inputs) c.copy_segment(*in);
    c.finish();
  } catch (...) {
    c.abandon();
    throw;
  }
  c.install();
}

}  // namespace amq
