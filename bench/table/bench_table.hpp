// The comparison table of amq-bench (and `amq bench`): every structure and its outside
// peers measured on the same keys in one run. Each structure family's file
// (bench/table/*.cpp) registers its function with a RegisterFamily object.
#pragma once

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "amq/detail/prefetch.hpp"
#include "amq/hash.hpp"

namespace amq::bench {

struct Row {
  std::string structure{};
  std::string params{};
  uint64_t n = 0;
  uint64_t bytes = 0;
  double bits_per_key = 0;
  double fpp_target = 0;
  double fpp_measured = 0;
  double build_ns_per_key = 0;
  double lookup_pos_ns = 0;
  double lookup_neg_ns = 0;
  double batch_lookup_ns = 0;  // contains_many over the present keys; 0 = not offered
  // A loop of contains over the same batches storing each answer into the same buffer,
  // the output contains_many gives; 0 = not measured (no contains_many).
  double loop_lookup_ns = 0;
  std::string note{};
};

// A batch inversion: contains_many over the present keys slower than a loop of contains
// doing the same job (loop_lookup_ns: the same batches, each answer stored; the single
// lookups' time where that was not measured), beyond the noise of one run (5%). The
// table notes it and --json says so (issue 34: a batch call must never lose to a loop of
// contains). The pos column's loop only counts its answers, which a compiler may
// reduce to a sum; a caller of contains_many wants the answers themselves.
inline constexpr double kBatchInversionSlack = 1.05;
inline double batch_reference_ns(const Row& r) { return r.loop_lookup_ns > 0 ? r.loop_lookup_ns : r.lookup_pos_ns; }
inline bool batch_inverted(const Row& r) {
  return r.batch_lookup_ns > 0 && batch_reference_ns(r) > 0 &&
         r.batch_lookup_ns > kBatchInversionSlack * batch_reference_ns(r);
}

// Lookup timings query a fixed sample of the keys: kLookupSample present keys drawn
// evenly from the whole insertion order and then shuffled (the first keys inserted
// would favour a cuckoo filter that finds early keys in their first bucket, or a
// layered filter that finds them in its first layer), and the first kLookupSample
// absent keys (that list is in random order). Every row uses the same sample. A
// pass over all 10^7 keys streamed 240 MB of keys and views through the caches, which
// evicted the structure being measured from the last-level cache; 2^18 keys (6 MiB
// with their views) leave it there, and still touch every cache line of a 10^7-key
// Bloom filter. The false-positive rate is measured on all absent keys.
inline constexpr size_t kLookupSample = size_t{1} << 18;
// The rows of structures sized past the LLC ("> LLC") query 2^21 keys instead: 2^18
// keys touch only 16 MiB of lines of a blocked filter, which the LLC then holds.
inline constexpr size_t kBeyondCacheSample = size_t{1} << 21;

struct Dataset {
  std::string name;                // "/usr/share/dict/words" or "synthetic"
  std::vector<std::string> keys;   // distinct
  std::vector<std::string> absent; // distinct, none in keys
  std::vector<Bytes> key_views, absent_views;  // into the arenas below
  std::vector<std::byte> key_arena, absent_arena;
  // Synthetic data: the keys are 64-bit integers, and lookups pass them as uint64_t
  // (the API's integer key, hashed as its 8 little-endian bytes: the same bits as
  // the byte views), as a caller holding integers would. Peers without an integer
  // API get the same 8 bytes.
  bool u64 = false;
  std::vector<uint64_t> key_u64, absent_u64;  // when u64: the keys' values, same order
  // The present keys lookups query: kBeyondCacheSample of the keys (all when there
  // are fewer), every (n / sample)-th in insertion order, shuffled. probe_keys(s)
  // takes the first s, still spread over the whole insertion order.
  std::vector<Bytes> probe_views;  // into probe_arena, in probe order (pack_keys)
  std::vector<std::byte> probe_arena;
  std::vector<uint64_t> probe_u64;
  void make_views();
  // The first `sample` keys of each list (all when there are fewer).
  template <class T>
  static std::span<const T> first(const std::vector<T>& v, size_t sample) {
    return std::span<const T>(v).first(std::min(v.size(), sample));
  }
  std::span<const Bytes> probe_keys(size_t sample = kLookupSample) const { return first(probe_views, sample); }
  std::span<const Bytes> probe_absent(size_t sample = kLookupSample) const { return first(absent_views, sample); }
  std::span<const uint64_t> probe_keys_u64(size_t sample = kLookupSample) const { return first(probe_u64, sample); }
  std::span<const uint64_t> probe_absent_u64(size_t sample = kLookupSample) const {
    return first(absent_u64, sample);
  }
};

struct Options {
  std::string data = "/usr/share/dict/words";
  uint64_t synthetic = 0;  // > 0: that many random 64-bit keys instead of the file
  int repeats = 3;         // builds: the median of this many; lookups: see measure_contenders
  int passes = 0;          // > 0: lookups take at least this many timed passes (min_passes)
  uint64_t absent = 0;     // > 0: that many absent keys (absent_keys)
  double fpp = 0.01;
  std::string only;        // run only structures whose name contains this
  double min_lookup_seconds = 3;  // lookups: rounds go on at least this long (see measure_contenders)
};

// Absent keys a data set gets: Options::absent, else 10^6, so a 1% rate is measured to
// about 0.01% (`synthetic` keys: as many as there are keys, from 10^6 to 2 * 10^6).
inline constexpr uint64_t kDefaultAbsent = 1'000'000;
inline uint64_t absent_keys(const Options& o, uint64_t synthetic = 0) {
  return o.absent > 0 ? o.absent : std::clamp<uint64_t>(synthetic, kDefaultAbsent, 2 * kDefaultAbsent);
}

// Copies the keys back to back into `arena` and points `views` at them, in order: a
// lookup pass over the views then streams its keys from one buffer, so its time is the
// structure's and not the cache misses of fetching keys scattered in memory.
template <class Keys>
void pack_keys(const Keys& from, std::vector<std::byte>& arena, std::vector<Bytes>& views) {
  size_t total = 0;
  for (const auto& k : from) total += std::size(k);
  arena.assign(total, std::byte{0});
  views.clear();
  views.reserve(std::size(from));
  size_t at = 0;
  for (const auto& k : from) {
    if (std::size(k) > 0) std::memcpy(arena.data() + at, std::data(k), std::size(k));
    views.emplace_back(arena.data() + at, std::size(k));
    at += std::size(k);
  }
}

// The lines of the file at `path`, a '\r' before each '\n' dropped (empty lines kept).
std::vector<std::string> read_lines(const std::string& path);
Dataset load_dataset(const Options& options);
// A dataset of distinct string keys (`seen` holds them all): absent keys are keys with
// '~' and a number appended, which follow a present key's whole path in a trie;
// `absent` of them (absent_keys).
Dataset string_dataset(std::string name, std::vector<std::string> keys, const std::unordered_set<std::string>& seen,
                       uint64_t absent);
std::string machine_description();
// The latency of a dependent random read in buffers of 256 KiB, 8 MiB and 64 MiB, one line.
std::string memory_description();
using detail::last_level_cache_bytes;  // amq/detail/prefetch.hpp

using Sink = std::function<void(const Row&)>;
// Runs every registered bench; calls `sink` as each row is ready.
void run_all(const Options& options, const Sink& sink);
// The families run_all measures, in its order ("bloom", "bloom-family", "cuckoo", ...).
std::vector<std::string> family_names();

// ---- helpers for bench functions --------------------------------------------

inline double now_ns() {
  return static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

template <class F>
double median_ns(int repeats, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < std::max(1, repeats); ++i) {
    const double a = now_ns();
    f();
    t.push_back(now_ns() - a);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// CPU time of the calling thread: lookups are single-threaded and in memory, so this
// leaves out the time the thread waits for a core on a shared machine.
inline double cpu_now_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

// Lookup timings: one untimed warm-up run of f (it brings the structure into the
// caches, as a structure in use is), then the least of min_passes(o) runs, in thread
// CPU time. On a shared machine other tenants only ever add time — they evict the
// structure from the shared last-level cache for seconds at a time — so the
// least-disturbed pass is the steadiest estimate; a median still swung 2x between runs
// minutes apart.
inline constexpr int kMinPasses = 11;
// Timed passes of each kind of lookup: Options::passes (a smoke run takes 1), else
// max(repeats, kMinPasses).
inline int min_passes(const Options& o) { return o.passes > 0 ? o.passes : std::max(kMinPasses, o.repeats); }
template <class F>
double cpu_time_ns(F&& f) {
  const double a = cpu_now_ns();
  f();
  return cpu_now_ns() - a;
}
template <class F>
double best_cpu_ns(const Options& o, F&& f) {
  f();
  double best = 0;
  for (int i = 0; i < min_passes(o); ++i) {
    const double t = cpu_time_ns(f);
    if (i == 0 || t < best) best = t;
  }
  return best;
}

inline volatile size_t g_sink;

// One lookup pass: how many of `keys` `contains` answers true for. Kept out of line so
// the timed loop is compiled on its own, as a caller's loop would be, rather than
// inside the large measuring function (where GCC spilled the structure's fields and
// reloaded them on every key).
template <class Key, class Contains>
[[gnu::noinline]] size_t lookup_pass(std::span<const Key> keys, const Contains& contains) {
  size_t s = 0;
  for (const Key& k : keys) s += contains(k);
  return s;
}

// A loop of contains storing each answer: what contains_many must beat.
template <class Key, class Contains>
[[gnu::noinline]] size_t store_pass(std::span<const Key> keys, std::span<bool> out, const Contains& contains) {
  size_t s = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const bool r = contains(keys[i]);
    out[i] = r;
    s += r;
  }
  return s;
}

// A structure under measurement: its row, a lookup pass (returns how many keys it
// answered true for) and, when it has one, its batched lookup and the loop of contains
// that gives the same answers (store_pass).
struct Contender {
  Row* row;
  std::function<size_t(std::span<const Bytes>)> pass;
  std::function<size_t(std::span<const Bytes>, std::span<bool>)> many;  // empty: none
  // The same with uint64_t keys (Dataset::u64); empty: the structure takes bytes only.
  std::function<size_t(std::span<const uint64_t>)> pass_u64{};
  std::function<size_t(std::span<const uint64_t>, std::span<bool>)> many_u64{};
  std::function<size_t(std::span<const Bytes>, std::span<bool>)> loop{};  // empty: none
  std::function<size_t(std::span<const uint64_t>, std::span<bool>)> loop_u64{};
};

// Fills the measured columns of the contenders' rows (structures already built with
// the keys): the false-positive rate on all absent keys, then lookups on the dataset's
// lookup sample (kLookupSample), present, absent and batched, in thread CPU time, the
// least of at least lookup_passes(o) passes of each kind. The passes run in rounds of
// blocks: in each round each contender in turn gets, for each kind, a warm-up pass and
// passes_per_block(o) (three) timed ones, so within a block the structure has the
// caches to itself, and the contenders compared in one row alternate across rounds (a
// burst of interference, lasting seconds, rarely spoils every round of one). Rounds go
// on for at least Options::min_lookup_seconds of wall time (at most kMaxRounds), so
// they outlast a burst. Dropped: turns of single passes (the structures then shared the
// last-level cache, and the one reading fewer lines per key lost most), and
// alternating the kinds of pass (the present sample's lines, read by two kinds, stayed
// hotter than the absent sample's).
void measure_contenders(std::span<Contender> contenders, const Dataset& d, const Options& o,
                        size_t sample = kLookupSample);
inline constexpr int kPassesPerBlock = 3;
inline constexpr int kMaxRounds = 64;
// Timed passes of each kind in a block: kPassesPerBlock, fewer when --passes asks for fewer.
inline int passes_per_block(const Options& o) { return std::min(kPassesPerBlock, min_passes(o)); }
// How many timed passes of each kind measure_contenders takes at least: min_passes(o)
// in whole rounds.
inline int lookup_passes(const Options& o) {
  const int block = passes_per_block(o);
  return (min_passes(o) + block - 1) / block * block;
}

template <class Contains>
Contender contender(Row& row, const Contains& contains) {
  return {&row, [&contains](std::span<const Bytes> ks) { return lookup_pass(ks, contains); }, {}};
}
template <class Set>
Contender set_contender(Row& row, const Set& s) {
  return {&row, [&s](std::span<const Bytes> ks) { return lookup_pass(ks, [&s](Bytes k) { return s.contains(k); }); },
          [&s](std::span<const Bytes> ks, std::span<bool> out) { return s.contains_many(ks, out); },
          [&s](std::span<const uint64_t> ks) { return lookup_pass(ks, [&s](uint64_t k) { return s.contains(k); }); },
          [&s](std::span<const uint64_t> ks, std::span<bool> out) { return s.contains_many(ks, out); },
          [&s](std::span<const Bytes> ks, std::span<bool> out) {
            return store_pass(ks, out, [&s](Bytes k) { return s.contains(k); });
          },
          [&s](std::span<const uint64_t> ks, std::span<bool> out) {
            return store_pass(ks, out, [&s](uint64_t k) { return s.contains(k); });
          }};
}

// measure_contenders for one structure: `contains(Bytes)` answers one key.
template <class Contains>
void measure_lookups(Row& row, const Dataset& d, const Options& o, const Contains& contains) {
  Contender c = contender(row, contains);
  measure_contenders(std::span(&c, 1), d, o);
}
// measure_contenders for one structure with contains(key) and contains_many(keys, out).
template <class Set>
void measure_set_lookups(Row& row, const Dataset& d, const Options& o, const Set& s, size_t sample = kLookupSample) {
  Contender c = set_contender(row, s);
  measure_contenders(std::span(&c, 1), d, o, sample);
}

inline void finish_row(Row& row, const Dataset& d) {
  row.n = d.keys.size();
  row.bits_per_key = row.n ? 8.0 * static_cast<double>(row.bytes) / static_cast<double>(row.n) : 0;
}

// A structure family: its function appends its rows (and its peers' rows). `order`
// places it in the table (run_all and family_names go by it, then by name).
using FamilyFn = void (*)(const Options&, const Dataset&, const Sink&);
struct Family {
  std::string name;  // what --only matches: "bloom", "cuckoo", ...
  int order = 0;
  FamilyFn run = nullptr;
};
// Registers a family: one static object in the family's file,
//   const RegisterFamily kFamily{"cuckoo", 30, bench_cuckoo};
struct RegisterFamily {
  RegisterFamily(std::string name, int order, FamilyFn run);
};
// The registered families, in table order.
const std::vector<Family>& families();

}  // namespace amq::bench
