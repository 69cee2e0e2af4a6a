// amq._amq — the Python binding of amq (pybind11). Every structure is an amq::AnySet
// behind a Python class named as the C++ one; keys are hashed by amq exactly as the
// C++ library and the CLI hash them (str as its UTF-8 bytes, bytes as they are, int as
// its 8 bytes little-endian), never with Python's hash(). docs/decisions/0038 explains
// the choices; python/amq/__init__.pyi documents the interface.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "amq/any_set.hpp"
#include "amq/blocked_bloom_filter.hpp"
#include "amq/bloom_filter.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "amq/format.hpp"
#include "amq/log_store.hpp"
#include "amq/redis_bloom_filter.hpp"
#include "amq/succinct_set.hpp"

namespace py = pybind11;
using amq::Bytes;
using amq::Kind;
using amq::KeyType;

namespace {

// ---- errors -------------------------------------------------------------------
// amq.Error, and one subclass per amq::Errc (InvalidArgumentError is also a
// ValueError); each instance carries .code, the Errc's name ("checksum_mismatch").
struct ErrorClass {
  amq::Errc code;
  const char* name;
  const char* doc;
};
constexpr std::array<ErrorClass, 15> kErrors{{
    {amq::Errc::invalid_argument, "invalid_argument", "A parameter out of its documented range."},
    {amq::Errc::truncated, "truncated", "The input ends before the structure it announces."},
    {amq::Errc::bad_magic, "bad_magic", "Not an amq file (nor a recognised outside format)."},
    {amq::Errc::unsupported_version, "unsupported_version", "A format version this build does not read."},
    {amq::Errc::wrong_kind, "wrong_kind", "An amq file of another structure kind."},
    {amq::Errc::checksum_mismatch, "checksum_mismatch", "The bytes changed after they were written."},
    {amq::Errc::corrupt, "corrupt", "Well-formed framing, impossible contents."},
    {amq::Errc::too_large, "too_large", "Sizes beyond what this build accepts."},
    {amq::Errc::incompatible, "incompatible", "Two structures that cannot be combined."},
    {amq::Errc::full, "full", "A fixed-capacity structure cannot take the item (it is unchanged)."},
    {amq::Errc::unsupported, "unsupported", "The operation does not exist for this kind."},
    {amq::Errc::not_found, "not_found", "A named thing (file, key, filter) is absent."},
    {amq::Errc::io, "io", "The operating system refused a read or write, or a server connection failed."},
    {amq::Errc::locked, "locked", "Another writer holds the resource."},
    {amq::Errc::remote, "remote", "A server (Redis) answered with an error."},
}};
PyObject* g_error = nullptr;
std::array<PyObject*, kErrors.size()> g_error_classes{};

std::string camel_error_name(const char* code) {
  std::string out;
  bool up = true;
  for (const char* p = code; *p; ++p) {
    if (*p == '_') { up = true; continue; }
    out += up ? static_cast<char>(*p - 'a' + 'A') : *p;
    up = false;
  }
  return out + "Error";
}

void raise_amq_error(const amq::Error& e) {
  size_t i = 0;
  while (i < kErrors.size() && kErrors[i].code != e.code()) ++i;
  PyObject* cls = i < kErrors.size() ? g_error_classes[i] : g_error;
  py::str message(PyUnicode_DecodeUTF8(e.what(), static_cast<Py_ssize_t>(std::strlen(e.what())), "replace"));
  py::object exc = py::reinterpret_steal<py::object>(PyObject_CallOneArg(cls, message.ptr()));
  if (!exc) return;  // the call failed and set its own exception
  exc.attr("code") = py::str(i < kErrors.size() ? kErrors[i].name : "unknown");
  PyErr_SetObject(cls, exc.ptr());
}

[[noreturn]] void throw_error(amq::Errc code, const std::string& message) { throw amq::Error(code, message); }

// A path argument: str, bytes or any os.PathLike (pathlib.Path), as open() takes.
std::string path_arg(py::handle p) {
  py::object fs = py::reinterpret_steal<py::object>(PyOS_FSPath(p.ptr()));
  if (!fs) throw py::error_already_set();
  py::object b = PyBytes_Check(fs.ptr()) ? fs : py::reinterpret_steal<py::object>(PyUnicode_EncodeFSDefault(fs.ptr()));
  if (!b) throw py::error_already_set();
  std::string out(PyBytes_AS_STRING(b.ptr()), PyBytes_GET_SIZE(b.ptr()));
  if (out.find('\0') != std::string::npos) throw py::value_error("embedded null byte in a path");
  return out;
}

// ---- keys ---------------------------------------------------------------------
uint64_t to_little_endian(uint64_t v) {
  if constexpr (std::endian::native == std::endian::big) return __builtin_bswap64(v);
  return v;
}

// A Python int as amq's 64-bit key: 0..2^64-1, or a negative as its two's complement
// (Guava's longFunnel of a Java long). Objects with __index__ (NumPy integers) count.
uint64_t int_key(PyObject* o) {
  py::object idx = py::reinterpret_steal<py::object>(PyNumber_Index(o));
  if (!idx) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(idx.ptr(), &overflow);
  if (overflow == 0) {
    if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
    return static_cast<uint64_t>(v);
  }
  if (overflow > 0) {
    const unsigned long long u = PyLong_AsUnsignedLongLong(idx.ptr());
    if (!PyErr_Occurred()) return u;
    PyErr_Clear();
  }
  throw py::value_error("an int key must fit in 64 bits (-2**63 .. 2**64-1)");
}

// NumPy's integer scalars also expose a buffer (of their own width): as keys they are
// ints, so __index__ comes first.
bool is_int_key(PyObject* o) { return !PyBool_Check(o) && (PyLong_Check(o) || PyIndex_Check(o)); }

// One key's bytes. `scratch` holds an int's 8 bytes or a copied bytes-like object's.
struct KeyScratch {
  uint64_t u = 0;
  std::string s;
};
Bytes key_bytes(py::handle h, KeyScratch& scratch) {
  PyObject* o = h.ptr();
  if (PyUnicode_Check(o)) {
    Py_ssize_t n = 0;
    const char* p = PyUnicode_AsUTF8AndSize(o, &n);
    if (!p) throw py::error_already_set();
    return {reinterpret_cast<const std::byte*>(p), static_cast<size_t>(n)};
  }
  if (PyBytes_Check(o))
    return {reinterpret_cast<const std::byte*>(PyBytes_AS_STRING(o)), static_cast<size_t>(PyBytes_GET_SIZE(o))};
  if (PyBool_Check(o)) throw py::type_error("a key is str, bytes or int, not bool");
  if (is_int_key(o)) {
    scratch.u = to_little_endian(int_key(o));
    return {reinterpret_cast<const std::byte*>(&scratch.u), 8};
  }
  if (PyObject_CheckBuffer(o)) {
    // Bytes-like means a buffer of bytes: not a float's (np.float64) or an array's of
    // wider items, whose bytes would be hashed without saying so.
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) throw py::error_already_set();
    const char* f = view.format ? view.format : "B";
    const bool bytes_like = std::strcmp(f, "B") == 0 || std::strcmp(f, "b") == 0 || std::strcmp(f, "c") == 0;
    if (bytes_like) scratch.s.assign(static_cast<const char*>(view.buf), static_cast<size_t>(view.len));
    PyBuffer_Release(&view);
    if (!bytes_like)
      throw py::type_error(std::string("a key is str, bytes (or a buffer of bytes) or int, not a buffer of '") +
                           f + "' items (" + Py_TYPE(o)->tp_name + ")");
    return amq::as_bytes(scratch.s);
  }
  throw py::type_error(std::string("a key is str, bytes (or bytes-like) or int, not ") + Py_TYPE(o)->tp_name);
}

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

bool integer_format(const std::string& f, char& code) {
  std::string s = f;
  if (!s.empty() && (s[0] == '<' || s[0] == '@' || s[0] == '=' || s[0] == '!' || s[0] == '>')) {
    if ((s[0] == '>' || s[0] == '!') && std::endian::native == std::endian::little) return false;
    s.erase(0, 1);
  }
  if (s.size() != 1 || std::strchr("bBhHiIlLqQnN", s[0]) == nullptr) return false;
  code = s[0];
  return true;
}

void batch_from_buffer(KeyBatch& b, py::handle keys, bool lazy_ok) {
  b.buffer.emplace(py::reinterpret_borrow<py::buffer>(keys).request());
  const py::buffer_info& info = *b.buffer;
  if (info.ndim != 1) throw py::value_error("an array of keys must be one-dimensional");
  const size_t n = static_cast<size_t>(info.shape[0]);
  const ptrdiff_t stride = info.strides[0];
  const auto* base = static_cast<const std::byte*>(info.ptr);
  char code = 0;
  if (integer_format(info.format, code)) {
    b.all_strings = false;
    const bool is_signed = std::islower(static_cast<unsigned char>(code));
    if (info.itemsize == 8 && std::endian::native == std::endian::little) {  // zero-copy
      b.base = base;
      b.stride = stride;
      b.width = 8;
      b.count = n;
      b.lazy = true;
      if (!lazy_ok) b.fill(0, n, b.views), b.lazy = false;
      return;
    }
    b.ints.reserve(n);
    b.views.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      const std::byte* p = base + static_cast<ptrdiff_t>(i) * stride;
      uint64_t v = 0;
      switch (info.itemsize) {
        case 1: { uint8_t x; std::memcpy(&x, p, 1); v = is_signed ? uint64_t(int64_t(int8_t(x))) : x; break; }
        case 2: { uint16_t x; std::memcpy(&x, p, 2); v = is_signed ? uint64_t(int64_t(int16_t(x))) : x; break; }
        case 4: { uint32_t x; std::memcpy(&x, p, 4); v = is_signed ? uint64_t(int64_t(int32_t(x))) : x; break; }
        case 8: std::memcpy(&v, p, 8); break;
        default: throw py::value_error("unsupported integer width in an array of keys");
      }
      b.ints.push_back(to_little_endian(v));
      b.views.emplace_back(reinterpret_cast<const std::byte*>(&b.ints.back()), 8);
    }
    return;
  }
  const std::string& f = info.format;
  if (!f.empty() && f.back() == 's') {  // NumPy 'S' (fixed-width bytes): trailing NULs are padding
    b.all_ints = false;
    b.base = base;
    b.stride = stride;
    b.width = static_cast<size_t>(info.itemsize);
    b.count = n;
    b.fixed_bytes = true;
    b.lazy = true;
    if (!lazy_ok) b.fill(0, n, b.views), b.lazy = false;
    return;
  }
  b.buffer.reset();
  throw py::type_error("an array of keys holds integers or fixed-width bytes (dtype 'S'), not format '" + f + "'");
}

bool is_numpy_array_of_objects_or_text(py::handle keys) {
  // NumPy arrays of str ('U') or objects expose no usable buffer: iterate them instead.
  py::object dtype = py::getattr(keys, "dtype", py::none());
  if (dtype.is_none()) return false;
  const std::string kind = py::str(dtype.attr("kind"));
  return kind == "U" || kind == "O";
}

KeyBatch key_batch(py::handle keys, bool lazy_ok = false) {
  KeyBatch b;
  PyObject* o = keys.ptr();
  if (PyUnicode_Check(o) || PyBytes_Check(o) || PyByteArray_Check(o))
    throw py::type_error("expected an iterable or array of keys, not a single key");
  if (PyObject_CheckBuffer(o) && !is_numpy_array_of_objects_or_text(keys)) {
    batch_from_buffer(b, keys, lazy_ok);
    return b;
  }
  b.keep = py::reinterpret_steal<py::object>(PySequence_Fast(o, "expected an iterable or array of keys"));
  if (!b.keep) throw py::error_already_set();
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(b.keep.ptr());
  PyObject** items = PySequence_Fast_ITEMS(b.keep.ptr());
  b.views.reserve(static_cast<size_t>(n));
  b.ints.reserve(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* k = items[i];
    if (PyUnicode_Check(k) || PyBytes_Check(k)) {
      KeyScratch unused;
      b.views.push_back(key_bytes(k, unused));
      b.all_ints = false;
    } else if (!PyBool_Check(k) && is_int_key(k)) {
      b.ints.push_back(to_little_endian(int_key(k)));
      b.views.emplace_back(reinterpret_cast<const std::byte*>(&b.ints.back()), 8);
      b.all_strings = false;
    } else {
      if (b.copies.capacity() == 0) b.copies.reserve(static_cast<size_t>(n));
      KeyScratch s;
      key_bytes(k, s);  // bytes-like, or raises TypeError
      b.copies.push_back(std::move(s.s));
      b.views.push_back(amq::as_bytes(b.copies.back()));
      b.all_ints = false;
    }
  }
  return b;
}

std::optional<KeyType> key_type_arg(const std::optional<std::string>& name) {
  if (!name) return std::nullopt;
  const auto t = amq::key_type_from_name(*name);
  if (!t) throw_error(amq::Errc::invalid_argument, "unknown key type '" + *name + "' (str, u64 or hex)");
  return t;
}

// ---- sets ---------------------------------------------------------------------
// One Python object per set. The C++ work of batch calls runs without the GIL, so a
// readers-writer lock keeps a concurrent add from racing a contains_many of another thread.
struct PySet {
  std::unique_ptr<amq::AnySet> set;
  mutable std::shared_mutex mu;
  // SuccinctSet only: the typed set for ordered queries: a file's own mapping, made
  // when it is loaded; for a set in memory, a copy made on first use.
  mutable std::shared_ptr<const amq::SuccinctSet> trie;
  // A static set's info(), which for several kinds serializes the set to measure it:
  // computed once (the set never changes). Guarded by `mu`.
  mutable std::optional<amq::SetInfo> static_info;

  // AnySet::info(); the caller holds `mu` (shared or exclusive).
  amq::SetInfo info() const {
    if (set->is_dynamic()) return set->info();
    static std::mutex cache_mu;  // shared holders of `mu` may race to fill the cache
    std::lock_guard lock(cache_mu);
    if (!static_info) static_info = set->info();
    return *static_info;
  }
};
template <Kind K>
struct KindSet : PySet {};

constexpr bool is_dynamic_kind(Kind k) {
  return k == Kind::bloom || k == Kind::blocked_bloom || k == Kind::scalable_bloom || k == Kind::cuckoo ||
         k == Kind::scalable_cuckoo || k == Kind::expandable;
}
constexpr bool has_erase(Kind k) { return k == Kind::cuckoo || k == Kind::scalable_cuckoo || k == Kind::expandable; }
constexpr bool has_merge(Kind k) { return k == Kind::bloom || k == Kind::blocked_bloom; }
// A scalable Bloom filter counts the adds it did not find already present: a false
// positive goes uncounted, so it has no len() either.
constexpr bool exact_count(Kind k) { return k != Kind::bloom && k != Kind::blocked_bloom && k != Kind::scalable_bloom; }

py::object wrap(std::unique_ptr<amq::AnySet> s, std::string path = {});

template <Kind K>
py::object wrap_kind(std::unique_ptr<amq::AnySet> s, std::string path) {
  auto p = std::make_unique<KindSet<K>>();
  p->set = std::move(s);
  if constexpr (K == Kind::succinct) {
    // The ordered queries' typed set maps the same file now (its checksum was just
    // verified), not later, when the path may name a replaced file.
    if (!path.empty()) {
      py::gil_scoped_release nogil;
      p->trie = std::make_shared<const amq::SuccinctSet>(amq::SuccinctSet::open(path, false));
    }
  }
  return py::cast(std::move(p));
}

py::object wrap(std::unique_ptr<amq::AnySet> s, std::string path) {
  switch (s->kind()) {
    case Kind::bloom: return wrap_kind<Kind::bloom>(std::move(s), path);
    case Kind::blocked_bloom: return wrap_kind<Kind::blocked_bloom>(std::move(s), path);
    case Kind::scalable_bloom: return wrap_kind<Kind::scalable_bloom>(std::move(s), path);
    case Kind::cuckoo: return wrap_kind<Kind::cuckoo>(std::move(s), path);
    case Kind::scalable_cuckoo: return wrap_kind<Kind::scalable_cuckoo>(std::move(s), path);
    case Kind::gcs: return wrap_kind<Kind::gcs>(std::move(s), path);
    case Kind::succinct: return wrap_kind<Kind::succinct>(std::move(s), path);
    case Kind::binary_fuse: return wrap_kind<Kind::binary_fuse>(std::move(s), path);
    case Kind::ribbon: return wrap_kind<Kind::ribbon>(std::move(s), path);
    case Kind::expandable: return wrap_kind<Kind::expandable>(std::move(s), path);
  }
  throw_error(amq::Errc::unsupported, "a set of an unknown kind");
}

amq::BuildOptions build_options(std::optional<uint64_t> capacity, double fpp, uint64_t seed,
                                const std::optional<std::string>& key_type, const std::string& format,
                                const py::kwargs& options) {
  amq::BuildOptions o;
  o.capacity = capacity;
  o.fpp = fpp;
  o.seed = seed;
  o.format = format;
  if (auto t = key_type_arg(key_type)) o.key_type = *t;
  for (auto [name, value] : options) {
    std::string n = py::str(name);
    for (char& c : n)
      if (c == '_') c = '-';
    if (PyBool_Check(value.ptr())) {  // a flag (parquet=True): present or absent
      if (value.cast<bool>()) o.extra[n] = true;
      continue;
    }
    o.extra[n] = std::string(py::str(value));  // read by the kind's option spec, as the CLI's text is
  }
  return o;
}

amq::OptionMap extra_options(const py::kwargs& options) {
  amq::OptionMap out;
  for (auto [name, value] : options) {
    std::string n = py::str(name);
    for (char& c : n)
      if (c == '_') c = '-';
    out[n] = std::string(py::str(value));
  }
  return out;
}

std::unique_ptr<amq::AnySet> build(Kind kind, amq::BuildOptions o, const KeyBatch& keys) {
  py::gil_scoped_release nogil;
  return amq::build_set(kind, o, keys.views);
}

void add_many(PySet& s, py::object keys) {
  KeyBatch b = key_batch(keys, true);
  py::gil_scoped_release nogil;
  std::unique_lock lock(s.mu);
  b.for_each_chunk([&](size_t, std::span<const Bytes> chunk) {
    for (Bytes k : chunk) s.set->insert(k);
  });
}

py::array_t<bool> contains_many(const PySet& s, py::object keys) {
  KeyBatch b = key_batch(keys, true);
  py::array_t<bool> out(static_cast<py::ssize_t>(b.size()));
  bool* data = out.mutable_data();
  {
    py::gil_scoped_release nogil;
    std::shared_lock lock(s.mu);
    b.for_each_chunk([&](size_t first, std::span<const Bytes> chunk) {
      s.set->contains_many(chunk, std::span<bool>(data + first, chunk.size()));
    });
  }
  return out;
}

bool contains(const PySet& s, py::object key) {
  KeyScratch scratch;
  const Bytes k = key_bytes(key, scratch);
  std::shared_lock lock(s.mu);
  return s.set->contains(k);
}

py::bytes to_bytes(const PySet& s) {
  std::shared_lock lock(s.mu);
  const std::vector<std::byte> v = s.set->serialize();
  return py::bytes(reinterpret_cast<const char*>(v.data()), v.size());
}

std::span<const std::byte> buffer_bytes(const py::buffer_info& info) {
  return {static_cast<const std::byte*>(info.ptr), static_cast<size_t>(info.size * info.itemsize)};
}

py::object loads(const py::buffer& data, const std::string& format, const py::kwargs& options) {
  py::buffer_info info = data.request();
  if (info.ndim > 1 && info.strides.back() != info.itemsize)
    throw py::value_error("loads takes a contiguous bytes-like object");
  amq::LoadOptions o;
  o.format = format;
  o.extra = extra_options(options);
  std::unique_ptr<amq::AnySet> s;
  {
    py::gil_scoped_release nogil;
    s = amq::load_set(buffer_bytes(info), o);
  }
  return wrap(std::move(s));
}

py::object load(py::object path_obj, const std::string& format, const py::kwargs& options) {
  const std::string path = path_arg(path_obj);
  amq::LoadOptions o;
  o.format = format;
  o.extra = extra_options(options);
  std::unique_ptr<amq::AnySet> s;
  {
    py::gil_scoped_release nogil;
    s = amq::open_set(path, o);
  }
  return wrap(std::move(s), o.format == "auto" || o.format == "amq" ? path : std::string());
}

py::dict info_dict(const PySet& s) {
  amq::SetInfo i;
  {
    std::shared_lock lock(s.mu);
    i = s.info();
  }
  py::dict params;
  for (const auto& [k, v] : i.params) params[py::str(k)] = v;
  py::dict d;
  d["kind"] = std::string(amq::kind_name(i.kind));
  d["format"] = i.format;
  d["key_type"] = std::string(amq::key_type_name(s.set->key_type()));
  d["items"] = i.items;
  d["items_exact"] = i.items_exact;
  d["bytes"] = i.bytes;
  d["bits_per_key"] = i.bits_per_key;
  d["fpp_expected"] = i.fpp_expected;
  d["params"] = params;
  return d;
}

std::string repr(const PySet& s, const char* cls) {
  amq::SetInfo i;
  {
    std::shared_lock lock(s.mu);
    i = s.info();
  }
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.3g", i.fpp_expected);
  return std::string("<amq.") + cls + " kind=" + std::string(amq::kind_name(i.kind)) +
         " items=" + (i.items_exact ? "" : "~") + std::to_string(i.items) + " bytes=" + std::to_string(i.bytes) +
         " fpp=" + rate + (i.format != "amq" ? " format=" + i.format : "") + ">";
}

// Bloom and blocked Bloom filters of one geometry merge by OR-ing their bits (the C++
// classes' merge); the union keeps the left operand's file format and key type.
std::unique_ptr<amq::AnySet> merged(const PySet& a, const PySet& b) {
  std::shared_lock la(a.mu);
  std::shared_lock lb(b.mu, std::defer_lock);
  if (&a != &b) lb.lock();
  if (a.set->kind() != b.set->kind()) throw_error(amq::Errc::incompatible, "cannot merge sets of different kinds");
  const std::string fa = a.set->info().format, fb = b.set->info().format;
  std::vector<std::byte> out;
  if (a.set->kind() == Kind::bloom) {
    auto bloom = [](const PySet& s, const std::string& f) {
      return f == "guava" ? amq::BloomFilter::from_guava(s.set->serialize()) : amq::BloomFilter::load(s.set->serialize());
    };
    amq::BloomFilter x = bloom(a, fa);
    x.merge(bloom(b, fb));
    out = fa == "guava" ? x.to_guava() : x.serialize();
  } else {
    if (fa != "amq" || fb != "amq") throw_error(amq::Errc::unsupported, "only blocked Bloom filters in amq format merge");
    amq::BlockedBloomFilter x = amq::BlockedBloomFilter::load(a.set->serialize());
    x.merge(amq::BlockedBloomFilter::load(b.set->serialize()));
    out = x.serialize();
  }
  const KeyType kt = a.set->key_type();
  if (kt != KeyType::unknown && amq::has_container_magic(out)) amq::set_container_key_type(out, kt);
  return amq::load_set(out, fa == "guava" ? "guava" : "amq");
}

// ---- SuccinctSet's ordered queries ------------------------------------------------
const amq::SuccinctSet& trie_of(const PySet& s) {
  std::unique_lock lock(s.mu);
  if (!s.trie) s.trie = std::make_shared<const amq::SuccinctSet>(amq::SuccinctSet::load(s.set->serialize()));
  return *s.trie;
}

// A key as the trie holds it: a u64 set keeps its keys big-endian (numeric order).
std::string trie_key(const PySet& s, py::object key) {
  KeyScratch scratch;
  const Bytes k = key_bytes(key, scratch);
  std::string out(amq::as_chars(k));
  if (s.set->key_type() == KeyType::u64) {
    if (out.size() != 8) throw_error(amq::Errc::invalid_argument, "a u64 set's keys are ints");
    std::reverse(out.begin(), out.end());  // little-endian in, big-endian stored
  }
  return out;
}

py::object py_key(KeyType type, std::string_view k) {
  if (type == KeyType::u64 && k.size() == 8) {
    uint64_t v = 0;
    for (char c : k) v = (v << 8) | static_cast<unsigned char>(c);
    return py::int_(v);
  }
  if (type == KeyType::str)
    return py::reinterpret_steal<py::object>(
        PyUnicode_DecodeUTF8(k.data(), static_cast<Py_ssize_t>(k.size()), "surrogateescape"));
  return py::bytes(k.data(), k.size());
}

struct KeyIterator {
  std::shared_ptr<const amq::SuccinctSet> owner;
  amq::SuccinctSet::Iterator it;
  KeyType type;
};

KeyIterator scan(const PySet& s, const std::string& prefix, std::optional<std::string> from,
                 std::optional<std::string> to) {
  const amq::SuccinctSet& t = trie_of(s);
  return KeyIterator{s.trie, t.scan(prefix, from, to).begin(), s.set->key_type()};
}

// ---- LogStore ----------------------------------------------------------------------
// A mapping from keys (as everywhere) to bytes values, on disk. amq::LogStore is
// thread-safe, so every call runs without the GIL.
struct PyLogStore {
  std::unique_ptr<amq::LogStore> store;
  amq::LogStore& get() {
    if (!store) throw py::value_error("operation on a closed LogStore");
    return *store;
  }
};

amq::Durability durability_arg(const std::string& name) {
  if (name == "none") return amq::Durability::none;
  if (name == "every_write" || name == "every-write") return amq::Durability::every_write;
  if (name == "group_commit" || name == "group-commit") return amq::Durability::group_commit;
  throw_error(amq::Errc::invalid_argument, "unknown durability '" + name + "' (none, every_write, group_commit)");
}

std::string value_bytes(py::handle v) {
  if (PyUnicode_Check(v.ptr())) {
    Py_ssize_t n = 0;
    const char* p = PyUnicode_AsUTF8AndSize(v.ptr(), &n);
    if (!p) throw py::error_already_set();
    return std::string(p, static_cast<size_t>(n));
  }
  if (!PyObject_CheckBuffer(v.ptr()) || PyLong_Check(v.ptr()))
    throw py::type_error(std::string("a value is bytes-like or str, not ") + Py_TYPE(v.ptr())->tp_name);
  Py_buffer view;
  if (PyObject_GetBuffer(v.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0) throw py::error_already_set();
  std::string out(static_cast<const char*>(view.buf), static_cast<size_t>(view.len));
  PyBuffer_Release(&view);
  return out;
}

std::optional<std::string> store_get(PyLogStore& s, py::object key) {
  KeyScratch scratch;
  const Bytes k = key_bytes(key, scratch);
  amq::LogStore& st = s.get();
  py::gil_scoped_release nogil;
  return st.get(k);
}

std::vector<std::pair<std::string, std::string>> store_items(PyLogStore& s) {
  amq::LogStore& st = s.get();
  std::vector<std::pair<std::string, std::string>> out;
  py::gil_scoped_release nogil;
  st.for_each([&](Bytes k, Bytes v) { out.emplace_back(amq::as_chars(k), amq::as_chars(v)); });
  return out;
}

py::bytes as_pybytes(const std::string& s) { return py::bytes(s.data(), s.size()); }

void register_log_store(py::module_& m) {
  py::class_<PyLogStore>(m, "LogStore",
      "A key-value store on disk: an append-only log with a cuckoo-hashed index in memory "
      "(the C++ amq::LogStore). A mapping: db[key] = value, db[key], db.get(key), del db[key], "
      "key in db, len(db), iteration over keys, items(); values are bytes (a str value is stored as "
      "its UTF-8), keys as everywhere in amq and given back as bytes. Use it in a with-statement, or "
      "call close(). durability: 'none' (a process crash loses nothing; a machine crash may lose "
      "writes since the last sync/close), 'every_write' (fdatasync before each write returns), "
      "'group_commit' (synced every group_commit_ms). One writer per directory (another gets "
      "amq.LockedError); read_only=True opens beside a writer.")
      .def(py::init([](py::object path_obj, const std::string& durability, uint32_t group_commit_ms,
                       bool create, bool read_only, bool skip_corrupt, uint64_t expected_keys) {
             const std::string path = path_arg(path_obj);
             amq::LogStoreOptions o;
             o.durability = durability_arg(durability);
             o.group_commit_ms = group_commit_ms;
             o.create_if_missing = create;
             o.read_only = read_only;
             o.skip_corrupt = skip_corrupt;
             o.expected_keys = expected_keys;
             auto p = std::make_unique<PyLogStore>();
             py::gil_scoped_release nogil;
             p->store = std::make_unique<amq::LogStore>(amq::LogStore::open(path, o));
             return p;
           }),
           py::arg("path"), py::arg("durability") = "none", py::kw_only(), py::arg("group_commit_ms") = 10,
           py::arg("create") = true, py::arg("read_only") = false, py::arg("skip_corrupt") = false,
           py::arg("expected_keys") = 0)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyLogStore& s, py::args) {
        if (s.store) {
          py::gil_scoped_release nogil;
          s.store->close();
        }
        s.store.reset();
        return false;
      })
      .def("close", [](PyLogStore& s) {
        if (s.store) {
          py::gil_scoped_release nogil;
          s.store->close();
        }
        s.store.reset();
      }, "Syncs, writes the index snapshot and releases the directory's lock. Later calls raise ValueError.")
      .def("__setitem__", [](PyLogStore& s, py::object key, py::object value) {
        KeyScratch scratch;
        const Bytes k = key_bytes(key, scratch);
        const std::string v = value_bytes(value);
        amq::LogStore& st = s.get();
        py::gil_scoped_release nogil;
        st.put(k, amq::as_bytes(v));
      })
      .def("put", [](PyLogStore& s, py::object key, py::object value) {
        KeyScratch scratch;
        const Bytes k = key_bytes(key, scratch);
        const std::string v = value_bytes(value);
        amq::LogStore& st = s.get();
        py::gil_scoped_release nogil;
        st.put(k, amq::as_bytes(v));
      }, py::arg("key"), py::arg("value"), "Sets key to value (as db[key] = value).")
      .def("__getitem__", [](PyLogStore& s, py::object key) {
        auto v = store_get(s, key);
        if (!v) throw py::key_error(py::repr(key));
        return as_pybytes(*v);
      })
      .def("get", [](PyLogStore& s, py::object key, py::object default_value) -> py::object {
        auto v = store_get(s, key);
        if (!v) return default_value;
        return as_pybytes(*v);
      }, py::arg("key"), py::arg("default") = py::none(), "The key's value (bytes), or `default`.")
      .def("__delitem__", [](PyLogStore& s, py::object key) {
        KeyScratch scratch;
        const Bytes k = key_bytes(key, scratch);
        amq::LogStore& st = s.get();
        bool found = false;
        {
          py::gil_scoped_release nogil;
          found = st.erase(k);
        }
        if (!found) throw py::key_error(py::repr(key));
      })
      .def("__contains__", [](PyLogStore& s, py::object key) {
        KeyScratch scratch;
        const Bytes k = key_bytes(key, scratch);
        amq::LogStore& st = s.get();
        py::gil_scoped_release nogil;
        return st.contains(k);
      })
      .def("__len__", [](PyLogStore& s) { return s.get().size(); })
      .def("items", [](PyLogStore& s) {
        py::list out;
        for (const auto& [k, v] : store_items(s)) out.append(py::make_tuple(as_pybytes(k), as_pybytes(v)));
        return out;
      }, "Every (key, value) pair live now, in log order (a snapshot: later writes are not seen).")
      .def("keys", [](PyLogStore& s) {
        py::list out;
        for (const auto& [k, v] : store_items(s)) out.append(as_pybytes(k));
        return out;
      }, "Every key live now, in log order.")
      .def("values", [](PyLogStore& s) {
        py::list out;
        for (const auto& [k, v] : store_items(s)) out.append(as_pybytes(v));
        return out;
      }, "Every value live now, in log order.")
      .def("__iter__", [](PyLogStore& s) {
        py::list out;
        for (const auto& [k, v] : store_items(s)) out.append(as_pybytes(k));
        return out.attr("__iter__")();
      })
      .def("sync", [](PyLogStore& s) {
        amq::LogStore& st = s.get();
        py::gil_scoped_release nogil;
        st.sync();
      }, "Makes every write so far durable (fdatasync).")
      .def("compact", [](PyLogStore& s) {
        amq::LogStore& st = s.get();
        py::gil_scoped_release nogil;
        st.compact();
      }, "Rewrites the live records, dropping overwritten values and deleted keys.")
      .def("stats", [](PyLogStore& s) {
        const amq::LogStoreStats t = s.get().stats();
        py::dict d;
        d["records"] = t.records;
        d["live_keys"] = t.live_keys;
        d["log_bytes"] = t.log_bytes;
        d["live_bytes"] = t.live_bytes;
        d["segments"] = t.segments;
        d["index_bytes"] = t.index_bytes;
        d["truncated_bytes"] = t.truncated_bytes;
        d["skipped_bytes"] = t.skipped_bytes;
        d["from_snapshot"] = t.from_snapshot;
        return d;
      }, "Counters of the store (records, live keys, bytes, segments, ...).")
      .def_property_readonly("closed", [](const PyLogStore& s) { return !s.store; })
      .def("__repr__", [](PyLogStore& s) {
        if (!s.store) return std::string("<amq.LogStore closed>");
        return "<amq.LogStore dir=" + s.store->dir() + " keys=" + std::to_string(s.store->size()) + ">";
      });
}

// ---- RedisBloomFilter ------------------------------------------------------------------
// A scalable Bloom filter kept in Redis. One amq::RedisBloomFilter owns its connection
// and is not thread-safe: a mutex serialises the object's calls, made without the GIL.
struct PyRedis {
  std::unique_ptr<amq::RedisBloomFilter> f;
  std::mutex mu;
};

amq::RedisOptions redis_options(double connect_timeout, double command_timeout) {
  amq::RedisOptions o;
  o.connect_timeout = std::chrono::milliseconds(static_cast<int64_t>(connect_timeout * 1000));
  o.command_timeout = std::chrono::milliseconds(static_cast<int64_t>(command_timeout * 1000));
  return o;
}

void register_redis(py::module_& m) {
  py::class_<PyRedis>(m, "RedisBloomFilter",
      "A scalable Bloom filter kept in Redis (the C++ amq::RedisBloomFilter), shared by every process "
      "that reaches the server: the in-memory ScalableBloomFilter's layers, bit for bit. Creating one "
      "that exists opens it (amq.IncompatibleError if its parameters differ); create=False only opens "
      "(amq.NotFoundError if absent). Batch calls are one round trip per 8192 keys. url: "
      "redis://[user:password@]host:port[/db].")
      .def(py::init([](const std::string& url, const std::string& name, uint64_t capacity, double fpp,
                       double growth, double tightening, uint64_t seed, bool create, double connect_timeout,
                       double command_timeout) {
             auto p = std::make_unique<PyRedis>();
             const amq::RedisOptions o = redis_options(connect_timeout, command_timeout);
             py::gil_scoped_release nogil;
             if (create) {
               amq::RedisBloomFilter::Params params;
               params.initial_capacity = capacity;
               params.fpp = fpp;
               params.growth = growth;
               params.tightening = tightening;
               p->f = std::make_unique<amq::RedisBloomFilter>(amq::RedisBloomFilter::create(url, name, params, seed, o));
             } else {
               p->f = std::make_unique<amq::RedisBloomFilter>(amq::RedisBloomFilter::open(url, name, o));
             }
             return p;
           }),
           py::arg("url"), py::arg("name"), py::arg("capacity") = 1000, py::arg("fpp") = 0.01, py::kw_only(),
           py::arg("growth") = 2.0, py::arg("tightening") = 0.5, py::arg("seed") = 0, py::arg("create") = true,
           py::arg("connect_timeout") = 3.0, py::arg("command_timeout") = 30.0)
      .def("add", [](PyRedis& r, py::object key) {
        KeyScratch scratch;
        const Bytes k = key_bytes(key, scratch);
        py::gil_scoped_release nogil;
        std::lock_guard lock(r.mu);
        return r.f->insert(k);
      }, py::arg("key"), "Adds a key; True if it was new (not already reported present).")
      .def("add_many", [](PyRedis& r, py::object keys) {
        KeyBatch b = key_batch(keys);
        py::gil_scoped_release nogil;
        std::lock_guard lock(r.mu);
        return r.f->insert_many(b.views);
      }, py::arg("keys"), "Adds the keys (list or array, as AmqSet.add_many); returns how many were new.")
      .def("update", [](PyRedis& r, py::args iterables) {
        for (py::handle it : iterables) {
          KeyBatch b = key_batch(it);
          py::gil_scoped_release nogil;
          std::lock_guard lock(r.mu);
          r.f->insert_many(b.views);
        }
      }, "Adds every key of each iterable or array.")
      .def("__contains__", [](PyRedis& r, py::object key) {
        KeyScratch scratch;
        const Bytes k = key_bytes(key, scratch);
        py::gil_scoped_release nogil;
        std::lock_guard lock(r.mu);
        return r.f->contains(k);
      }, py::arg("key"))
      .def("contains_many", [](PyRedis& r, py::object keys) {
        KeyBatch b = key_batch(keys);
        py::array_t<bool> out(static_cast<py::ssize_t>(b.views.size()));
        bool* data = out.mutable_data();
        {
          py::gil_scoped_release nogil;
          std::lock_guard lock(r.mu);
          r.f->contains_many(b.views, std::span<bool>(data, b.views.size()));
        }
        return out;
      }, py::arg("keys"), "A NumPy bool array: out[i] = keys[i] in the filter.")
      .def("info", [](PyRedis& r) {
        amq::RedisBloomInfo i;
        {
          py::gil_scoped_release nogil;
          std::lock_guard lock(r.mu);
          i = r.f->info();
        }
        py::dict d;
        d["name"] = i.name;
        d["kind"] = std::string(amq::kind_name(i.kind));
        d["layers"] = i.layers.size();
        d["capacity"] = i.capacity;
        d["items"] = i.items;
        d["bits"] = i.bits;
        d["fpp_expected"] = i.fpp_expected;
        d["seed"] = i.seed;
        d["ttl_ms"] = i.ttl_ms;
        return d;
      }, "The filter's layers, capacity, items added, bits, expected rate and time to live.")
      .def("expire", [](PyRedis& r, double seconds) {
        py::gil_scoped_release nogil;
        std::lock_guard lock(r.mu);
        r.f->expire(std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
      }, py::arg("seconds"), "Sets (or with seconds <= 0 removes) an expiry on every key of the filter.")
      .def("destroy", [](PyRedis& r) {
        py::gil_scoped_release nogil;
        std::lock_guard lock(r.mu);
        return r.f->destroy();
      }, "Deletes the filter from Redis; True if it existed.")
      .def("__repr__", [](PyRedis& r) {
        amq::RedisBloomInfo i;
        {
          py::gil_scoped_release nogil;
          std::lock_guard lock(r.mu);
          i = r.f->info();
        }
        char rate[32];
        std::snprintf(rate, sizeof rate, "%.3g", i.fpp_expected);
        return "<amq.RedisBloomFilter name=" + i.name + " items=" + std::to_string(i.items) +
               " bits=" + std::to_string(i.bits) + " fpp=" + rate + ">";
      })
      .def_static("push", [](const std::string& url, const std::string& name, const PySet& set) {
        const std::vector<std::byte> file = [&] {
          std::shared_lock lock(set.mu);
          return set.set->serialize();
        }();
        py::gil_scoped_release nogil;
        amq::RedisBloomFilter::push(url, name, file);
      }, py::arg("url"), py::arg("name"), py::arg("set"),
      "Uploads a ScalableBloomFilter or (amq-format) BloomFilter as the Redis filter NAME.")
      .def_static("pull", [](const std::string& url, const std::string& name) {
        std::vector<std::byte> file;
        {
          py::gil_scoped_release nogil;
          file = amq::RedisBloomFilter::pull(url, name);
        }
        return wrap(amq::load_set(file, "auto"));
      }, py::arg("url"), py::arg("name"), "Downloads the Redis filter NAME as a local set, byte-identical to what was pushed.");
}

// ---- registration -----------------------------------------------------------------
const char* kKeysDoc =
    "Keys are str (hashed as UTF-8), bytes or any bytes-like object, or int (64-bit: "
    "0..2**64-1, negatives as two's complement, hashed as 8 bytes little-endian), hashed "
    "by amq itself, never with Python's hash(): a saved set answers the same in every "
    "process and the same as the amq CLI and the C++ library.";

template <Kind K>
void register_kind(py::module_& m, const char* name, const char* doc) {
  auto cls = py::class_<KindSet<K>, PySet>(m, name, doc);
  if constexpr (is_dynamic_kind(K)) {
    constexpr bool scalable = K == Kind::scalable_bloom || K == Kind::scalable_cuckoo || K == Kind::expandable;
    auto make = [](uint64_t capacity, double fpp, uint64_t seed, std::optional<std::string> key_type,
                   std::string format, py::kwargs options) {
      auto p = std::make_unique<KindSet<K>>();
      p->set = build(K, build_options(capacity, fpp, seed, key_type, format, options), KeyBatch{});
      return p;
    };
    const char* init_doc =
        "Creates an empty set sized for `capacity` keys at false-positive rate `fpp`. Other "
        "keyword options are the kind's (as the CLI's, with _ for -: fingerprint_bits=12).";
    if constexpr (scalable)
      cls.def(py::init(make), py::arg("capacity") = 1000, py::arg("fpp") = 0.01, py::kw_only(), py::arg("seed") = 0,
              py::arg("key_type") = py::none(), py::arg("format") = "amq", init_doc);
    else
      cls.def(py::init(make), py::arg("capacity"), py::arg("fpp") = 0.01, py::kw_only(), py::arg("seed") = 0,
              py::arg("key_type") = py::none(), py::arg("format") = "amq", init_doc);
    cls.def("add", [](PySet& s, py::object key) {
              KeyScratch scratch;
              const Bytes k = key_bytes(key, scratch);
              std::unique_lock lock(s.mu);
              s.set->insert(k);
            }, py::arg("key"), "Adds a key. Raises amq.FullError if the set cannot take it (the set is then unchanged).");
    cls.def("update", [](PySet& s, py::args iterables) {
              for (py::handle it : iterables) add_many(s, py::reinterpret_borrow<py::object>(it));
            }, "Adds every key of each iterable or array (as add_many).");
    cls.def("add_many", &add_many, py::arg("keys"),
            "Adds every key of a list/iterable of keys, a NumPy int64/uint64 array (read in place) or a "
            "fixed-width bytes array (dtype 'S'). The GIL is released while the keys are inserted. If a "
            "key does not fit (amq.FullError), the keys before it stay added.");
  } else {
    cls.def(py::init([](py::object keys, double fpp, uint64_t seed, std::optional<std::string> key_type,
                        std::string format, py::kwargs options) {
              KeyBatch b = key_batch(keys);
              amq::BuildOptions o = build_options(std::nullopt, fpp, seed, key_type, format, options);
              if (!key_type && !b.views.empty()) {
                if (b.all_ints) o.key_type = KeyType::u64;
                else if (b.all_strings) o.key_type = KeyType::str;
              }
              auto p = std::make_unique<KindSet<K>>();
              p->set = build(K, o, b);
              return p;
            }),
            py::arg("keys"), py::arg("fpp") = 0.01, py::kw_only(), py::arg("seed") = 0,
            py::arg("key_type") = py::none(), py::arg("format") = "amq",
            "Builds the set from an iterable or array of keys (it takes no adds afterwards). The key "
            "type recorded in the file is u64 when every key is an int, str when every key is str/bytes.");
  }
  if constexpr (has_erase(K)) {
    cls.def("remove", [](PySet& s, py::object key) {
              KeyScratch scratch;
              const Bytes k = key_bytes(key, scratch);
              std::unique_lock lock(s.mu);
              if (!s.set->erase(k)) throw py::key_error(py::repr(key));
            }, py::arg("key"),
            "Removes one copy of a key; KeyError if none is found. Remove only keys that were added: "
            "removing a false positive removes another key's fingerprint.");
    cls.def("discard", [](PySet& s, py::object key) {
              KeyScratch scratch;
              const Bytes k = key_bytes(key, scratch);
              std::unique_lock lock(s.mu);
              return s.set->erase(k);
            }, py::arg("key"), "Removes one copy of a key if found; returns whether one was.");
  }
  if constexpr (exact_count(K)) {
    cls.def("__len__", [](const PySet& s) {
      std::shared_lock lock(s.mu);
      return s.info().items;
    }, "The number of keys held (for dynamic kinds, the adds less the removes).");
  }
  if constexpr (has_merge(K)) {
    cls.def("union", [](const PySet& a, const KindSet<K>& b) { return wrap(merged(a, b)); }, py::arg("other"),
            "A new filter holding the keys of both (their bits OR-ed); both must have the same geometry "
            "(capacity, fpp, seed), else amq.IncompatibleError.");
    cls.def("__or__", [](const PySet& a, const KindSet<K>& b) { return wrap(merged(a, b)); }, py::is_operator());
    cls.def("__ior__", [](py::object self, const KindSet<K>& b) {
              PySet& a = self.cast<PySet&>();
              auto s = merged(a, b);
              std::unique_lock lock(a.mu);
              a.set = std::move(s);
              return self;
            }, py::is_operator());
  }
  if constexpr (K == Kind::succinct) {
    cls.def_static("open", [](py::object path_obj) {
                     const std::string path = path_arg(path_obj);
                     std::unique_ptr<amq::AnySet> s;
                     {
                       py::gil_scoped_release nogil;
                       s = amq::open_set(path);
                     }
                     if (s->kind() != Kind::succinct)
                       throw_error(amq::Errc::wrong_kind, path + ": a " + std::string(amq::kind_name(s->kind())) +
                                                              ", not a succinct set");
                     return wrap(std::move(s), path);
                   }, py::arg("path"),
                   "Opens a SuccinctSet file memory-mapped: validated, then answered from the file's pages "
                   "without copying them.");
    cls.def_property_readonly("is_mapped", [](const PySet& s) { return trie_of(s).is_mapped(); },
                              "True if the set answers from a memory-mapped file (amq.load, SuccinctSet.open).");
    cls.def("index_of", [](const PySet& s, py::object key) -> py::object {
              const std::string k = trie_key(s, key);
              const uint64_t i = trie_of(s).index_of(k);
              if (i == amq::SuccinctSet::npos) return py::none();
              return py::int_(i);
            }, py::arg("key"), "The key's position in sorted order (0-based), or None if absent.");
    cls.def("key_at", [](const PySet& s, int64_t i) {
              const amq::SuccinctSet& t = trie_of(s);
              const int64_t n = static_cast<int64_t>(t.size());
              if (i < 0) i += n;
              if (i < 0 || i >= n) throw py::index_error("key index out of range");
              return py_key(s.set->key_type(), t.key_at(static_cast<uint64_t>(i)));
            }, py::arg("i"), "The i-th key in sorted order (negative i counts from the end); IndexError if out of range.");
    cls.def("keys", [](const PySet& s, py::object prefix) {
              return scan(s, prefix.is_none() ? std::string() : trie_key(s, prefix), std::nullopt, std::nullopt);
            }, py::arg("prefix") = py::none(), "An iterator over the keys (starting with `prefix`), in sorted order.");
    cls.def("range", [](const PySet& s, py::object lo, py::object hi) {
              std::optional<std::string> from, to;
              if (!lo.is_none()) from = trie_key(s, lo);
              if (!hi.is_none()) to = trie_key(s, hi);
              return scan(s, "", from, to);
            }, py::arg("lo") = py::none(), py::arg("hi") = py::none(),
            "An iterator over the keys k with lo <= k < hi (None: unbounded), in sorted order.");
    cls.def("__iter__", [](const PySet& s) { return scan(s, "", std::nullopt, std::nullopt); },
            "The keys in sorted order.");
  }
}

}  // namespace

PYBIND11_MODULE(_amq, m) {
  m.doc() = "amq: compact set-membership structures (the C++ library's binding). See help(amq).";

  g_error = PyErr_NewExceptionWithDoc("amq.Error",
                                      "An error amq reported; .code is the amq::Errc name ('truncated', "
                                      "'checksum_mismatch', ...). Subclasses name each code.",
                                      PyExc_Exception, nullptr);
  m.attr("Error") = py::handle(g_error);
  for (size_t i = 0; i < kErrors.size(); ++i) {
    const std::string name = camel_error_name(kErrors[i].name);
    const std::string qualified = "amq." + name;
    py::tuple bases = kErrors[i].code == amq::Errc::invalid_argument
                          ? py::make_tuple(py::handle(g_error), py::handle(PyExc_ValueError))
                          : py::make_tuple(py::handle(g_error));
    const std::string doc = std::string(kErrors[i].doc) + " (.code '" + kErrors[i].name + "')";
    g_error_classes[i] = PyErr_NewExceptionWithDoc(qualified.c_str(), doc.c_str(), bases.ptr(), nullptr);
    m.attr(name.c_str()) = py::handle(g_error_classes[i]);
  }
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const amq::Error& e) {
      raise_amq_error(e);
    }
  });

  py::class_<KeyIterator>(m, "KeyIterator", "An iterator over a SuccinctSet's keys, in sorted order.")
      .def("__iter__", [](KeyIterator& it) -> KeyIterator& { return it; })
      .def("__next__", [](KeyIterator& it) {
        if (it.it == std::default_sentinel) throw py::stop_iteration();
        py::object k = py_key(it.type, *it.it);
        ++it.it;
        return k;
      });

  py::class_<PySet> base(m, "AmqSet",
                         (std::string("The interface every amq set shares (the C++ amq::AnySet). ") + kKeysDoc).c_str());
  base.def_property_readonly("kind", [](const PySet& s) { return std::string(amq::kind_name(s.set->kind())); },
                             "The kind's name as the CLI spells it: 'bloom', 'cuckoo', ...")
      .def_property_readonly("key_type", [](const PySet& s) { return std::string(amq::key_type_name(s.set->key_type())); },
                             "The key type recorded in the file: 'str', 'u64', 'hex' or 'unknown'.")
      .def("__contains__", &contains, py::arg("key"), "True if the key may be in the set (no false negatives).")
      .def("contains", &contains, py::arg("key"), "Same as `key in set`.")
      .def("contains_many", &contains_many, py::arg("keys"),
           "A NumPy bool array: out[i] = keys[i] in set. `keys` is a list/iterable of keys, a NumPy "
           "int64/uint64 array (read in place) or a fixed-width bytes array (dtype 'S'). The GIL is "
           "released during the lookups.")
      .def("info", &info_dict, "What `amq info` shows: kind, format, key type, items, bytes, bits per key, "
                               "expected false-positive rate, the kind's parameters.")
      .def_property_readonly("fpp", [](const PySet& s) {
            std::shared_lock lock(s.mu);
            return s.info().fpp_expected;
          }, "The false-positive rate to expect now (0 for exact sets).")
      .def_property_readonly("nbytes", [](const PySet& s) {
            std::shared_lock lock(s.mu);
            return s.info().bytes;
          }, "The size of the set's file, in bytes.")
      .def_property_readonly("is_dynamic", [](const PySet& s) { return s.set->is_dynamic(); },
                             "True if the set takes adds.")
      .def("__bytes__", &to_bytes, "The set's file, in the format it was built or loaded in (amq.loads reads it).")
      .def("save", [](const PySet& s, py::object path_obj) {
            const std::string path = path_arg(path_obj);
            py::gil_scoped_release nogil;  // before the lock: never wait for the GIL holding it
            std::shared_lock lock(s.mu);
            s.set->write_to([&](std::span<const std::byte> data) { amq::write_file_atomic(path, data); });
          }, py::arg("path"), "Writes the set's file atomically (the CLI and amq.load read it).")
      .def("__reduce__", [](py::object self) {
            return py::make_tuple(py::module_::import("amq").attr("loads"), py::make_tuple(self.attr("__bytes__")()));
          })
      .def("__repr__", [](py::object self) {
            return repr(self.cast<const PySet&>(), py::str(py::type::of(self).attr("__name__")).cast<std::string>().c_str());
          });

  register_kind<Kind::bloom>(m, "BloomFilter",
      "A Bloom filter bit for bit as Guava's: sized as Guava sizes it (m = -n ln p / ln(2)^2 bits, "
      "k = round(m/n ln 2) probes, Murmur3 128), so format='guava' writes Guava's writeTo stream, which "
      "Java's BloomFilter.readFrom reads, and amq.load reads Guava's files.\n\n"
      "Guarantees: no false negatives; the false-positive rate is about fpp at `capacity` keys and rises "
      "past it (info()['fpp_expected'] tells the rate now). No removes; the count is an estimate "
      "(info()['items']), so there is no len(). a | b, a.union(b) and a |= b merge filters of the same "
      "capacity and fpp (amq.IncompatibleError otherwise).");
  register_kind<Kind::blocked_bloom>(m, "BlockedBloomFilter",
      "A split-block Bloom filter (Parquet's layout): each key sets 8 bits in one 32-byte block, so a "
      "lookup reads one cache line. About 1.5x the bits of a BloomFilter for the same rate, and faster.\n\n"
      "Guarantees: no false negatives; rate about fpp at `capacity` keys. parquet=True hashes as Parquet "
      "(XXH64, seed 0) and format='parquet' writes the raw bitset a Parquet file embeds. Merges (|) with "
      "a filter of the same size and seed.");
  register_kind<Kind::scalable_bloom>(m, "ScalableBloomFilter",
      "A Bloom filter that grows by layers (Almeida et al.): layer i holds capacity * growth^i keys at "
      "rate fpp * (1 - tightening) * tightening^i, so the overall false-positive rate stays below fpp at "
      "any number of keys.\n\nGuarantees: no false negatives; never full. It counts the adds it did not "
      "find present (a false positive goes uncounted): info()['items'], no len().");
  register_kind<Kind::cuckoo>(m, "CuckooFilter",
      "A cuckoo filter (Fan et al. 2014): fingerprints in a bucketed cuckoo hash table. Unlike a Bloom "
      "filter it removes keys, and below ~3% it is smaller and faster.\n\n"
      "Guarantees: no false negatives after any sequence of add and remove of keys that were added "
      "(k is in the filter while added more times than removed). When an add cannot place its "
      "fingerprint it raises amq.FullError and the filter is left exactly as it was. The rate is at most "
      "2b/2^f (f-bit fingerprints, b slots a bucket); fills to ~95% of its slots (b = 4). Each add of a "
      "key stores one more copy (up to 2b). Removing a key never added may remove another key's "
      "fingerprint and cause its false negative: remove only keys you added. len() is adds - removes.");
  register_kind<Kind::scalable_cuckoo>(m, "ScalableCuckooFilter",
      "Cuckoo filters that grow by layers: adds and removes (of added keys) without a fixed capacity, "
      "the rate staying below fpp.\n\nGuarantees: no false negatives while only added keys are removed; "
      "never full. len() is adds - removes.");
  register_kind<Kind::gcs>(m, "GolombCodedSet",
      "A static Golomb-coded set (BIP158-style): the sorted hashes of the keys, Golomb-Rice coded. The "
      "smallest filter for its rate (~1.5 + log2(1/fpp) bits a key); lookups decode, so slower. Built "
      "from an iterable or array of keys; no adds. format='bip158' (siphash_key=...) and "
      "'cache-digest' write those outside formats.\n\nGuarantees: no false negatives; rate about fpp.");
  register_kind<Kind::succinct>(m, "SuccinctSet",
      "A static, exact, ordered set of keys: a LOUDS trie with tails, about the size of the keys "
      "compressed. `in` has no false positives. index_of, key_at, keys(prefix=...), range(lo, hi) and "
      "iteration give the keys in byte order (ints numerically: a set of int keys stores them "
      "big-endian). SuccinctSet.open(path) answers from the memory-mapped file without copying it.");
  register_kind<Kind::binary_fuse>(m, "BinaryFuseFilter",
      "A static binary fuse filter (Graf & Lemire 2022): ~1.13 log2(1/fpp) bits a key and three memory "
      "reads a lookup. Built from an iterable or array of keys; no adds.\n\nGuarantees: no false "
      "negatives; rate 2^-f with f-bit fingerprints.");
  register_kind<Kind::ribbon>(m, "RibbonFilter",
      "A static standard Ribbon filter (Dillinger & Walzer 2021): within a few percent of the space "
      "bound at any rate, fractional bits a key included. Built from an iterable or array of keys; no adds.\n\nGuarantees: no false negatives; "
      "rate about fpp.");
  register_kind<Kind::expandable>(m, "ExpandableFilter",
      "A filter that grows without a capacity by doubling one bucketed cuckoo table in place "
      "(InfiniFilter's idea): a lookup reads two buckets however far it has grown, and it removes keys; "
      "the rate stays below fpp at any size.\n\nGuarantees: no false negatives while only added "
      "keys are removed; len() is adds - removes.");
  for (const char* name : {"AmqSet", "KeyIterator", "BloomFilter", "BlockedBloomFilter", "ScalableBloomFilter",
                           "CuckooFilter", "ScalableCuckooFilter", "GolombCodedSet", "SuccinctSet",
                           "BinaryFuseFilter", "RibbonFilter", "ExpandableFilter"})
    m.attr(name).attr("__module__") = "amq";

  register_log_store(m);
  register_redis(m);

  m.def("loads", &loads, py::arg("data"), py::arg("format") = "auto",
        "Reads a set from its file's bytes: an amq container of any kind, or a Guava Bloom filter "
        "(format 'auto'); 'amq', 'guava', 'parquet' (a raw split-block bitset), 'bip158' (with "
        "siphash_key=32 hex digits, golomb_p, golomb_m) or 'cache-digest' insist on one. Raises an "
        "amq.Error on any malformed input.");
  m.def("load", &load, py::arg("path"), py::arg("format") = "auto",
        "Reads a set file (as loads); a SuccinctSet, BinaryFuseFilter or RibbonFilter file is memory-mapped.");
  m.attr("LogStore").attr("__module__") = "amq";
  m.attr("RedisBloomFilter").attr("__module__") = "amq";
  m.def("_cxx_contains_many_seconds", [](const PySet& s, py::object keys, int repeats) {
    // The C++ side of python/bench_python.py: AnySet::contains_many on keys already in
    // amq's form, timed without the binding (the best of `repeats` runs).
    KeyBatch b = key_batch(keys);
    std::vector<char> out(b.views.size());
    double best = 1e300;
    py::gil_scoped_release nogil;
    std::shared_lock lock(s.mu);
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      s.set->contains_many(b.views, std::span<bool>(reinterpret_cast<bool*>(out.data()), out.size()));
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
  }, py::arg("set"), py::arg("keys"), py::arg("repeats") = 5, "Benchmark helper (python/bench_python.py).");
  m.def("kinds", [] {
    std::vector<std::string> out;
    for (Kind k : amq::all_kinds()) out.emplace_back(amq::kind_name(k));
    return out;
  }, "The kinds this build knows, as the CLI names them.");
}
