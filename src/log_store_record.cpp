// The log store's record codec (log_store_record.hpp): writing a record.
#include "log_store_record.hpp"

namespace amq::detail::logstore {

void encode_record(std::vector<std::byte>& buf, uint8_t type, Bytes key, Bytes value) {
  const uint64_t size = record_size(key.size(), value.size());
  buf.assign(size, std::byte{0});
  std::byte* p = buf.data();
  p[4] = std::byte{type};
  const auto klen = static_cast<uint16_t>(key.size());
  const auto vlen = static_cast<uint32_t>(value.size());
  std::memcpy(p + 6, &klen, 2);
  std::memcpy(p + 8, &vlen, 4);
  if (!key.empty()) std::memcpy(p + kRecHeader, key.data(), key.size());
  if (!value.empty()) std::memcpy(p + kRecHeader + key.size(), value.data(), value.size());
  const uint32_t crc = crc32c(p + 4, size - 4);
  std::memcpy(p, &crc, 4);
}

}  // namespace amq::detail::logstore
