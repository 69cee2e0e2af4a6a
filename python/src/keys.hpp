// amq._amq's arguments: Python keys as amq hashes them (str as its UTF-8 bytes, bytes
// and bytes-like objects as they are, int as its 8 bytes little-endian, never Python's
// hash()), one at a time or as a batch read in place where it can be; key type names;
// paths.
#pragma once

#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "amq/format.hpp"
#include "amq/hash.hpp"

namespace amq_python {

namespace py = pybind11;
using amq::Bytes;
using amq::KeyType;

// One key's bytes. `scratch` holds an int's 8 bytes or a copied bytes-like object's.
struct KeyScratch {
  uint64_t u = 0;
  std::string s;
};
Bytes key_bytes(py::handle h, KeyScratch& scratch);

// Many keys' bytes, pointing into the caller's objects where possible: a NumPy (or any
// buffer-protocol) array of 64-bit integers or of fixed-width bytes ('S' dtype) is read
// in place; a sequence of str/bytes points into the str and bytes objects (kept alive by
// `keep`); ints and other integer widths are converted into `ints`.
struct KeyBatch {
  std::vector<Bytes> views;
  std::vector<uint64_t> ints;      // reserved up front: never reallocated
  std::vector<std::string> copies; // reserved up front: never reallocated
  py::object keep;
  std::optional<py::buffer_info> buffer;
  // The key type the keys show: u64 if all are ints, str if all are str/bytes, else unknown.
  bool all_ints = true, all_strings = true;
  // A lazy batch (an array of 8-byte integers or of fixed-width bytes, read in place)
  // has no `views`: for_each_chunk makes them a few thousand at a time, so that they
  // stay in cache instead of taking 16 bytes a key of memory traffic.
  bool lazy = false;
  bool fixed_bytes = false;  // NumPy 'S': trailing NULs are padding
  const std::byte* base = nullptr;
  ptrdiff_t stride = 0;
  size_t width = 0, count = 0;

  size_t size() const { return lazy ? count : views.size(); }
  void fill(size_t from, size_t to, std::vector<Bytes>& out) const {
    out.clear();
    for (size_t i = from; i < to; ++i) {
      const std::byte* p = base + static_cast<ptrdiff_t>(i) * stride;
      size_t len = width;
      if (fixed_bytes)
        while (len > 0 && p[len - 1] == std::byte{0}) --len;
      out.emplace_back(p, len);
    }
  }
  // Calls f(first index, span of keys) over the whole batch.
  template <class F>
  void for_each_chunk(F&& f) const {
    if (!lazy) {
      f(size_t{0}, std::span<const Bytes>(views));
      return;
    }
    constexpr size_t kChunk = 4096;
    std::vector<Bytes> chunk;
    chunk.reserve(kChunk);
    for (size_t i = 0; i < count; i += kChunk) {
      fill(i, std::min(count, i + kChunk), chunk);
      f(i, std::span<const Bytes>(chunk));
    }
  }
};

// The keys of a list/iterable or a buffer-protocol array. `lazy_ok`: an array may be
// read chunk by chunk (for_each_chunk) instead of making every key's view up front.
KeyBatch key_batch(py::handle keys, bool lazy_ok = false);

// A key type's name ("str", "u64", "hex") as amq::KeyType; none if absent.
std::optional<KeyType> key_type_arg(const std::optional<std::string>& name);

// A path argument: str, bytes or any os.PathLike (pathlib.Path), as open() takes.
std::string path_arg(py::handle p);

}  // namespace amq_python
