// The reference for the dynamic filters' property tests: a std::unordered_multiset of
// the keys inserted, the running total, and the distinct live keys to pick erases from.
#pragma once

#include <cstdint>
#include <random>
#include <unordered_set>
#include <vector>

namespace amq::test {

class MultisetModel {
 public:
  void inserted(uint64_t k) {
    if (ms_.count(k) == 0) live_.push_back(k);
    ms_.insert(k);
    ++total_;
  }
  bool empty() const { return live_.empty(); }
  // A key with at least one copy, chosen at random; erased_picked() then removes a copy.
  uint64_t pick(std::mt19937_64& rng) {
    picked_ = static_cast<size_t>(rng() % live_.size());
    return live_[picked_];
  }
  void erased_picked() {
    const uint64_t k = live_[picked_];
    ms_.erase(ms_.find(k));
    --total_;
    if (ms_.count(k) == 0) {
      live_[picked_] = live_.back();
      live_.pop_back();
    }
  }
  uint64_t count(uint64_t k) const { return ms_.count(k); }
  uint64_t total() const { return total_; }
  const std::vector<uint64_t>& live() const { return live_; }

 private:
  std::unordered_multiset<uint64_t> ms_;
  std::vector<uint64_t> live_;
  uint64_t total_ = 0;
  size_t picked_ = 0;
};

}  // namespace amq::test
