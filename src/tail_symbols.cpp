// The symbol table of amq/detail/tail_symbols.hpp: learning one, coding with it.
#include "amq/detail/tail_symbols.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

namespace amq::detail {

bool TailSymbols::valid(const std::byte* at) noexcept {
  const auto* len = reinterpret_cast<const uint8_t*>(at);
  if (len[kEscape] != 0) return false;
  for (size_t c = 0; c < kCodes; ++c) {
    if (len[c] > 8) return false;
    uint64_t w;
    std::memcpy(&w, at + 256 + 8 * c, 8);
    if (len[c] < 8 && (w >> (8 * len[c])) != 0) return false;
  }
  return true;
}

TailEncoder::TailEncoder(const std::byte* table) : t_(table), first2_(65537) {
  single_.fill(-1);
  for (size_t c = 0; c < TailSymbols::kCodes; ++c) {
    const auto code = static_cast<uint8_t>(c);
    const uint8_t l = t_.length(code);
    if (l == 1) single_[t_.symbol(code) & 0xff] = static_cast<int16_t>(c);
    if (l >= 2) by_first2_.push_back({t_.symbol(code), l, code});
  }
  // By first two bytes, then longest first; first2_[k]: the symbols whose two bytes
  // are below k.
  auto key = [](const Candidate& c) { return c.symbol & 0xffff; };
  std::sort(by_first2_.begin(), by_first2_.end(), [&](const Candidate& x, const Candidate& y) {
    return key(x) != key(y) ? key(x) < key(y) : x.len > y.len;
  });
  for (const Candidate& c : by_first2_) ++first2_[key(c) + 1];
  for (size_t k = 1; k <= 65536; ++k) first2_[k] = static_cast<uint8_t>(first2_[k] + first2_[k - 1]);
}

TailEncoder::Match TailEncoder::match(std::string_view s) const noexcept {
  // s's first (up to) 8 bytes once; each candidate of two bytes or more that starts
  // with s's first two is then a masked compare, longest first; else the one-byte
  // symbol of its first byte, if any.
  uint64_t x = 0;
  const size_t have = std::min<size_t>(s.size(), 8);
  if (have == 8) {
    std::memcpy(&x, s.data(), 8);
  } else {
    for (size_t i = 0; i < have; ++i) x |= uint64_t{static_cast<uint8_t>(s[i])} << (8 * i);
  }
  if (have >= 2) {
    const size_t k = x & 0xffff;
    for (size_t i = first2_[k], e = first2_[k + 1]; i < e; ++i) {
      const Candidate& c = by_first2_[i];
      if (c.len > have) continue;
      const uint64_t mask = c.len == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * c.len)) - 1;
      if ((x & mask) == c.symbol) return {c.code, c.len};
    }
  }
  const int16_t c = single_[x & 0xff];
  if (c >= 0) return {static_cast<uint8_t>(c), 1};
  return {0, 0};
}

size_t TailEncoder::size(std::string_view s) const noexcept {
  size_t n = 0;
  while (!s.empty()) {
    const Match m = match(s);
    n += m.len ? 1 : 2;
    s.remove_prefix(m.len ? m.len : 1);
  }
  return n;
}

uint8_t* TailEncoder::encode(std::string_view s, uint8_t* out) const noexcept {
  while (!s.empty()) {
    const Match m = match(s);
    if (m.len) {
      *out++ = m.code;
      s.remove_prefix(m.len);
    } else {
      *out++ = TailSymbols::kEscape;
      *out++ = static_cast<uint8_t>(s[0]);
      s.remove_prefix(1);
    }
  }
  return out;
}

namespace {

// A symbol's bytes as a little-endian word and its length.
using Sym = std::pair<uint64_t, uint8_t>;

void write_table(const std::vector<Sym>& syms, std::byte* out) {
  std::memset(out, 0, TailSymbols::kBytes);
  for (size_t c = 0; c < syms.size() && c < TailSymbols::kCodes; ++c) {
    out[c] = static_cast<std::byte>(syms[c].second);
    std::memcpy(out + 256 + 8 * c, &syms[c].first, 8);
  }
}

constexpr size_t kTokens = 512;  // codes 0..254 (255 unused), then 256 + byte

// How often each token (a symbol, or an escaped byte) and each pair of tokens in a row
// occur when the sample is coded with one table.
struct TokenCounts {
  std::vector<uint32_t> one = std::vector<uint32_t>(kTokens);
  std::vector<uint32_t> pair = std::vector<uint32_t>(kTokens * kTokens);  // [a * kTokens + b]
  std::vector<uint16_t> tokens;                                           // one tail's, reused
};

// The sample side by side in `arena`, as views into it: five rounds read it, and its
// views into the keys miss the cache at nearly every tail.
std::vector<std::string_view> side_by_side(std::span<const std::string_view> sample, std::string& arena) {
  size_t total = 0;
  for (std::string_view s : sample) total += s.size();
  arena.reserve(total);
  for (std::string_view s : sample) arena += s;
  std::vector<std::string_view> tails(sample.size());
  for (size_t i = 0, at = 0; i < sample.size(); at += sample[i].size(), ++i)
    tails[i] = std::string_view(arena).substr(at, sample[i].size());
  return tails;
}

void count_tokens(const std::vector<std::string_view>& tails, const std::byte* table, TokenCounts& c) {
  const TailEncoder enc(table);
  std::fill(c.one.begin(), c.one.end(), 0);
  std::fill(c.pair.begin(), c.pair.end(), 0);
  for (std::string_view s : tails) {
    c.tokens.clear();
    while (!s.empty()) {
      const TailEncoder::Match m = enc.match(s);
      c.tokens.push_back(m.len ? m.code : static_cast<uint16_t>(256 + static_cast<uint8_t>(s[0])));
      s.remove_prefix(m.len ? m.len : 1);
    }
    for (size_t i = 0; i < c.tokens.size(); ++i) {
      ++c.one[c.tokens[i]];
      if (i > 0) ++c.pair[c.tokens[i - 1] * kTokens + c.tokens[i]];
    }
  }
}

// Every candidate with its gain: each token, and each pair of tokens joined and cut to
// 8 bytes, weighed by the bytes it covered (count times length); a one-byte symbol by
// twice its count, the code bytes it saves over escaping its byte (weighed by its
// length alone, common bytes lost their codes to rarer pairs and cost two bytes each).
// A symbol may appear more than once.
std::vector<std::pair<Sym, uint64_t>> candidate_gains(const TokenCounts& c, const std::byte* table) {
  const TailSymbols t(table);
  auto sym_of = [&](uint16_t tok) -> Sym {
    if (tok >= 256) return {tok - 256u, 1};
    return {t.symbol(static_cast<uint8_t>(tok)), t.length(static_cast<uint8_t>(tok))};
  };
  std::vector<std::pair<Sym, uint64_t>> gains;
  for (uint16_t a = 0; a < kTokens; ++a) {
    if (c.one[a] == 0) continue;
    const Sym x = sym_of(a);
    gains.push_back({x, uint64_t{c.one[a]} * (x.second == 1 ? 2 : x.second)});
    if (x.second == 8) continue;  // a pair would be cut back to x
    for (uint16_t b = 0; b < kTokens; ++b) {
      const uint32_t n = c.pair[a * kTokens + b];
      if (n == 0) continue;
      const Sym y = sym_of(b);
      const uint8_t l = static_cast<uint8_t>(std::min(8, x.second + y.second));
      uint64_t w = x.first | (y.first << (8 * x.second));
      if (l < 8) w &= (uint64_t{1} << (8 * l)) - 1;
      gains.push_back({{w, l}, uint64_t{n} * l});
    }
  }
  return gains;
}

// The kCodes symbols of the largest gains, those of the same bytes summed first (two
// pairs of tokens can join to the same symbol) by a sort: a map took most of a round.
std::vector<Sym> best_symbols(std::vector<std::pair<Sym, uint64_t>> gains) {
  std::sort(gains.begin(), gains.end());
  std::vector<std::pair<uint64_t, Sym>> ranked;
  for (size_t i = 0; i < gains.size();) {
    uint64_t g = 0;
    const Sym sym = gains[i].first;
    for (; i < gains.size() && gains[i].first == sym; ++i) g += gains[i].second;
    ranked.emplace_back(g, sym);
  }
  const size_t keep = std::min(ranked.size(), TailSymbols::kCodes);
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep), ranked.end(),
                    [](const auto& x, const auto& y) { return x.first != y.first ? x.first > y.first : x.second < y.second; });
  std::vector<Sym> syms;
  for (size_t i = 0; i < keep; ++i) syms.push_back(ranked[i].second);
  return syms;
}

}  // namespace

// Each round codes the sample with the table so far, counting every token and every
// pair of tokens in a row; the next table keeps the 255 candidates (the tokens and the
// pairs joined, cut to 8 bytes) that covered the most bytes.
void TailSymbols::train(std::span<const std::string_view> sample, std::byte* out) {
  std::string arena;
  const std::vector<std::string_view> tails = side_by_side(sample, arena);
  TokenCounts counts;
  std::vector<Sym> syms;
  for (int round = 0; round < 5; ++round) {
    write_table(syms, out);
    count_tokens(tails, out, counts);
    syms = best_symbols(candidate_gains(counts, out));
  }
  write_table(syms, out);
}

}  // namespace amq::detail
