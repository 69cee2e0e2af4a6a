// A tiny program built against the installed amq, every component (see
// tests/install_test.sh): it builds a Bloom filter, checks a key, reads the filter back
// from both formats, and round-trips an HTTP Cache Digest (amq::formats, which registers
// itself with core when linked).
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
  const std::string url = "https://example.com/";
  const std::vector<amq::Bytes> urls{amq::as_bytes(url)};
  amq::BuildOptions digest_options;
  digest_options.format = "cache-digest";
  const auto digest = amq::build_set(amq::Kind::gcs, digest_options, urls);
  const auto digest_back = amq::load_set(digest->serialize(), amq::LoadOptions{.format = "cache-digest", .extra = {}});
  if (!digest_back->contains(urls[0])) {
    std::puts("consumer: the cache digest lost its URL");
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
