#include "log_store.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "amq/log_store.hpp"
#include "errors.hpp"
#include "keys.hpp"

namespace amq_python {
namespace {

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

void store_put(PyLogStore& s, py::object key, py::object value) {
  KeyScratch scratch;
  const Bytes k = key_bytes(key, scratch);
  const std::string v = value_bytes(value);
  amq::LogStore& st = s.get();
  py::gil_scoped_release nogil;
  st.put(k, amq::as_bytes(v));
}

std::vector<std::pair<std::string, std::string>> store_items(PyLogStore& s) {
  amq::LogStore& st = s.get();
  std::vector<std::pair<std::string, std::string>> out;
  py::gil_scoped_release nogil;
  st.for_each([&](Bytes k, Bytes v) { out.emplace_back(amq::as_chars(k), amq::as_chars(v)); });
  return out;
}

py::bytes as_pybytes(const std::string& s) { return py::bytes(s.data(), s.size()); }

}  // namespace

// A flat list of bindings: the class's methods.
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
      .def("__setitem__", &store_put)
      .def("put", &store_put, py::arg("key"), py::arg("value"), "Sets key to value (as db[key] = value).")
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
  m.attr("LogStore").attr("__module__") = "amq";
}

}  // namespace amq_python
