// Internal: the Golomb-coded value streams behind golomb_encode/golomb_decode, written
// to and read from a bit stream the caller positions (BIP158 and cache digests put a
// header before theirs). Defined in src/gcs_formats.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "amq/detail/bit_stream.hpp"
#include "amq/golomb_coded_set.hpp"

namespace amq::detail {

// Appends the codes of `sorted` by `coding`'s gap rule; adds the number of values coded
// to `count`. Throws Errc::invalid_argument if `sorted` is not sorted.
void encode_into(BitWriter& w, std::span<const uint64_t> sorted, const GolombCoding& coding, uint64_t& count);

// Reads `count` values, or without a count until the rest of the stream is zero bits.
std::vector<uint64_t> decode_from(BitReader& r, std::optional<uint64_t> count, const GolombCoding& coding);

}  // namespace amq::detail
