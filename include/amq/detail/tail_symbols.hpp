// amq/detail/tail_symbols.hpp — a static symbol table for short strings (the
// SuccinctSet's tails): up to 255 symbols of 1-8 bytes, each written as a one-byte
// code, and an escape code (255) followed by a literal byte for anything else. The
// idea is FSST's (Boncz, Neumann, Leis, "FSST: Fast Random Access String
// Compression", VLDB 2020): every string is coded on its own, so any one decodes
// without its neighbours, and the table is learnt from a sample by a few rounds of
// coding it and keeping the symbols (and pairs of symbols joined) that cover the most
// bytes. Written here from that description.
//
// On disk (and in memory, read in place): 256 length bytes (0 for an unused code; the
// escape's is 0), then 255 little-endian words, symbol c's bytes from the low byte
// up, zero past its length: kBytes in all, a multiple of 8.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace amq::detail {

// Whether [a, a + n) and [b, b + n) hold the same bytes: a byte loop for the short
// strings tails mostly are (a memcmp call costs more there), memcmp past 16 bytes.
[[gnu::always_inline]] inline bool short_bytes_equal(const uint8_t* a, const uint8_t* b, size_t n) noexcept {
  if (n > 16) return std::memcmp(a, b, n) == 0;
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

class TailSymbols {
 public:
  static constexpr size_t kCodes = 255;  // symbol codes 0..254
  static constexpr uint8_t kEscape = 255;
  static constexpr size_t kBytes = 256 + 8 * kCodes;

  TailSymbols() = default;
  // A view of a table of kBytes bytes at `at` (8-aligned), already checked by valid().
  explicit TailSymbols(const std::byte* at) noexcept
      : len_(reinterpret_cast<const uint8_t*>(at)), sym_(reinterpret_cast<const uint64_t*>(at + 256)) {}
  // Whether the kBytes at `at` form a table: lengths of at most 8, the escape's 0, and
  // zero bytes past each symbol's length.
  static bool valid(const std::byte* at) noexcept;

  // Learns a table from `sample` (strings coded one by one) and writes it to out
  // (kBytes bytes).
  static void train(std::span<const std::string_view> sample, std::byte* out);

  bool empty() const noexcept { return len_ == nullptr; }
  uint8_t length(uint8_t code) const noexcept { return len_[code]; }
  uint64_t symbol(uint8_t code) const noexcept { return sym_[code]; }

  // Whether the code bytes [c, c + n) form a valid coding: no unused code and no
  // escape without its byte.
  bool valid_codes(const uint8_t* c, size_t n) const noexcept {
    for (size_t i = 0; i < n; ++i) {
      if (c[i] == kEscape) {
        if (++i == n) return false;
      } else if (len_[c[i]] == 0) {
        return false;
      }
    }
    return true;
  }

  // Whether the code bytes [c, c + n) (a valid coding) spell exactly the bytes
  // [p, p + m). Up to 8 codes (most tails) are decoded into a buffer a word a symbol,
  // then compared; longer codings are compared code by code.
  [[gnu::always_inline]] bool equals(const uint8_t* c, size_t n, const uint8_t* p, size_t m) const noexcept {
    if (n <= 8) {
      uint8_t buf[72];
      size_t o = 0;
      for (size_t i = 0; i < n; ++i) {
        const uint8_t code = c[i];
        if (code == kEscape) [[unlikely]] {
          buf[o++] = c[++i];
          continue;
        }
        std::memcpy(buf + o, sym_ + code, 8);
        o += len_[code];
      }
      return o == m && short_bytes_equal(buf, p, m);
    }
    size_t at = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint8_t code = c[i];
      if (code == kEscape) {
        if (at >= m || p[at] != c[++i]) return false;
        ++at;
        continue;
      }
      const size_t l = len_[code];
      if (m - at < l) return false;
      uint64_t x;
      if (m - at >= 8) {
        std::memcpy(&x, p + at, 8);
        x &= l == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * l)) - 1;
      } else {
        x = 0;
        for (size_t b = 0; b < l; ++b) x |= uint64_t{p[at + b]} << (8 * b);
      }
      if (x != sym_[code]) return false;
      at += l;
    }
    return at == m;
  }

  // The order of the bytes that [c, c + n) (a valid coding) spell against [p, p + m),
  // as unsigned bytes with a prefix first: < 0, 0 or > 0. Symbol by symbol, without
  // decoding into a string (rank() and seek() compare a key's rest with a tail).
  int compare(const uint8_t* c, size_t n, const uint8_t* p, size_t m) const noexcept {
    size_t at = 0;
    for (size_t i = 0; i < n; ++i) {
      size_t l;
      const uint8_t* sym = bytes_of(c, i, l);
      const size_t k = l < m - at ? l : m - at;
      for (size_t b = 0; b < k; ++b)
        if (sym[b] != p[at + b]) return sym[b] < p[at + b] ? -1 : 1;
      if (k < l) return 1;  // [p, p + m) ends inside this symbol: a prefix of the tail
      at += l;
    }
    return at == m ? 0 : -1;
  }

  // Appends the bytes that [c, c + n) code to out.
  void append(const uint8_t* c, size_t n, std::string& out) const {
    for (size_t i = 0; i < n; ++i) {
      size_t l;
      const uint8_t* sym = bytes_of(c, i, l);
      out.append(reinterpret_cast<const char*>(sym), l);
    }
  }

 private:
  // The bytes that the code at c[i] stands for, and their count l: an escape's literal
  // (i moves onto it) or the symbol's bytes, in file order.
  const uint8_t* bytes_of(const uint8_t* c, size_t& i, size_t& l) const noexcept {
    if (c[i] == kEscape) {
      l = 1;
      return c + ++i;
    }
    l = len_[c[i]];
    return reinterpret_cast<const uint8_t*>(sym_ + c[i]);
  }

  const uint8_t* len_ = nullptr;
  const uint64_t* sym_ = nullptr;
};

// Codes strings with a table: longest symbol first at each place.
class TailEncoder {
 public:
  explicit TailEncoder(const std::byte* table);
  // The coded size of s.
  size_t size(std::string_view s) const noexcept;
  // Writes s's codes at out; returns the end.
  uint8_t* encode(std::string_view s, uint8_t* out) const noexcept;

  // The longest symbol that s (not empty) starts with (length 0: none).
  struct Match {
    uint8_t code, len;
  };
  Match match(std::string_view s) const noexcept;

 private:
  TailSymbols t_;
  // The symbols of two bytes or more by their first two (little-endian), longest
  // first: by_first2_[first2_[k] .. first2_[k + 1]) (at most 255 in all, so a byte
  // each: the index, 64 KiB, stays in L2); the one-byte code of each byte (-1: none).
  struct Candidate {
    uint64_t symbol;
    uint8_t len, code;
  };
  std::vector<uint8_t> first2_;
  std::vector<Candidate> by_first2_;
  std::array<int16_t, 256> single_{};
};

}  // namespace amq::detail
