// amq._amq — the Python binding of amq (pybind11). Every structure is an amq::AnySet
// behind a Python class named as the C++ one; keys are hashed by amq exactly as the
// C++ library and the CLI hash them (str as its UTF-8 bytes, bytes as they are, int as
// its 8 bytes little-endian), never with Python's hash(). docs/decisions/0038 explains
// the choices; python/amq/__init__.pyi documents the interface.
//
// The rooms: errors.cpp (exceptions), keys.cpp (keys and other arguments), sets.cpp
// (AmqSet and the kind classes, load/loads), succinct.cpp (SuccinctSet's ordered
// queries), log_store.cpp (LogStore), redis.cpp (RedisBloomFilter).
#include <pybind11/pybind11.h>

#include "errors.hpp"
#include "log_store.hpp"
#include "redis.hpp"
#include "sets.hpp"
#include "succinct.hpp"

PYBIND11_MODULE(_amq, m) {
  using namespace amq_python;
  m.doc() = "amq: compact set-membership structures (the C++ library's binding). See help(amq).";
  // In this order: a class is registered before the signatures that name it.
  register_errors(m);
  register_key_iterator(m);
  register_sets(m);
  register_log_store(m);
  register_redis(m);
  register_set_functions(m);
}
