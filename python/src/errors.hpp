// amq._amq's exceptions: amq.Error and one subclass per amq::Errc, and the translator
// that raises them for an amq::Error thrown by the library.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "amq/error.hpp"

namespace amq_python {

namespace py = pybind11;

// Defines amq.Error and its subclasses on `m` and registers the translator of amq::Error.
void register_errors(py::module_& m);

[[noreturn]] void throw_error(amq::Errc code, const std::string& message);

}  // namespace amq_python
