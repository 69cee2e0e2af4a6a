// The set classes: AmqSet (the interface every kind shares, the C++ amq::AnySet) and
// one subclass per kind, with the methods its capabilities give (adds, removes, merge,
// len()); and the module functions that make sets.
#include "sets.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <span>
#include <vector>

#include "amq/blocked_bloom_filter.hpp"
#include "amq/bloom_filter.hpp"
#include "amq/detail/byte_io.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "amq/format.hpp"
#include "errors.hpp"
#include "keys.hpp"
#include "succinct.hpp"

namespace amq_python {
namespace {

constexpr bool is_dynamic_kind(Kind k) {
  return k == Kind::bloom || k == Kind::blocked_bloom || k == Kind::scalable_bloom || k == Kind::cuckoo ||
         k == Kind::scalable_cuckoo || k == Kind::expandable;
}
constexpr bool has_erase(Kind k) { return k == Kind::cuckoo || k == Kind::scalable_cuckoo || k == Kind::expandable; }
constexpr bool has_merge(Kind k) { return k == Kind::bloom || k == Kind::blocked_bloom; }
// A scalable Bloom filter counts the adds it did not find already present: a false
// positive goes uncounted, so it has no len() either.
constexpr bool exact_count(Kind k) { return k != Kind::bloom && k != Kind::blocked_bloom && k != Kind::scalable_bloom; }

template <Kind K>
py::object wrap_kind(std::unique_ptr<amq::AnySet> s, std::string path) {
  auto p = std::make_unique<KindSet<K>>();
  p->set = std::move(s);
  if constexpr (K == Kind::succinct) {
    // The ordered queries' typed set maps the same file now (its checksum was just
    // verified), not later, when the path may name a replaced file.
    if (!path.empty()) map_succinct_file(*p, path);
  }
  return py::cast(std::move(p));
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
    // Files written before Mix64Hasher name XXH3 (id 1): merge them with that type.
    const std::vector<std::byte> sa = a.set->serialize(), sb = b.set->serialize();
    auto merged = [&](auto x) {
      x.merge(decltype(x)::load(sb));
      return x.serialize();
    };
    const bool xxh3 = amq::detail::load_le32(amq::parse_container(sa, Kind::blocked_bloom).params.data()) ==
                      amq::Xxh3Hasher::id;
    out = xxh3 ? merged(amq::Xxh3BlockedBloomFilter::load(sa)) : merged(amq::BlockedBloomFilter::load(sa));
  }
  const KeyType kt = a.set->key_type();
  if (kt != KeyType::unknown && amq::has_container_magic(out)) amq::set_container_key_type(out, kt);
  return amq::load_set(out, fa == "guava" ? "guava" : "amq");
}

const char* kKeysDoc =
    "Keys are str (hashed as UTF-8), bytes or any bytes-like object, or int (64-bit: "
    "0..2**64-1, negatives as two's complement, hashed as 8 bytes little-endian), hashed "
    "by amq itself, never with Python's hash(): a saved set answers the same in every "
    "process and the same as the amq CLI and the C++ library.";

template <Kind K>
using KindClass = py::class_<KindSet<K>, PySet>;

// A dynamic kind: created empty, then takes adds.
template <Kind K>
void def_adds(KindClass<K>& cls) {
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
}

// A static kind: built once from its keys.
template <Kind K>
void def_build_from_keys(KindClass<K>& cls) {
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

template <Kind K>
void def_removes(KindClass<K>& cls) {
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

template <Kind K>
void def_merge(KindClass<K>& cls) {
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

template <Kind K>
void register_kind(py::module_& m, const char* name, const char* doc) {
  auto cls = KindClass<K>(m, name, doc);
  if constexpr (is_dynamic_kind(K))
    def_adds<K>(cls);
  else
    def_build_from_keys<K>(cls);
  if constexpr (has_erase(K)) def_removes<K>(cls);
  if constexpr (exact_count(K)) {
    cls.def("__len__", [](const PySet& s) {
      std::shared_lock lock(s.mu);
      return s.info().items;
    }, "The number of keys held (for dynamic kinds, the adds less the removes).");
  }
  if constexpr (has_merge(K)) def_merge<K>(cls);
  if constexpr (K == Kind::succinct) def_ordered_queries(cls);
}

// A flat list of bindings: AmqSet's methods.
void register_amq_set(py::module_& m) {
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
}

// A flat list: each kind's class and its documentation.
void register_kind_classes(py::module_& m) {
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
      "A filter that grows without a capacity one bucket at a time (linear hashing) in one bucketed cuckoo table "
      "(InfiniFilter's idea): a lookup reads two buckets however far it has grown, and it removes keys; "
      "the rate stays below fpp at any size.\n\nGuarantees: no false negatives while only added "
      "keys are removed; len() is adds - removes.");
}

}  // namespace

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

void register_sets(py::module_& m) {
  register_amq_set(m);
  register_kind_classes(m);
  for (const char* name : {"AmqSet", "KeyIterator", "BloomFilter", "BlockedBloomFilter", "ScalableBloomFilter",
                           "CuckooFilter", "ScalableCuckooFilter", "GolombCodedSet", "SuccinctSet",
                           "BinaryFuseFilter", "RibbonFilter", "ExpandableFilter"})
    m.attr(name).attr("__module__") = "amq";
}

void register_set_functions(py::module_& m) {
  m.def("loads", &loads, py::arg("data"), py::arg("format") = "auto",
        "Reads a set from its file's bytes: an amq container of any kind, or a Guava Bloom filter "
        "(format 'auto'); 'amq', 'guava', 'parquet' (a raw split-block bitset), 'bip158' (with "
        "siphash_key=32 hex digits, golomb_p, golomb_m) or 'cache-digest' insist on one. Raises an "
        "amq.Error on any malformed input.");
  m.def("load", &load, py::arg("path"), py::arg("format") = "auto",
        "Reads a set file (as loads); a SuccinctSet, BinaryFuseFilter or RibbonFilter file is memory-mapped.");
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

}  // namespace amq_python
