// bench/prototypes/bucket_trie.cpp — a standalone design experiment for SuccinctSet
// (issue 5), not part of the library or its build. See docs/design.md, session 15:
// its speed gains did not carry over into the library, whose tuned descent is a far
// stronger baseline than this program's K = 1; coded buckets' size may still matter.
//
// A plain LOUDS trie (top table for levels 1-3, two levels of prefetch) whose subtrees
// of at most K keys are cut into buckets of sorted, front-coded suffixes; K = 1 is the
// library's tail compression. Two bucket encodings:
//  * bytes: per entry a (shared prefix, rest length) byte pair, then the rest's bytes;
//  * coded (K < 0 on the command line): the rest in an optimal alphabetic prefix code
//    (order-preserving, so entries compare as bit strings in key order), the shared
//    prefix counted in symbols; a (shared symbols, rest bits) byte pair per entry.
// It checks every variant against the key list (no false negatives or positives on
// present keys, absent keys, prefixes and extensions), then times the bench's mix
// (present keys and as many absent ones, shuffled) in one process, alternating.
// Sizes are estimates of a real layout: Elias-Fano bucket offsets, a 12-bit header
// per coded entry, the label bitmap, leaf bits and select samples.
//
//   g++ -O3 -march=native -std=c++20 bench/prototypes/bucket_trie.cpp -o bucket_trie
//   ./bucket_trie /usr/share/dict/american-english-insane 5 1 16 -16
//   (word list, rounds, then the K of each variant; NOCHECK=1 skips the checks, for
//   callgrind)
#include <immintrin.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>
#include <time.h>

static double cpu_ns() { timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec * 1e9 + t.tv_nsec; }

// Optimal alphabetic code: lengths by O(n^3) DP over leaf weights, then canonical
// assignment in symbol order (an alphabetic code with given depths exists when the
// depths come from an alphabetic tree; we assign codes by walking the tree).
struct AlphaCode {
  uint32_t code[256];  // MSB-first code value
  uint8_t len[256];
  void build(const std::vector<double>& w) {
    const int n = 256;
    std::vector<double> W(n + 1, 0);
    for (int i = 0; i < n; ++i) W[i + 1] = W[i] + w[i];
    std::vector<std::vector<double>> c(n, std::vector<double>(n, 0));
    std::vector<std::vector<int>> r(n, std::vector<int>(n, 0));
    for (int i = 0; i < n; ++i) r[i][i] = i;
    for (int L = 2; L <= n; ++L)
      for (int i = 0; i + L - 1 < n; ++i) {
        int j = i + L - 1;
        double best = 1e300; int bk = i;
        // Knuth's bound: r[i][j-1] <= k <= r[i+1][j]
        int lo = L == 2 ? i : r[i][j - 1], hi = L == 2 ? i : std::min(r[i + 1][j], j - 1);
        for (int k = lo; k <= hi; ++k) {
          double v = c[i][k] + c[k + 1][j];
          if (v < best) { best = v; bk = k; }
        }
        c[i][j] = best + (W[j + 1] - W[i]);
        r[i][j] = bk;
      }
    // assign
    struct F { int i, j; uint32_t code; int d; };
    std::vector<F> st{{0, n - 1, 0, 0}};
    while (!st.empty()) {
      F f = st.back(); st.pop_back();
      if (f.i == f.j) { code[f.i] = f.code; len[f.i] = (uint8_t)f.d; continue; }
      int k = r[f.i][f.j];
      st.push_back({f.i, k, f.code << 1, f.d + 1});
      st.push_back({k + 1, f.j, (f.code << 1) | 1, f.d + 1});
    }
  }
};

struct BitWriter {
  std::vector<uint8_t> b; uint64_t n = 0;
  void put(uint32_t v, int len) { for (int i = len - 1; i >= 0; --i) { if (n % 8 == 0) b.push_back(0); if ((v >> i) & 1) b[n / 8] |= 0x80 >> (n % 8); ++n; } }
};
// 57+ bits MSB-first starting at bit offset o
static inline uint64_t peek64(const uint8_t* p, uint64_t o) {
  uint64_t x; memcpy(&x, p + (o >> 3), 8); x = __builtin_bswap64(x); return x << (o & 7);
}

struct Trie {
  size_t K = 1; bool coded = false;
  std::vector<uint64_t> louds; uint64_t nbits = 0;
  std::vector<uint8_t> labels;
  std::vector<uint64_t> leaf, bktbit;
  std::vector<uint32_t> bktrank, bktoff;  // bytes mode: byte offsets; coded: offsets into cbuf (bytes)
  std::string bkt;
  std::vector<uint8_t> cbuf;  // coded buckets: [u8 count][count x (u8 sh_sym, u8 rest_bits)][bits...] padded to a byte
  AlphaCode ac; uint64_t lc[256];
  uint64_t nodes = 0;
  std::vector<uint32_t> sel, topst; uint64_t topn = 0;
  double size_bytes = 0;

  static void setb(std::vector<uint64_t>& v, uint64_t i) { if (v.size() <= i / 64) v.resize(i / 64 + 1); v[i / 64] |= 1ull << (i % 64); }
  static bool getb(const std::vector<uint64_t>& v, uint64_t i) { return (v[i / 64] >> (i % 64)) & 1; }

  void build(std::vector<std::string> keys) {
    std::sort(keys.begin(), keys.end()); keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    struct N { size_t lo, hi, d; bool root; };
    std::vector<N> q{{0, keys.size(), 0, true}};
    std::vector<std::pair<uint64_t, std::vector<std::string>>> bl;
    uint64_t top_limit = 0;
    for (size_t h = 0; h < q.size(); ++h) {
      N n = q[h];
      uint64_t v = h;
      if (n.d >= 4 && top_limit == 0) top_limit = h;
      if (!n.root && n.hi - n.lo <= K) {
        std::vector<std::string> s;
        for (size_t i = n.lo; i < n.hi; ++i) s.push_back(keys[i].substr(n.d));
        bl.push_back({v, s});
        setb(louds, nbits); nbits++;
        continue;
      }
      size_t lo = n.lo;
      if (lo < n.hi && keys[lo].size() == n.d) { setb(leaf, v); ++lo; }
      while (lo < n.hi) {
        uint8_t c = keys[lo][n.d]; size_t e = lo;
        while (e < n.hi && (uint8_t)keys[e][n.d] == c) ++e;
        labels.push_back(c); nbits++;
        q.push_back({lo, e, n.d + 1, false});
        lo = e;
      }
      setb(louds, nbits); nbits++;
    }
    nodes = q.size();
    louds.resize(nbits / 64 + 8); leaf.resize(nodes / 64 + 2); bktbit.resize(nodes / 64 + 2);
    // alphabetic code from the suffix bytes past each entry's shared prefix
    std::vector<double> w(256, 0);
    for (auto& [v, s] : bl) { std::string_view prev; for (auto& x : s) { size_t sh = 0; while (sh < prev.size() && sh < x.size() && prev[sh] == x[sh]) ++sh; for (size_t i = sh; i < x.size(); ++i) w[(uint8_t)x[i]] += 1; prev = x; } }
    double tot = 0; for (double x : w) tot += x;
    for (double& x : w) x = std::max(x, tot / 65536.0);  // bound code lengths
    ac.build(w);
    int maxlen = 0; for (int i = 0; i < 256; ++i) { maxlen = std::max(maxlen, (int)ac.len[i]); lc[i] = (uint64_t)ac.code[i] << (64 - ac.len[i]); }
    double payload = 0, hdr = 0, cbits = 0, chdr = 0;
    bktoff.push_back(0);
    for (auto& [v, s] : bl) {
      setb(bktbit, v);
      if (!coded) {
        std::string b, prev;
        for (auto& x : s) {
          size_t sh = 0; while (sh < prev.size() && sh < x.size() && prev[sh] == x[sh] && sh < 255) ++sh;
          b.push_back((char)sh); b.push_back((char)(x.size() - sh)); b += x.substr(sh);
          payload += x.size() - sh; hdr += s.size() == 1 ? 0 : ((sh < 16 && x.size() - sh < 16) ? 1 : 3);
          prev = x;
        }
        bkt += b; bktoff.push_back(bkt.size());
      } else {
        std::vector<uint8_t> h; BitWriter bw; std::string prev;
        h.push_back((uint8_t)s.size());
        for (auto& x : s) {
          size_t sh = 0; while (sh < prev.size() && sh < x.size() && prev[sh] == x[sh] && sh < 255) ++sh;
          uint64_t nb = 0; for (size_t i = sh; i < x.size(); ++i) { bw.put(ac.code[(uint8_t)x[i]], ac.len[(uint8_t)x[i]]); nb += ac.len[(uint8_t)x[i]]; }
          if (nb >= 255) { fprintf(stderr, "long entry\n"); exit(1); }
          h.push_back((uint8_t)sh); h.push_back((uint8_t)nb);
          cbits += nb; chdr += s.size() == 1 ? 0 : 12;
          prev = x;
        }
        cbuf.insert(cbuf.end(), h.begin(), h.end()); cbuf.insert(cbuf.end(), bw.b.begin(), bw.b.end());
        bktoff.push_back(cbuf.size());
      }
    }
    bkt.append(64, '\0'); cbuf.resize(cbuf.size() + 64);
    bktrank.resize(bktbit.size() + 1);
    for (size_t w2 = 0; w2 < bktbit.size(); ++w2) bktrank[w2 + 1] = bktrank[w2] + __builtin_popcountll(bktbit[w2]);
    uint64_t ones = 0;
    for (uint64_t i = 0; i < nbits; ++i) if (getb(louds, i)) { if (ones % 128 == 0) sel.push_back(i); ++ones; }
    topn = top_limit;
    for (uint64_t v = 0; v < topn; ++v) topst.push_back(v == 0 ? 0 : select(v - 1) + 1);
    double bb = coded ? (cbits + chdr) / 8 : payload + hdr;
    double lg = std::max(0.0, std::ceil(std::log2(bb / std::max<double>(1, bl.size()))));
    size_bytes = labels.size() + nbits / 8.0 + nodes / 8.0 * 2.03 + bl.size() * (2 + lg) / 8.0 * 1.05 + bb + sel.size() * 4.0 + (coded ? 1024 : 0);
    fprintf(stderr, "K=%zu coded=%d nodes %lu buckets %zu maxcode %d payload %.0f B, headers %.0f B\n", K, coded, nodes, bl.size(), maxlen,
            coded ? cbits / 8 : payload, coded ? chdr / 8 : hdr);
  }
  uint64_t select(uint64_t j) const {
    uint64_t p = sel[j >> 7]; uint64_t w = p >> 6;
    uint64_t x = louds[w] & ~((1ull << (p & 63)) - 1); uint64_t r = j & 127;
    for (;;) { uint64_t pc = __builtin_popcountll(x); if (r < pc) return w * 64 + __builtin_ctzll(_pdep_u64(1ull << r, x)); r -= pc; x = louds[++w]; }
  }
  uint64_t bucket_index(uint64_t v) const { return bktrank[v / 64] + __builtin_popcountll(bktbit[v / 64] & ((1ull << (v % 64)) - 1)); }
  bool bucket_bytes(uint64_t v, const uint8_t* p, size_t n) const {
    uint64_t t = bucket_index(v);
    const uint8_t* b = (const uint8_t*)bkt.data() + bktoff[t];
    const uint8_t* e = (const uint8_t*)bkt.data() + bktoff[t + 1];
    size_t m = 0;
    while (b < e) {
      size_t sh = b[0], len = b[1]; const uint8_t* s = b + 2; b = s + len;
      if (sh < m) return false;
      if (sh > m) continue;
      size_t i = 0;
      while (i < len && m + i < n && s[i] == p[m + i]) ++i;
      if (i == len && m + i == n) return true;
      if (m + i == n) return false;
      if (i < len && s[i] > p[m + i]) return false;
      m += i;
    }
    return false;
  }
  bool bucket_coded(uint64_t v, const uint8_t* p, size_t n) const {
    // the query suffix coded into big-endian 64-bit words (MSB first)
    uint64_t qw[80]; uint16_t qpos[300];
    if (n > 256) return false;  // prototype
    uint64_t qn = 0, acc = 0; size_t wi = 0; qpos[0] = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t c = lc[p[i]]; const unsigned l = ac.len[p[i]];
      const unsigned used = qn & 63;
      acc |= c >> used;
      if (used + l >= 64) { qw[wi++] = acc; acc = used ? c << (64 - used) : 0; }
      qn += l; qpos[i + 1] = (uint16_t)qn;
    }
    qw[wi] = acc; qw[wi + 1] = 0; qw[wi + 2] = 0;
    auto qpeek = [&](uint64_t o) {
      const uint64_t w = o >> 6, r = o & 63;
      return r == 0 ? qw[w] : (qw[w] << r) | (qw[w + 1] >> (64 - r));
    };
    uint64_t t = bucket_index(v);
    const uint8_t* b = cbuf.data() + bktoff[t];
    const size_t cnt = b[0];
    const uint8_t* h = b + 1;
    const uint8_t* bits = h + 2 * cnt;
    uint64_t bo = 0;
    size_t m = 0;
    uint64_t qo = 0, qwin = qpeek(0), qrest = qn;
    for (size_t e = 0; e < cnt; ++e) {
      const size_t sh = h[2 * e], len = h[2 * e + 1];
      const uint64_t at = bo; bo += len;
      if (sh < m) return false;
      if (sh > m) continue;
      const uint64_t lim = std::min<uint64_t>(len, qrest);
      uint64_t a = peek64(bits, at);
      uint64_t take = std::min<uint64_t>(56, lim);
      uint64_t d = (a ^ qwin) & ~(~0ull >> take);
      uint64_t i = 0;
      if (!d && lim > 56) {  // rare: a long common run
        for (i = 56; i < lim; i += take) {
          a = peek64(bits, at + i);
          take = std::min<uint64_t>(56, lim - i);
          d = (a ^ qpeek(qo + i)) & ~(~0ull >> take);
          if (d) break;
        }
        if (!d) i = lim;
      }
      if (!d) {
        if (len == qrest) return true;
        if (qrest < len) return false;
        while (qpos[m] < qo + len) ++m;
      } else {
        const unsigned k = __builtin_clzll(d);
        if ((a << k) >> 63) return false;
        const uint64_t at_bit = qo + (i < 56 ? 0 : i) + k;
        if (qpos[m + 1] > at_bit) continue;  // m unchanged
        while (qpos[m + 1] <= at_bit) ++m;
      }
      qo = qpos[m]; qwin = qpeek(qo); qrest = qn - qo;
    }
    return false;
  }
  static uint64_t find(const uint8_t* lab, uint64_t k, uint8_t c) {
    if (k <= 16) {
      __m128i x = _mm_loadu_si128((const __m128i*)lab);
      uint32_t m = _mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8((char)c)));
      return __builtin_ctz((m | (1u << k)) & ((2u << k) - 1));
    }
    for (uint64_t o = 0; o < k; ++o) if (lab[o] == c) return o;
    return k;
  }
  bool contains(std::string_view key) const {
    const uint8_t* p = (const uint8_t*)key.data(); const uint8_t* end = p + key.size();
    uint64_t v = 0, st = 0;
    for (;; ++p) {
      uint64_t after = louds[st >> 6] >> (st & 63);
      uint64_t k;
      if (after) k = __builtin_ctzll(after);
      else { uint64_t q = st; while (!getb(louds, q)) ++q; k = q - st; }
      if (k == 0) return v != 0 && (coded ? bucket_coded(v, p, end - p) : bucket_bytes(v, p, end - p));
      if (p == end) return getb(leaf, v);
      const uint8_t* lab = labels.data() + (st - v);
      uint64_t j = find(lab, k, *p);
      if (j == k) return false;
      v = st - v + 1 + j;
      uint64_t cs = v - 1; uint64_t sp = sel[cs >> 7];
      _mm_prefetch((const char*)&louds[sp >> 6], _MM_HINT_T0);
      const uint64_t gl = (sp - (cs & ~127ull)) + (cs & 127);
      _mm_prefetch((const char*)(labels.data() + gl), _MM_HINT_T0);
      if (gl + 1 < nodes) {
        uint64_t gsp = sel[gl >> 7];
        _mm_prefetch((const char*)&louds[gsp >> 6], _MM_HINT_T0);
        _mm_prefetch((const char*)(labels.data() + (gsp - (gl & ~127ull)) + (gl & 127)), _MM_HINT_T0);
      }
      if (v < topn) { st = topst[v]; continue; }
      st = select(v - 1) + 1;
    }
  }
};

int main(int argc, char** argv) {
  std::ifstream in(argv[1]);
  int rounds = argc > 2 ? atoi(argv[2]) : 5;
  std::vector<int> Ks;  // negative: coded
  for (int i = 3; i < argc; ++i) Ks.push_back(atoi(argv[i]));
  std::vector<std::string> keys; std::set<std::string> seen; std::string line;
  while (std::getline(in, line)) if (!line.empty() && seen.insert(line).second) keys.push_back(line);
  uint64_t raw = 0; for (auto& k : keys) raw += k.size();
  std::vector<std::unique_ptr<Trie>> ts;
  for (int K : Ks) { ts.emplace_back(new Trie); ts.back()->K = std::abs(K); ts.back()->coded = K < 0; ts.back()->build(keys); }
  std::mt19937_64 rng(42);
  std::vector<std::string> absent;
  for (uint64_t i = 0; absent.size() < 262144; ++i) { std::string k = keys[rng() % keys.size()] + "~" + std::to_string(i); if (!seen.count(k)) absent.push_back(k); }
  size_t sample = std::min<size_t>(262144, keys.size());
  std::vector<std::string> order;
  for (size_t i = 0; i < sample; ++i) { order.push_back(keys[i * keys.size() / sample]); order.push_back(absent[i]); }
  std::mt19937_64 r2(11); std::shuffle(order.begin(), order.end(), r2);
  std::vector<std::string_view> views(order.begin(), order.end());
  if (!getenv("NOCHECK")) for (auto& t : ts) {
    for (auto& k : keys) if (!t->contains(k)) { fprintf(stderr, "K=%zu FN %s\n", t->K, k.c_str()); return 1; }
    for (auto& k : absent) if (t->contains(k)) { fprintf(stderr, "K=%zu FP %s\n", t->K, k.c_str()); return 1; }
    for (auto& k : keys) {
      for (std::string s : {k.substr(0, k.size() - 1), k + "a", k + "\x01", k.substr(0, k.size() / 2), k.substr(0, k.size() - 1) + "\xff"})
        if (t->contains(s) != (bool)seen.count(s)) { fprintf(stderr, "K=%zu coded %d wrong on %s\n", t->K, t->coded, s.c_str()); return 1; }
    }
  }
  std::vector<std::vector<double>> tm(ts.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t j = 0; j < ts.size(); ++j) {
      double b = 1e18;
      for (int rep = 0; rep < 3; ++rep) {
        double t0 = cpu_ns(); size_t h = 0;
        for (auto& k : views) h += ts[j]->contains(k);
        b = std::min(b, (cpu_ns() - t0) / views.size());
        if (h != sample) { fprintf(stderr, "bad %zu\n", h); return 1; }
      }
      tm[j].push_back(b);
    }
  for (size_t j = 0; j < ts.size(); ++j) {
    std::sort(tm[j].begin(), tm[j].end());
    printf("K=%-3zu coded %d size %.2f%% of raw  mix med %.1f min %.1f\n", ts[j]->K, (int)ts[j]->coded, 100.0 * ts[j]->size_bytes / raw, tm[j][rounds / 2], tm[j][0]);
  }
}
