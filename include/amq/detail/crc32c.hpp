// amq/detail/crc32c.hpp — CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the
// checksum of the log store's records. crc32c("123456789") == 0xE3069283.
//
// Uses the SSE4.2 crc32 instruction when the CPU has it (checked once at run time),
// and a slicing-by-8 table otherwise; both give the same values.
#pragma once

#include <cstddef>
#include <cstdint>

namespace amq::detail {

// Continues a CRC: crc32c_extend(crc32c(a), b) == crc32c(a + b). Start from 0.
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size) noexcept;
inline uint32_t crc32c(const void* data, size_t size) noexcept { return crc32c_extend(0, data, size); }

// The portable table version, whatever the CPU (for tests).
uint32_t crc32c_extend_portable(uint32_t crc, const void* data, size_t size) noexcept;
// True if crc32c_extend uses the SSE4.2 instruction on this machine.
bool crc32c_hardware() noexcept;

}  // namespace amq::detail
