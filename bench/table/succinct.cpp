// SuccinctSet rows: amq's succinct trie beside the usual ways to hold a static set of
// strings — a sorted std::vector<std::string> with binary search, std::set,
// std::unordered_set — and marisa-trie (peer, when libmarisa-dev is installed). Sizes
// are also given as a share of the raw key bytes; "mix" is contains() over present
// and absent keys interleaved at random (thread CPU time per key, best_cpu_ns; the
// keys stream from one buffer), the figure the targets refer to. The
// SuccinctSet row also states its mix beside marisa-trie's from the same run.
//
// With the default data file the rows are measured on the two English word lists
// /usr/share/dict/american-english and american-english-insane instead, and on
// 100,000 synthetic URLs made from the first: keys with long shared prefixes, where
// a trie spends a level a byte (it shows the chain table at work).
// The SuccinctSet rows also state the same mix through contains_many (1024 keys a
// call), which interleaves descents on sets of 4 MiB or more; not what the target
// counts; the mix with its keys sorted (sorted_mix: the lookups' lines stay cached,
// so it shows the floor a machine sets for a descent); and the order-preserving
// map's two directions, index_of and key_at, beside marisa-trie's lookup and
// reverse_lookup (whose ids are not in key order). Of these sets only the last is
// that large: 600,000 synthetic paths (two words of the insane list joined by '/',
// ~9 MB), measured beside marisa-trie alone; and the real file paths under /usr (as
// `find /usr -type f`, sorted, at most 10^6), also beside marisa-trie alone.
#include <fmt/core.h>
#include <time.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include "amq/error.hpp"
#include "amq/succinct_set.hpp"
#include "bench_table.hpp"

#if AMQ_HAVE_MARISA
#include <marisa.h>
#endif

namespace amq::bench {
namespace {

// The mix: the lookup sample's present keys and as many absent ones, shuffled, copied
// back to back into one buffer in query order (pack_keys). The keys then stream in
// sequentially, so the time is the structure's lookup and not the cache misses of
// fetching keys scattered over the dataset's strings (the same for every row, but
// large enough to blur the comparison).
struct Mix {
  std::vector<std::byte> arena;
  std::vector<Bytes> keys;  // views into arena, in query order
};

// The same keys in sorted order: each lookup then follows a path much like the one
// before it, so the lines it reads are cached. What the mix takes then is the
// descent's own chain of dependent steps, the floor the machine sets for it.
Mix sorted_mix(const Mix& mix) {
  std::vector<Bytes> order(mix.keys);
  std::sort(order.begin(), order.end(), [](Bytes a, Bytes b) { return as_chars(a) < as_chars(b); });
  Mix m;
  pack_keys(order, m.arena, m.keys);
  return m;
}

Mix make_mix(const Dataset& d) {
  std::vector<Bytes> order;
  const std::span<const Bytes> present = d.probe_keys(), absent = d.probe_absent();
  order.reserve(2 * present.size());
  for (size_t i = 0; i < present.size(); ++i) {
    order.push_back(present[i]);
    if (!absent.empty()) order.push_back(absent[i % absent.size()]);
  }
  std::mt19937_64 rng(11);
  std::shuffle(order.begin(), order.end(), rng);
  Mix m;
  pack_keys(order, m.arena, m.keys);
  return m;
}

// Heap bytes of a std::string beyond the object itself (libstdc++: 15-byte SSO).
uint64_t string_heap(const std::string& s) { return s.size() > 15 ? s.capacity() + 1 : 0; }

struct TransparentHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

// A mix's time, ns per key: thread CPU time, not wall time (on a shared machine the
// wall clock mostly measures the neighbours).
template <class Contains>
double time_mix(const Options& o, const Mix& mix, Contains&& contains) {
  return best_cpu_ns(o, [&] { g_sink = lookup_pass(std::span<const Bytes>(mix.keys), contains); }) /
         static_cast<double>(mix.keys.size());
}

// Returns the mix time, ns per key.
template <class Contains>
double finish(Row& row, const Dataset& d, const Mix& mix, uint64_t raw, const Options& o, Contains&& contains) {
  measure_lookups(row, d, o, contains);
  const double mix_ns = time_mix(o, mix, contains);
  finish_row(row, d);
  row.note = fmt::format("{:.2f}% of raw key bytes; mix {:.1f} ns cpu{}{}", 100.0 * static_cast<double>(row.bytes) /
                                                                          static_cast<double>(raw),
                         mix_ns, row.note.empty() ? "" : "; ", row.note);
  return mix_ns;
}

// A key -> id -> key map timed on the lookup sample's first present keys: to_id (key
// -> id) on up to 20,000, to_key (id -> the key's length) on the ids of up to 4,000,
// the slower direction of the succinct set. Returns ns per call of each.
template <class ToId, class ToKey>
std::pair<double, double> time_map(const Options& o, const Dataset& d, ToId&& to_id, ToKey&& to_key) {
  const std::span<const Bytes> present = d.probe_keys();
  const size_t ni = std::min<size_t>(present.size(), 20000), nk = std::min<size_t>(present.size(), 4000);
  std::vector<uint64_t> ids(nk);
  for (size_t i = 0; i < nk; ++i) ids[i] = to_id(present[i]);
  // ns per call of f(0), ..., f(n - 1)
  const auto per_call = [&](size_t n, auto&& f) {
    return best_cpu_ns(o, [&] {
             uint64_t h = 0;
             for (size_t i = 0; i < n; ++i) h += f(i);
             g_sink = h;
           }) /
           static_cast<double>(std::max<size_t>(n, 1));
  };
  return {per_call(ni, [&](size_t i) { return to_id(present[i]); }),
          per_call(nk, [&](size_t i) { return to_key(ids[i]); })};
}

// The non-empty lines of the word list at `path` (only the all-lower-case ones if
// `lower_only`) for the synthetic sets.
std::vector<std::string> read_words(const std::string& path, bool lower_only) {
  std::vector<std::string> w;
  for (std::string& line : read_lines(path))
    if (!line.empty() &&
        (!lower_only || std::all_of(line.begin(), line.end(), [](char c) { return c >= 'a' && c <= 'z'; })))
      w.push_back(std::move(line));
  if (w.empty()) throw Error(Errc::invalid_argument, path + (lower_only ? ": no lower-case words" : ": no words"));
  return w;
}

// 100,000 URLs: one of 5 hosts, one of 10 directories, 1-3 lower-case words of the
// word list at `words` joined by '/', then ".html"; `absent` absent keys as for word lists.
Dataset url_dataset(const std::string& words, uint64_t absent) {
  const std::vector<std::string> w = read_words(words, true);
  static const char* const hosts[] = {"www.example.com", "cdn.example.org", "static.assets.example.net",
                                      "api.service.example.io", "docs.project.example.dev"};
  static const char* const dirs[] = {"static",    "images",        "assets",     "api/v1",    "api/v2",
                                     "docs/ref",  "blog/2024",     "blog/2025",  "products",  "users/profile"};
  std::mt19937_64 rng(17);
  std::unordered_set<std::string> seen;
  std::vector<std::string> keys;
  while (keys.size() < 100'000) {
    std::string k = fmt::format("https://{}/{}/", hosts[rng() % 5], dirs[rng() % 10]);
    for (uint64_t i = 0, n = 1 + rng() % 3; i < n; ++i) k += (i ? "/" : "") + w[rng() % w.size()];
    k += ".html";
    if (seen.insert(k).second) keys.push_back(std::move(k));
  }
  return string_dataset("synthetic-urls", std::move(keys), seen, absent);
}

// 600,000 keys of two words of the word list at `words` joined by '/' (a set of ~9 MB,
// past what the caches hold of it: the rows where contains_many interleaves), and
// `absent` absent keys.
Dataset path_dataset(const std::string& words, uint64_t absent) {
  const std::vector<std::string> w = read_words(words, false);
  std::mt19937_64 rng(23);
  std::unordered_set<std::string> seen;
  std::vector<std::string> keys;
  while (keys.size() < 600'000) {
    std::string k = w[rng() % w.size()] + "/" + w[rng() % w.size()];
    if (seen.insert(k).second) keys.push_back(std::move(k));
  }
  return string_dataset("synthetic-paths", std::move(keys), seen, absent);
}

// The regular files under /usr (real paths: long shared directory prefixes, shared
// suffixes such as ".so" and ".gz"), sorted and distinct, at most `cap`; unreadable
// directories are skipped. Named with its count, which depends on the machine. With
// `absent` absent keys.
Dataset usr_paths_dataset(uint64_t absent, size_t cap = 1'000'000) {
  namespace fs = std::filesystem;
  std::vector<std::string> keys;
  std::error_code ec;
  fs::recursive_directory_iterator it("/usr", fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::error_code fe;
    if (it->symlink_status(fe).type() == fs::file_type::regular) keys.push_back(it->path().string());
    if (keys.size() >= 4 * cap) break;  // a bound on the walk; the cap is applied after sorting
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  if (keys.size() > cap) keys.resize(cap);
  const std::unordered_set<std::string> seen(keys.begin(), keys.end());
  const size_t n = keys.size();
  return string_dataset(fmt::format("usr-file-paths-{}", n), std::move(keys), seen, absent);
}

// What the rows of one data set share: its file name, its raw key bytes and the mix.
struct SetBench {
  const Options& o;
  const Dataset& d;
  std::string data;
  uint64_t raw = 0;
  Mix mix;
  double n = 0;  // keys
};

SetBench set_bench(const Options& o, const Dataset& d) {
  uint64_t raw = 0;
  for (const auto& k : d.keys) raw += k.size();
  return {o, d, std::filesystem::path(d.name).filename().string(), raw, make_mix(d),
          static_cast<double>(d.keys.size())};
}

// A set's mix time and its key -> id -> key map's two directions, ns per call.
struct SetTimes {
  double mix = 0, to_id = 0, to_key = 0;
};

Row succinct_row(const SetBench& b, SetTimes& t) {
  const Options& o = b.o;
  Row row{.structure = "SuccinctSet"};
  SuccinctSet s;
  row.build_ns_per_key = median_ns(o.repeats, [&] { s = SuccinctSet::build(b.d.keys); }) / b.n;
  row.bytes = s.size_in_bytes();
  row.params = fmt::format("{}: {} nodes, {} tails, {} chains", b.data, s.node_count(), s.tail_count(), s.chain_count());
  const auto contains = [&](Bytes k) { return s.contains(k); };
  t.mix = finish(row, b.d, b.mix, b.raw, o, contains);
  // The same mix through contains_many, 1024 keys a call (interleaved descents on
  // sets of 4 MiB or more).
  std::unique_ptr<bool[]> out(new bool[1024]);
  const std::span<const Bytes> keys(b.mix.keys);
  const double many_ns = best_cpu_ns(o, [&] {
                           size_t found = 0;
                           for (size_t i = 0; i < keys.size(); i += 1024) {
                             const size_t m = std::min<size_t>(1024, keys.size() - i);
                             found += s.contains_many(keys.subspan(i, m), std::span<bool>(out.get(), m));
                           }
                           g_sink = found;
                         }) /
                         static_cast<double>(keys.size());
  row.note += fmt::format("; contains_many mix {:.1f} ns", many_ns);
  row.note += fmt::format("; mix sorted (paths cached) {:.1f} ns", time_mix(o, sorted_mix(b.mix), contains));
  // The order-preserving map: index_of (a present key's place in key order) and its
  // inverse key_at.
  std::tie(t.to_id, t.to_key) = time_map(
      o, b.d, [&](Bytes k) { return s.index_of(k); }, [&](uint64_t i) { return s.key_at(i).size(); });
  row.note += fmt::format("; index_of {:.0f} ns, key_at {:.0f} ns", t.to_id, t.to_key);
  return row;
}

Row sorted_vector_row(const SetBench& b) {
  Row row{.structure = "sorted vector + bsearch"};
  std::vector<std::string> v;
  row.build_ns_per_key = median_ns(b.o.repeats, [&] {
                           v = b.d.keys;
                           std::sort(v.begin(), v.end());
                         }) /
                         b.n;
  row.bytes = v.size() * sizeof(std::string);
  for (const auto& k : v) row.bytes += string_heap(k);
  row.params = b.data;
  finish(row, b.d, b.mix, b.raw, b.o,
         [&](Bytes k) { return std::binary_search(v.begin(), v.end(), as_chars(k), std::less<>{}); });
  return row;
}

Row std_set_row(const SetBench& b) {
  Row row{.structure = "std::set"};
  std::set<std::string, std::less<>> s;
  row.build_ns_per_key =
      median_ns(b.o.repeats, [&] { s = std::set<std::string, std::less<>>(b.d.keys.begin(), b.d.keys.end()); }) / b.n;
  row.bytes = s.size() * (32 + sizeof(std::string));  // red-black node header + value
  for (const auto& k : s) row.bytes += string_heap(k);
  row.params = b.data;
  row.note = "bytes: nodes + string heap, malloc overhead not counted";
  finish(row, b.d, b.mix, b.raw, b.o, [&](Bytes k) { return s.find(as_chars(k)) != s.end(); });
  return row;
}

Row unordered_set_row(const SetBench& b) {
  Row row{.structure = "std::unordered_set"};
  using USet = std::unordered_set<std::string, TransparentHash, std::equal_to<>>;
  USet s;
  row.build_ns_per_key = median_ns(b.o.repeats, [&] { s = USet(b.d.keys.begin(), b.d.keys.end()); }) / b.n;
  row.bytes = s.size() * (8 + sizeof(std::string) + 8) + s.bucket_count() * 8;  // next, value, hash; buckets
  for (const auto& k : s) row.bytes += string_heap(k);
  row.params = b.data;
  row.note = "bytes: nodes + buckets + string heap, malloc overhead not counted";
  finish(row, b.d, b.mix, b.raw, b.o, [&](Bytes k) { return s.find(as_chars(k)) != s.end(); });
  return row;
}

#if AMQ_HAVE_MARISA
Row marisa_row(const SetBench& b, SetTimes& t) {
  Row row{.structure = "marisa-trie (peer)"};
  marisa::Trie trie;
  row.build_ns_per_key = median_ns(b.o.repeats, [&] {
                           marisa::Keyset ks;
                           for (const auto& k : b.d.keys) ks.push_back(k.data(), k.size());
                           trie.build(ks);
                         }) /
                         b.n;
  row.bytes = trie.io_size();
  row.params = fmt::format("{}: default config", b.data);
  marisa::Agent agent;
  t.mix = finish(row, b.d, b.mix, b.raw, b.o, [&](Bytes k) {
    agent.set_query(reinterpret_cast<const char*>(k.data()), k.size());
    return trie.lookup(agent);
  });
  // Its key -> id -> key map on the same keys (ids in its own order, not key order).
  std::tie(t.to_id, t.to_key) = time_map(
      b.o, b.d,
      [&](Bytes k) -> uint64_t {
        agent.set_query(reinterpret_cast<const char*>(k.data()), k.size());
        return trie.lookup(agent) ? agent.key().id() : 0;
      },
      [&](uint64_t id) -> uint64_t {
        agent.set_query(static_cast<size_t>(id));
        trie.reverse_lookup(agent);
        return agent.key().length();
      });
  row.note += fmt::format("; lookup (key -> id) {:.0f} ns, reverse_lookup {:.0f} ns", t.to_id, t.to_key);
  return row;
}
#endif

// `containers`: also the rows of the standard containers (left out on the largest
// sets, to keep the bench short).
void rows_for(const Options& o, const Dataset& d, const Sink& emit, bool containers = true) {
  const SetBench b = set_bench(o, d);
  // Rows are held until marisa's is measured, so the SuccinctSet row can state the
  // comparison the target refers to.
  std::vector<Row> rows;
  SetTimes succinct, marisa;
  rows.push_back(succinct_row(b, succinct));
  if (containers) {
    rows.push_back(sorted_vector_row(b));
    rows.push_back(std_set_row(b));
    rows.push_back(unordered_set_row(b));
  }
#if AMQ_HAVE_MARISA
  rows.push_back(marisa_row(b, marisa));
#else
  rows.push_back(Row{.structure = "marisa-trie (peer)", .note = "skipped: libmarisa-dev not installed"});
#endif
  if (marisa.mix > 0)
    rows.front().note += fmt::format("; contains mix {:.1f} ns vs marisa {:.1f} ns = {:.2f}x faster", succinct.mix,
                                     marisa.mix, marisa.mix / succinct.mix);
  if (marisa.to_id > 0)
    rows.front().note += fmt::format("; index_of {:.2f}x and key_at {:.2f}x marisa's lookup and reverse_lookup time",
                                     succinct.to_id / marisa.to_id, succinct.to_key / marisa.to_key);
  for (const Row& r : rows) emit(r);
}

}  // namespace

void bench_succinct(const Options& o, const Dataset& d, const Sink& sink) {
  if (o.synthetic == 0 && o.data == Options{}.data) {
    for (const char* path : {"/usr/share/dict/american-english", "/usr/share/dict/american-english-insane"}) {
      if (!std::filesystem::exists(path)) {
        sink(Row{.structure = "SuccinctSet", .note = fmt::format("skipped: {} not installed", path)});
        continue;
      }
      Options w = o;
      w.data = path;
      rows_for(o, load_dataset(w), sink);
    }
    if (std::filesystem::exists("/usr/share/dict/american-english"))
      rows_for(o, url_dataset("/usr/share/dict/american-english", absent_keys(o)), sink);
    if (std::filesystem::exists("/usr/share/dict/american-english-insane"))
      rows_for(o, path_dataset("/usr/share/dict/american-english-insane", absent_keys(o)), sink, false);
    if (Dataset usr = usr_paths_dataset(absent_keys(o)); usr.keys.size() >= 1000)
      rows_for(o, usr, sink, false);
    else
      sink(Row{.structure = "SuccinctSet", .note = "skipped: fewer than 1000 files under /usr"});
    return;
  }
  rows_for(o, d, sink);
}

const RegisterFamily kFamily{"succinct", 80, bench_succinct};

}  // namespace amq::bench
