// amq/detail/byte_io.hpp — bounds-checked little- and big-endian byte readers and
// writers. Every loader in amq reads through ByteReader, so a short or hostile input
// becomes Errc::truncated instead of an out-of-bounds read.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "amq/error.hpp"

namespace amq::detail {

static_assert(std::endian::native == std::endian::little, "amq assumes a little-endian host");

inline uint64_t load_le64(const std::byte* p) noexcept {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint32_t load_le32(const std::byte* p) noexcept {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline void store_le64(std::byte* p, uint64_t v) noexcept { std::memcpy(p, &v, 8); }

class ByteWriter {
 public:
  void u8(uint8_t v) { buf_.push_back(std::byte{v}); }
  void u16(uint16_t v) { put_le(v); }
  void u32(uint32_t v) { put_le(v); }
  void u64(uint64_t v) { put_le(v); }
  void f64(double v) { put_le(std::bit_cast<uint64_t>(v)); }
  void u32_be(uint32_t v) { put_le(__builtin_bswap32(v)); }
  void u64_be(uint64_t v) { put_le(__builtin_bswap64(v)); }
  void bytes(std::span<const std::byte> b) { buf_.insert(buf_.end(), b.begin(), b.end()); }
  void bytes(std::string_view s) { bytes(std::as_bytes(std::span(s.data(), s.size()))); }
  // Zero bytes up to the next multiple of `alignment`.
  void pad_to(size_t alignment) {
    while (buf_.size() % alignment != 0) buf_.push_back(std::byte{0});
  }
  size_t size() const noexcept { return buf_.size(); }
  std::vector<std::byte>& buffer() noexcept { return buf_; }
  std::vector<std::byte> take() noexcept { return std::move(buf_); }

 private:
  template <class T>
  void put_le(T v) {
    const size_t at = buf_.size();
    buf_.resize(at + sizeof(T));
    std::memcpy(buf_.data() + at, &v, sizeof(T));
  }
  std::vector<std::byte> buf_;
};

class ByteReader {
 public:
  // `what` names the thing being read, for error messages ("bloom filter params").
  explicit ByteReader(std::span<const std::byte> data, std::string_view what = "input")
      : data_(data), what_(what) {}

  uint8_t u8() { return get<uint8_t>(); }
  uint16_t u16() { return get<uint16_t>(); }
  uint32_t u32() { return get<uint32_t>(); }
  uint64_t u64() { return get<uint64_t>(); }
  double f64() { return std::bit_cast<double>(get<uint64_t>()); }
  uint32_t u32_be() { return __builtin_bswap32(get<uint32_t>()); }
  uint64_t u64_be() { return __builtin_bswap64(get<uint64_t>()); }
  std::span<const std::byte> bytes(uint64_t n) {
    need(n);
    auto s = data_.subspan(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return s;
  }
  void skip(uint64_t n) { (void)bytes(n); }
  size_t remaining() const noexcept { return data_.size() - pos_; }
  size_t position() const noexcept { return pos_; }
  // Throws Errc::corrupt if bytes are left over: every byte of a structure is accounted for.
  void expect_end() const {
    if (remaining() != 0)
      throw Error(Errc::corrupt, std::string(what_) + ": " + std::to_string(remaining()) +
                                     " unexpected trailing bytes");
  }

 private:
  void need(uint64_t n) const {
    if (n > remaining())
      throw Error(Errc::truncated, std::string(what_) + ": truncated (needs " + std::to_string(n) +
                                       " more bytes at offset " + std::to_string(pos_) + ", has " +
                                       std::to_string(remaining()) + ")");
  }
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::span<const std::byte> data_;
  size_t pos_ = 0;
  std::string_view what_;
};

}  // namespace amq::detail
