#include "amq/format.hpp"

#include <gtest/gtest.h>

#include "amq/detail/byte_io.hpp"
#include "amq/error.hpp"
#include "amq/hash.hpp"

namespace amq {
namespace {

std::vector<std::byte> sample() {
  detail::ByteWriter params;
  params.u32(7);
  params.u8(1);  // 5 bytes: padding follows
  std::vector<std::byte> payload(13, std::byte{0xab});
  return write_container(Kind::cuckoo, params.buffer(), payload);
}

Errc code_of(std::span<const std::byte> file, std::optional<Kind> kind = std::nullopt) {
  try {
    parse_container(file, kind);
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "parse succeeded";
  return Errc::io;
}

TEST(Format, RoundTripAndAlignment) {
  const auto file = sample();
  EXPECT_EQ(file.size(), 32u + 8 + 16 + 8);
  const Container c = parse_container(file, Kind::cuckoo);
  EXPECT_EQ(c.kind, Kind::cuckoo);
  EXPECT_EQ(c.params.size(), 5u);
  EXPECT_EQ(c.payload.size(), 13u);
  EXPECT_EQ((c.payload.data() - file.data()) % 8, 0);
  EXPECT_EQ(c.payload[12], std::byte{0xab});
}

TEST(Format, WrittenInPlace) {
  // write_container_to into a dirty buffer gives the same bytes as write_container.
  const auto file = sample();
  std::vector<std::byte> out(container_size(5, 13), std::byte{0x5a});
  ASSERT_EQ(out.size(), file.size());
  detail::ByteWriter params;
  params.u32(7);
  params.u8(1);
  write_container_to(out, Kind::cuckoo, params.buffer(), 13, [](std::span<std::byte> payload) {
    ASSERT_EQ(payload.size(), 13u);
    for (auto& b : payload) b = std::byte{0xab};
  });
  EXPECT_EQ(out, file);
  std::vector<std::byte> wrong(out.size() + 8);
  EXPECT_THROW(write_container_to(wrong, Kind::cuckoo, params.buffer(), 13, [](std::span<std::byte>) {}), Error);
}

TEST(Format, RejectsEveryTruncation) {
  const auto file = sample();
  for (size_t n = 0; n < file.size(); ++n) {
    const Errc e = code_of(std::span(file).first(n));
    EXPECT_TRUE(e == Errc::bad_magic || e == Errc::truncated) << "length " << n;
  }
}

TEST(Format, RejectsEveryBitFlip) {
  const auto file = sample();
  for (size_t i = 0; i < file.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      auto bad = file;
      bad[i] ^= std::byte(1u << bit);
      EXPECT_THROW(parse_container(bad), Error) << "byte " << i << " bit " << bit;
    }
  }
}

TEST(Format, TypedErrors) {
  auto file = sample();
  EXPECT_EQ(code_of(file, Kind::bloom), Errc::wrong_kind);
  auto v = file;
  v[8] = std::byte{9};
  EXPECT_EQ(code_of(v), Errc::unsupported_version);
  auto longer = file;
  longer.push_back(std::byte{0});
  EXPECT_EQ(code_of(longer), Errc::corrupt);
  auto sum = file;
  sum[40] ^= std::byte{1};
  EXPECT_EQ(code_of(sum), Errc::checksum_mismatch);
  // A hostile payload length is rejected before anything is allocated by it.
  auto huge = file;
  detail::store_le64(huge.data() + 24, ~uint64_t{0});
  EXPECT_EQ(code_of(huge), Errc::truncated);
  auto unknown = file;
  unknown[10] = std::byte{0x77};
  EXPECT_EQ(code_of(unknown), Errc::corrupt);
}

TEST(Format, ContainerKindFromTheHeader) {
  const auto file = sample();
  EXPECT_EQ(container_kind(file), Kind::cuckoo);
  EXPECT_EQ(container_kind(std::span(file).first(kContainerHeaderSize)), Kind::cuckoo);
  EXPECT_EQ(container_kind(std::span(file).first(11)), std::nullopt);
  auto bad = file;
  bad[10] = std::byte{0x7f};  // no such kind
  EXPECT_EQ(container_kind(bad), std::nullopt);
  bad = file;
  bad[0] = std::byte{'B'};
  EXPECT_EQ(container_kind(bad), std::nullopt);
}

// Header byte 12 records the key type; a file without one (0, every file written
// before the field existed) reads as KeyType::unknown. Bytes 13-15 stay reserved.
TEST(Format, KeyTypeInTheHeader) {
  const auto old = sample();
  EXPECT_EQ(old[12], std::byte{0});
  EXPECT_EQ(parse_container(old).key_type, KeyType::unknown);
  EXPECT_EQ(container_key_type(old), KeyType::unknown);
  detail::ByteWriter params;
  params.u32(7);
  const std::vector<std::byte> payload(13, std::byte{0xab});
  for (KeyType t : {KeyType::str, KeyType::u64, KeyType::hex}) {
    SCOPED_TRACE(key_type_name(t));
    const auto file = write_container(Kind::succinct, params.buffer(), payload, t);
    EXPECT_EQ(file[12], static_cast<std::byte>(t));
    EXPECT_EQ(parse_container(file, Kind::succinct).key_type, t);
    EXPECT_EQ(container_key_type(std::span(file).first(kContainerHeaderSize)), t);
    // Recording it in a finished file rewrites the byte and the checksum, nothing else.
    auto stamped = write_container(Kind::succinct, params.buffer(), payload);
    set_container_key_type(stamped, t);
    EXPECT_EQ(stamped, file);
    EXPECT_EQ(key_type_from_name(key_type_name(t)), t);
  }
  EXPECT_EQ(key_type_name(KeyType::unknown), "unknown");
  EXPECT_FALSE(key_type_from_name("unknown"));
  EXPECT_FALSE(key_type_from_name("i64"));
  // An unknown key type, or anything in the reserved bytes, is damage (the checksum is
  // made right, so that it is the header check that rejects it).
  for (size_t at : {12, 13, 14, 15}) {
    SCOPED_TRACE(at);
    auto bad = old;
    bad[at] = at == 12 ? std::byte{4} : std::byte{1};
    detail::store_le64(bad.data() + bad.size() - 8, XXH3_64bits(bad.data(), bad.size() - 8));
    EXPECT_EQ(code_of(bad), Errc::corrupt);
  }
  std::vector<std::byte> text(64, std::byte{'x'});
  EXPECT_EQ(container_key_type(text), KeyType::unknown);
  EXPECT_THROW(set_container_key_type(text, KeyType::u64), Error);
}

TEST(Format, KindNames) {
  for (Kind k : all_kinds()) EXPECT_EQ(kind_from_name(kind_name(k)), k);
  EXPECT_FALSE(kind_from_name("nope"));
}

}  // namespace
}  // namespace amq
