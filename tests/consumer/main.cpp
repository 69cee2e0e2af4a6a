// A tiny program built against the installed amq (see tests/install_test.sh): it
// builds a Bloom filter, checks a key, and reads the filter back from both formats.
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
    std::puts("consumer: false negative");
    return 1;
  }
  int absent_hits = 0;
  for (int i = 0; i < 1000; ++i) absent_hits += f.contains("absent-" + std::to_string(i));
  if (absent_hits > 50) {
    std::printf("consumer: %d false positives in 1000\n", absent_hits);
    return 1;
  }
  auto from_amq = amq::load_set(f.serialize());
  auto from_guava = amq::load_set(f.to_guava());
  if (!from_amq->contains(amq::as_bytes("apple")) || !from_guava->contains(amq::as_bytes("apple"))) {
    std::puts("consumer: reloaded filter lost a key");
    return 1;
  }
  try {
    amq::load_set(std::vector<std::byte>(3));  // not a filter
    std::puts("consumer: garbage was accepted");
    return 1;
  } catch (const amq::Error& e) {
    std::printf("consumer: ok (garbage rejected: %s)\n", e.what());
  }
  return 0;
}
