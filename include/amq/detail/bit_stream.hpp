// amq/detail/bit_stream.hpp — MSB-first bit writer and bounds-checked bit reader.
//
// Bits are packed most significant first: the first bit written is bit 7 of byte 0.
// This is the order of the Golomb-coded formats amq reads and writes (the seed's
// worked example, BIP158 block filters, HTTP Cache Digests). BitWriter pads the last
// byte with zero bits; BitReader never reads past its end bit and throws
// Errc::truncated when a value would run over it.
//
//   amq::detail::BitWriter w;  w.put(0b101, 3);  w.put_run(true, 4);
//   std::vector<std::byte> bytes = w.take();          // 1011 1100
//   amq::detail::BitReader r(bytes, 0, 7);  r.get(3);  // 5
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "amq/error.hpp"

namespace amq::detail {

// Big-endian 64-bit load.
inline uint64_t load_be64(const std::byte* p) noexcept {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}

class BitWriter {
 public:
  // Appends the low `n` bits of `v` (n <= 64), most significant first.
  void put(uint64_t v, unsigned n) {
    if (n == 0) return;
    if (n < 64) v &= (uint64_t{1} << n) - 1;
    if (fill_ + n <= 64) {
      acc_ |= v << (64 - fill_ - n);
      fill_ += n;
      if (fill_ == 64) flush_word();
    } else {
      const unsigned first = 64 - fill_;
      acc_ |= v >> (n - first);
      flush_word();
      n -= first;
      acc_ = v << (64 - n);
      fill_ = n;
    }
  }
  // Appends `count` copies of `bit`.
  void put_run(bool bit, uint64_t count) {
    const uint64_t ones = bit ? ~uint64_t{0} : 0;
    for (; count >= 32; count -= 32) put(ones, 32);
    put(ones, static_cast<unsigned>(count));
  }
  void put_bit(bool bit) { put(bit ? 1 : 0, 1); }

  uint64_t bit_size() const noexcept { return uint64_t{buf_.size()} * 8 + fill_; }

  // The bytes, the last one padded with zero bits. The writer is left empty.
  std::vector<std::byte> take() {
    for (unsigned i = 0; i < fill_; i += 8) buf_.push_back(static_cast<std::byte>(acc_ >> (56 - i)));
    acc_ = 0;
    fill_ = 0;
    return std::move(buf_);
  }

 private:
  void flush_word() {
    for (int s = 56; s >= 0; s -= 8) buf_.push_back(static_cast<std::byte>(acc_ >> s));
    acc_ = 0;
    fill_ = 0;
  }
  std::vector<std::byte> buf_;
  uint64_t acc_ = 0;   // pending bits, left-aligned
  unsigned fill_ = 0;  // how many of them
};

class BitReader {
 public:
  // Reads bits [bit_begin, bit_end) of `data`; bit_end is clamped to the data's size.
  BitReader(std::span<const std::byte> data, uint64_t bit_begin, uint64_t bit_end) noexcept
      : data_(data), pos_(bit_begin), end_(std::min<uint64_t>(bit_end, uint64_t{data.size()} * 8)) {
    if (pos_ > end_) pos_ = end_;
  }
  explicit BitReader(std::span<const std::byte> data) noexcept : BitReader(data, 0, uint64_t{data.size()} * 8) {}

  uint64_t position() const noexcept { return pos_; }
  uint64_t end() const noexcept { return end_; }
  uint64_t remaining() const noexcept { return end_ - pos_; }

  // The next `n` bits (n <= 64) as an integer. Throws Errc::truncated past the end.
  uint64_t get(unsigned n) {
    if (n == 0) return 0;
    if (n > remaining()) throw Error(Errc::truncated, "bit stream ends inside a value");
    uint64_t v;
    if (n <= 56) {
      v = peek() >> (64 - n);
    } else {
      v = (peek() >> 32) << (n - 32);
      pos_ += 32;
      v |= peek() >> (64 - (n - 32));
      pos_ -= 32;
    }
    pos_ += n;
    return v;
  }
  bool get_bit() { return get(1) != 0; }

  // Counts and consumes the bits equal to `bit` up to the next opposite bit, and
  // consumes that one too. Throws Errc::truncated if the end comes first.
  uint64_t get_run(bool bit) {
    uint64_t count = 0;
    for (;;) {
      if (pos_ >= end_) throw Error(Errc::truncated, "bit stream ends inside a unary code");
      const uint64_t avail = std::min<uint64_t>(56, remaining());
      uint64_t w = peek();
      if (bit) w = ~w;
      // Only the first `avail` bits are meaningful; force a stop just after them.
      w |= uint64_t{1} << (63 - avail);
      const unsigned n = static_cast<unsigned>(std::countl_zero(w));
      if (n < avail) {
        count += n;
        pos_ += n + 1;
        return count;
      }
      count += avail;
      pos_ += avail;
    }
  }

  // True if every bit from here to the end is zero.
  bool rest_is_zero() const noexcept {
    BitReader r = *this;
    while (r.remaining() > 0) {
      const unsigned n = static_cast<unsigned>(std::min<uint64_t>(56, r.remaining()));
      if (r.peek() >> (64 - n)) return false;
      r.pos_ += n;
    }
    return true;
  }

 private:
  // At least 56 bits from pos_, left-aligned; bytes past the data read as zero.
  uint64_t peek() const noexcept {
    const uint64_t byte = pos_ >> 3;
    const unsigned shift = static_cast<unsigned>(pos_ & 7);
    uint64_t v;
    if (byte + 8 <= data_.size()) {
      v = load_be64(data_.data() + byte);
    } else {
      v = 0;
      for (uint64_t i = 0; i < 8; ++i)
        v = (v << 8) | (byte + i < data_.size() ? static_cast<uint8_t>(data_[byte + i]) : 0u);
    }
    return v << shift;
  }

  std::span<const std::byte> data_;
  uint64_t pos_;
  uint64_t end_;
};

// "0101..." — one character per bit, for tests and debugging.
inline std::string bit_string(std::span<const std::byte> data, uint64_t bits) {
  std::string s;
  s.reserve(bits);
  for (uint64_t i = 0; i < bits && i / 8 < data.size(); ++i)
    s += ((static_cast<uint8_t>(data[i / 8]) >> (7 - i % 8)) & 1) ? '1' : '0';
  return s;
}

}  // namespace amq::detail
