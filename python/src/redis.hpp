// amq._amq's RedisBloomFilter: a scalable Bloom filter kept in Redis (amq::RedisBloomFilter).
#pragma once

#include <pybind11/pybind11.h>

namespace amq_python {

void register_redis(pybind11::module_& m);

}  // namespace amq_python
