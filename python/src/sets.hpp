// amq._amq's sets: one Python object per amq::AnySet, a class per kind (AmqSet the
// interface they share), and the module functions that make sets (load, loads).
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>

#include "amq/any_set.hpp"
#include "amq/format.hpp"
#include "amq/succinct_set.hpp"

namespace amq_python {

namespace py = pybind11;
using amq::Kind;

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

// The Python object of the set's kind. `path`: the file it was loaded from, if any
// (a SuccinctSet maps it for its ordered queries).
py::object wrap(std::unique_ptr<amq::AnySet> s, std::string path = {});

// AmqSet and one class per kind.
void register_sets(py::module_& m);
// load, loads, kinds and the benchmark helper.
void register_set_functions(py::module_& m);

}  // namespace amq_python
