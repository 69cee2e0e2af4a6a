#include "keys.hpp"

#include <bit>
#include <cctype>
#include <cstring>

#include "errors.hpp"

namespace amq_python {
namespace {

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

}  // namespace

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

KeyBatch key_batch(py::handle keys, bool lazy_ok) {
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

std::string path_arg(py::handle p) {
  py::object fs = py::reinterpret_steal<py::object>(PyOS_FSPath(p.ptr()));
  if (!fs) throw py::error_already_set();
  py::object b = PyBytes_Check(fs.ptr()) ? fs : py::reinterpret_steal<py::object>(PyUnicode_EncodeFSDefault(fs.ptr()));
  if (!b) throw py::error_already_set();
  std::string out(PyBytes_AS_STRING(b.ptr()), PyBytes_GET_SIZE(b.ptr()));
  if (out.find('\0') != std::string::npos) throw py::value_error("embedded null byte in a path");
  return out;
}

}  // namespace amq_python
