// The C++ side of the Python cross-tests (python/tests/test_amq.py): reads a set file
// written by Python through the typed C++ classes, and writes one for Python to read.
//
//   cxx_peer query KIND FILE KEY...   prints 1 or 0 per key, one a line
//   cxx_peer build KIND FILE KEY...   writes a set of KIND holding the keys
// KIND is bloom, cuckoo or succinct. A key "u:N" is the 64-bit integer N (a uint64_t
// key, 8 bytes little-endian; negative N as its two's complement); any other key is
// its bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <variant>
#include <vector>

#include "amq/bloom_filter.hpp"
#include "amq/cuckoo_filter.hpp"
#include "amq/error.hpp"
#include "amq/file_io.hpp"
#include "amq/succinct_set.hpp"

namespace {

struct Key {
  bool is_int = false;
  uint64_t u = 0;
  std::string s;
  amq::KeyView view() const { return is_int ? amq::KeyView(u) : amq::KeyView(s); }
};

Key parse(const char* arg) {
  Key k;
  const std::string a(arg);
  if (a.rfind("u:", 0) == 0) {
    k.is_int = true;
    k.u = a[2] == '-' ? static_cast<uint64_t>(std::stoll(a.substr(2))) : std::stoull(a.substr(2));
  } else {
    k.s = a;
  }
  return k;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: cxx_peer query|build KIND FILE KEY...\n");
    return 2;
  }
  const std::string op = argv[1], kind = argv[2], path = argv[3];
  std::vector<Key> keys;
  for (int i = 4; i < argc; ++i) keys.push_back(parse(argv[i]));
  try {
    if (op == "query") {
      const std::vector<std::byte> file = amq::read_file(path);
      for (const Key& k : keys) {
        bool in = false;
        if (kind == "bloom") in = amq::BloomFilter::load(file).contains(k.view());
        else if (kind == "cuckoo") in = amq::CuckooFilter::load(file).contains(k.view());
        else if (kind == "succinct") in = amq::SuccinctSet::load(file).contains(k.view());
        else return 2;
        std::printf("%d\n", in ? 1 : 0);
      }
      return 0;
    }
    if (op == "build") {
      std::vector<std::byte> out;
      if (kind == "bloom") {
        auto f = amq::BloomFilter::create(1000, 0.001);
        for (const Key& k : keys) f.insert(k.view());
        out = f.serialize();
      } else if (kind == "cuckoo") {
        auto f = amq::CuckooFilter::create(1000, 0.001);
        for (const Key& k : keys) f.insert(k.view());
        out = f.serialize();
      } else {
        return 2;
      }
      amq::write_file_atomic(path, out);
      return 0;
    }
  } catch (const amq::Error& e) {
    std::fprintf(stderr, "cxx_peer: %s\n", e.what());
    return 2;
  }
  return 2;
}
