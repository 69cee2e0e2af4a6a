// A program that wants a Bloom filter and links amq::core alone (see
// tests/install_test.sh, which checks that it needs neither libcrypto nor hiredis): it
// builds a filter, checks a key, reads it back through AnySet, and finds that the HTTP
// Cache Digest, which is amq::formats', is refused with a clear error.
#include <amq/any_set.hpp>
#include <amq/bloom_filter.hpp>
#include <amq/error.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main() {
  auto f = amq::BloomFilter::create(1000, 0.01);
  f.insert("apple");
  f.insert(uint64_t{42});
  if (!f.contains("apple") || !f.contains(uint64_t{42})) {
    std::puts("consumer-core: false negative");
    return 1;
  }
  auto from_amq = amq::load_set(f.serialize());
  auto from_guava = amq::load_set(f.to_guava());
  if (!from_amq->contains(amq::as_bytes("apple")) || !from_guava->contains(amq::as_bytes("apple"))) {
    std::puts("consumer-core: reloaded filter lost a key");
    return 1;
  }
  try {
    const std::string digest = "AKA\n";
    amq::load_set(amq::as_bytes(digest), amq::LoadOptions{.format = "cache-digest", .extra = {}});
    std::puts("consumer-core: a cache digest loaded without amq::formats");
    return 1;
  } catch (const amq::Error& e) {
    if (e.code() != amq::Errc::unsupported || std::string(e.what()).find("amq::formats") == std::string::npos) {
      std::printf("consumer-core: wrong error for a cache digest: %s\n", e.what());
      return 1;
    }
    std::printf("consumer-core: ok (cache digest refused: %s)\n", e.what());
  }
  return 0;
}
