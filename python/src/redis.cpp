#include "redis.hpp"

#include <pybind11/numpy.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <vector>

#include "amq/redis_bloom_filter.hpp"
#include "keys.hpp"
#include "sets.hpp"

namespace amq_python {
namespace {

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

amq::RedisBloomInfo redis_info(PyRedis& r) {
  py::gil_scoped_release nogil;
  std::lock_guard lock(r.mu);
  return r.f->info();
}

}  // namespace

// A flat list of bindings: the class's methods.
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
        const amq::RedisBloomInfo i = redis_info(r);
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
        const amq::RedisBloomInfo i = redis_info(r);
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
  m.attr("RedisBloomFilter").attr("__module__") = "amq";
}

}  // namespace amq_python
