// amq._amq's LogStore: a key-value store on disk (amq::LogStore) as a Python mapping.
#pragma once

#include <pybind11/pybind11.h>

namespace amq_python {

void register_log_store(pybind11::module_& m);

}  // namespace amq_python
