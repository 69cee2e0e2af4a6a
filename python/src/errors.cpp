// amq.Error, and one subclass per amq::Errc (InvalidArgumentError is also a
// ValueError); each instance carries .code, the Errc's name ("checksum_mismatch").
#include "errors.hpp"

#include <array>
#include <cstring>
#include <exception>

namespace amq_python {
namespace {

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

}  // namespace

void throw_error(amq::Errc code, const std::string& message) { throw amq::Error(code, message); }

void register_errors(py::module_& m) {
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
}

}  // namespace amq_python
