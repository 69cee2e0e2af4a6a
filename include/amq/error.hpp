// amq/error.hpp — the one error type every amq operation throws.
//
// Every failure amq reports is an `amq::Error`: a std::runtime_error carrying an
// `amq::Errc` code, so callers can branch on what went wrong (a truncated file, a
// checksum mismatch, a full filter...) and print `what()` for a person. Loaders
// never crash, hang or allocate by a length read from a file: bad input becomes
// an Error with one of the format codes below.
//
// Guarantees. Each code has one meaning across the library (the list below), and the
// message names the file or parameter at fault where there is one. Every amq call
// that can fail throws; none returns an error status (CuckooStatus::full, an absent
// key and the like are answers, not errors). Failures of the standard library
// (std::bad_alloc when memory runs out) pass through unchanged. The amq CLI prints
// what() after "amq: " and exits with status 2.
//
//   try {
//     auto f = amq::BloomFilter::load(bytes);
//   } catch (const amq::Error& e) {
//     if (e.code() == amq::Errc::checksum_mismatch) { ... }
//     std::cerr << e.what() << '\n';
//   }
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace amq {

enum class Errc {
  invalid_argument,     // a parameter out of its documented range
  truncated,            // input ends before the structure it announces
  bad_magic,            // not an amq (or recognised outside) file
  unsupported_version,  // a format version this build does not read
  wrong_kind,           // an amq file of another structure kind
  checksum_mismatch,    // bytes changed after writing
  corrupt,              // well-formed framing, impossible contents
  too_large,            // sizes beyond what this build accepts
  incompatible,         // two structures that cannot be combined
  full,                 // a fixed-capacity structure cannot take the item
  unsupported,          // the operation does not exist for this kind
  not_found,            // a named thing (file, key, filter) is absent
  io,                   // the operating system refused a read or write
  locked,               // another writer holds the resource
  remote,               // a server (Redis) answered with an error or went away
};

// A short lower-case name for the code: "truncated", "checksum mismatch", ...
std::string_view errc_name(Errc code) noexcept;

class Error : public std::runtime_error {
 public:
  Error(Errc code, const std::string& message) : std::runtime_error(message), code_(code) {}
  Errc code() const noexcept { return code_; }

 private:
  Errc code_;
};

}  // namespace amq
