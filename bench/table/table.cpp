#include <fmt/core.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "amq/detail/huge_pages.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "bench_table.hpp"

namespace amq::bench {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string u64_key(uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); }

}  // namespace

void Dataset::make_views() {
  // The views point into one contiguous copy of the key bytes (as keys read from a
  // file or a column would be), not into the std::string objects: a lookup pass then
  // streams 8 bytes of key per 64-bit key instead of a 32-byte string object, and the
  // stream evicts less of a filter that lives in the last-level cache.
  pack_keys(keys, key_arena, key_views);
  pack_keys(absent, absent_arena, absent_views);
  auto values = [](const std::vector<Bytes>& views, std::vector<uint64_t>& out) {
    out.clear();
    out.reserve(views.size());
    for (Bytes v : views) {
      uint64_t x = 0;
      std::memcpy(&x, v.data(), 8);
      out.push_back(x);
    }
  };
  const size_t n = key_views.size(), k = std::min(n, kBeyondCacheSample);
  std::vector<size_t> picks(k);
  for (size_t i = 0; i < k; ++i) picks[i] = static_cast<size_t>(static_cast<unsigned __int128>(i) * n / k);
  std::mt19937_64 rng(11);
  std::shuffle(picks.begin(), picks.end(), rng);
  // The picked keys get their own copy in probe order, like the absent list: a view
  // into key_arena at a random place would add a cache miss for the key's own bytes
  // to every present lookup of a string set larger than the caches (the insane word
  // list's arena is 6 MB) and to none of the absent ones.
  std::vector<Bytes> picked;
  picked.reserve(k);
  for (size_t i : picks) picked.push_back(key_views[i]);
  pack_keys(picked, probe_arena, probe_views);
  if (u64) {
    values(key_views, key_u64);
    values(absent_views, absent_u64);
    values(probe_views, probe_u64);
  }
}

// Probe present keys in a shuffled order, so a sorted word list is not a cache gift.
void shuffle_and_view(Dataset& d) {
  std::mt19937_64 rng(7);
  std::shuffle(d.keys.begin(), d.keys.end(), rng);
  d.make_views();
}

std::vector<std::string> read_lines(const std::string& path) {
  const auto bytes = read_file(path);
  std::string_view text = as_chars(bytes);
  std::vector<std::string> lines;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.emplace_back(line);
  }
  return lines;
}

Dataset load_dataset(const Options& o) {
  Dataset d;
  if (o.synthetic > 0) {
    // splitmix64 is a bijection, so keys i < n and i >= n never collide.
    d.name = fmt::format("synthetic: {} random 64-bit keys", o.synthetic);
    d.u64 = true;
    d.keys.reserve(o.synthetic);
    for (uint64_t i = 0; i < o.synthetic; ++i) d.keys.push_back(u64_key(splitmix64(i)));
    const uint64_t absent = absent_keys(o, o.synthetic);
    d.absent.reserve(absent);
    for (uint64_t i = 0; i < absent; ++i) d.absent.push_back(u64_key(splitmix64(o.synthetic + i)));
  } else {
    d.name = o.data;
    std::unordered_set<std::string> seen;
    for (std::string& line : read_lines(o.data))
      if (seen.insert(line).second) d.keys.push_back(std::move(line));
    if (d.keys.empty()) throw Error(Errc::invalid_argument, o.data + ": no keys");
    return string_dataset(std::move(d.name), std::move(d.keys), seen, absent_keys(o));
  }
  shuffle_and_view(d);
  return d;
}

Dataset string_dataset(std::string name, std::vector<std::string> keys, const std::unordered_set<std::string>& seen,
                       uint64_t absent) {
  Dataset d;
  d.name = std::move(name);
  d.keys = std::move(keys);
  // Absent keys: the data's own keys, changed so they are not in it.
  std::mt19937_64 rng(42);
  for (uint64_t i = 0; d.absent.size() < absent; ++i) {
    std::string k = d.keys[rng() % d.keys.size()] + "~" + std::to_string(i);
    if (!seen.count(k)) d.absent.push_back(std::move(k));
  }
  shuffle_and_view(d);
  return d;
}

void measure_contenders(std::span<Contender> contenders, const Dataset& d, const Options& o, size_t sample) {
  const std::span<const Bytes> present = d.probe_keys(sample), absent = d.probe_absent(sample);
  std::unique_ptr<bool[]> out(new bool[1024]);
  const auto per_key = [](double ns, size_t keys) { return ns / static_cast<double>(std::max<size_t>(keys, 1)); };
  const std::span<const uint64_t> present_u64 = d.probe_keys_u64(sample),
                                   absent_u64 = d.probe_absent_u64(sample);
  for (const Contender& c : contenders) {
    const size_t fp = d.u64 && c.pass_u64 ? c.pass_u64(d.absent_u64) : c.pass(d.absent_views);
    c.row->fpp_measured =
        d.absent_views.empty() ? 0 : static_cast<double>(fp) / static_cast<double>(d.absent_views.size());
  }
  // Rounds of blocks: in each round every contender in turn has each kind of pass
  // timed passes_per_block(o) times after a warm-up pass of that kind. Within a block the
  // structure has the caches to itself; across rounds the contenders alternate, so a
  // burst of interference (they last seconds) rarely spoils all of one's rounds.
  // At least lookup_passes(o) passes of each kind, and rounds for at least
  // o.min_lookup_seconds: four rounds of a 10^7-key filter take ~0.3 s, less than one
  // burst, which then could spoil them all.
  const int block = passes_per_block(o), min_rounds = lookup_passes(o) / block;
  const double start = now_ns();
  std::vector<std::array<double, 4>> best(contenders.size(), {0, 0, 0, 0});
  for (int r = 0; r < kMaxRounds && (r < min_rounds || now_ns() - start < o.min_lookup_seconds * 1e9); ++r) {
    for (size_t j = 0; j < contenders.size(); ++j) {
      const Contender& c = contenders[j];
      const bool u64 = d.u64 && c.pass_u64 && c.many_u64;
      // contains_many, and the loop of contains giving the same answers, over the same
      // batches of 1024 present keys into the same buffer.
      auto batches = [&](const auto& bytes_fn, const auto& u64_fn) {
        size_t s = 0;
        for (size_t i = 0; i < present.size(); i += 1024) {
          const size_t m = std::min<size_t>(1024, present.size() - i);
          const std::span<bool> o(out.get(), m);
          s += u64 ? u64_fn(present_u64.subspan(i, m), o) : bytes_fn(present.subspan(i, m), o);
        }
        g_sink = s;
      };
      const bool loop_u64 = !u64 || c.loop_u64;
      const std::array<std::function<void()>, 4> kinds = {
          [&] { g_sink = u64 ? c.pass_u64(present_u64) : c.pass(present); },
          [&] { g_sink = u64 ? c.pass_u64(absent_u64) : c.pass(absent); }, [&] { batches(c.many, c.many_u64); },
          [&] { batches(c.loop, c.loop_u64); }};
      for (int k = 0; k < 4; ++k) {
        if (k == 2 && !c.many) continue;
        if (k == 3 && (!c.many || !c.loop || !loop_u64)) continue;
        kinds[k]();  // warm-up
        for (int i = 0; i < block; ++i) {
          const double t = cpu_time_ns(kinds[k]);
          if ((r == 0 && i == 0) || t < best[j][k]) best[j][k] = t;
        }
      }
    }
  }
  for (size_t j = 0; j < contenders.size(); ++j) {
    Row& row = *contenders[j].row;
    row.lookup_pos_ns = per_key(best[j][0], present.size());
    row.lookup_neg_ns = per_key(best[j][1], absent.size());
    if (contenders[j].many) row.batch_lookup_ns = per_key(best[j][2], present.size());
    if (best[j][3] > 0) row.loop_lookup_ns = per_key(best[j][3], present.size());
  }
}

std::string machine_description() {
  std::string model = "unknown CPU";
  std::ifstream cpu("/proc/cpuinfo");
  for (std::string line; std::getline(cpu, line);) {
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  struct utsname u {};
  ::uname(&u);
  return fmt::format("{}, {} cores, LLC {} MiB, {} {}, compiler {} {}", model, ::sysconf(_SC_NPROCESSORS_ONLN),
                     last_level_cache_bytes() >> 20, u.sysname, u.release,
#if defined(__clang__)
                     "clang",
#else
                     "gcc",
#endif
                     __VERSION__);
}

std::string memory_description() {
  // A random cycle through the buffer's cache lines (Sattolo's shuffle), followed for a
  // fixed number of steps: each read waits for the one before.
  auto chase_ns = [](size_t bytes) {
    const size_t lines = bytes / 64, step = 64 / sizeof(uint64_t);
    std::vector<uint64_t, detail::HugePageAllocator<uint64_t>> buf(lines * step);
    std::vector<uint32_t> order(lines);
    for (size_t i = 0; i < lines; ++i) order[i] = static_cast<uint32_t>(i);
    std::mt19937_64 rng(7);
    for (size_t i = lines - 1; i > 0; --i) std::swap(order[i], order[rng() % i]);
    for (size_t i = 0; i < lines; ++i) buf[order[i] * step] = order[(i + 1) % lines] * step;
    constexpr int kSteps = 1 << 20;
    uint64_t at = 0;
    for (int i = 0; i < kSteps / 8; ++i) at = buf[at];  // warm-up
    const double t0 = now_ns();
    for (int i = 0; i < kSteps; ++i) at = buf[at];
    const double t = (now_ns() - t0) / kSteps;
    g_sink = at;
    return t;
  };
  return fmt::format(
      "memory: a dependent random read takes {:.1f} ns in 256 KiB, {:.1f} ns in 8 MiB, {:.1f} ns in 64 MiB (just "
      "now: other tenants of a shared machine change the last two from run to run, and with them every ratio "
      "between structures of different sizes)",
      chase_ns(256 << 10), chase_ns(8 << 20), chase_ns(64 << 20));
}

}  // namespace amq::bench
