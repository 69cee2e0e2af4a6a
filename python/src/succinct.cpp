// SuccinctSet's ordered queries: a SuccinctSet is an AnySet like any other for `in`,
// add and save; its ordered queries go to the typed amq::SuccinctSet held beside it.
#include "succinct.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

#include "errors.hpp"
#include "keys.hpp"

namespace amq_python {
namespace {

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

}  // namespace

void map_succinct_file(PySet& s, const std::string& path) {
  py::gil_scoped_release nogil;
  s.trie = std::make_shared<const amq::SuccinctSet>(amq::SuccinctSet::open(path, false));
}

void register_key_iterator(py::module_& m) {
  py::class_<KeyIterator>(m, "KeyIterator", "An iterator over a SuccinctSet's keys, in sorted order.")
      .def("__iter__", [](KeyIterator& it) -> KeyIterator& { return it; })
      .def("__next__", [](KeyIterator& it) {
        if (it.it == std::default_sentinel) throw py::stop_iteration();
        py::object k = py_key(it.type, *it.it);
        ++it.it;
        return k;
      });
}

void def_ordered_queries(py::class_<KindSet<Kind::succinct>, PySet>& cls) {
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

}  // namespace amq_python
