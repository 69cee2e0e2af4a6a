// amq._amq's SuccinctSet extras: the ordered queries (index_of, key_at, keys, range,
// iteration) answered by the typed amq::SuccinctSet, and their KeyIterator.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "sets.hpp"

namespace amq_python {

namespace py = pybind11;

// Gives `s` the typed set of the file at `path` (memory-mapped), for its ordered queries.
void map_succinct_file(PySet& s, const std::string& path);

// KeyIterator (before the SuccinctSet class, whose methods return it).
void register_key_iterator(py::module_& m);

// SuccinctSet's methods beyond AmqSet's.
void def_ordered_queries(py::class_<KindSet<Kind::succinct>, PySet>& cls);

}  // namespace amq_python
