// amq/detail/log_index.hpp — the in-memory cuckoo index of amq::LogStore.
//
// A table of 2^k buckets of 4 slots; a slot is one 64-bit word:
//
//   bits 63..36  fingerprint: the top 28 bits of the key's 64-bit hash
//   bits 35..0   location of the key's newest record in the log (never 0; 0 = empty)
//
// A key's two candidate buckets are computed from its fingerprint alone:
//   b1 = fp mod 2^k,  b2 = b1 xor ((mix(fp) mod 2^k) | 1)
// so an insert that runs out of kicks doubles the table by re-placing every slot from
// the slot itself — the log is never read again. The index stores no keys: a lookup
// returns each slot whose fingerprint matches, and the caller confirms it by reading
// the key from the log (about 8 * 2^(k - 28) false matches per lookup: 1 in 2000 at
// 10^6 keys). Not thread-safe; LogStore guards it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <span>
#include <utility>

#include "amq/error.hpp"

namespace amq::detail {

class LogIndex {
 public:
  static constexpr int kSlots = 4;
  static constexpr int kFpBits = 28;
  static constexpr int kLocBits = 36;
  static constexpr uint64_t kLocMask = (uint64_t{1} << kLocBits) - 1;
  static constexpr int kMinLog2 = 4;
  static constexpr int kMaxLog2 = 28;
  static constexpr int kMaxKicks = 2000;

  static uint32_t fingerprint(uint64_t hash) noexcept { return static_cast<uint32_t>(hash >> kLocBits); }
  static uint32_t fp_of(uint64_t slot) noexcept { return static_cast<uint32_t>(slot >> kLocBits); }
  static uint64_t loc_of(uint64_t slot) noexcept { return slot & kLocMask; }
  static uint64_t make(uint32_t fp, uint64_t loc) noexcept { return (uint64_t{fp} << kLocBits) | loc; }

  // Room for about `expected` keys at 96% load without growing (inserts fail at
  // about 97%: 2000 kicks).
  explicit LogIndex(uint64_t expected = 0) {
    int log2 = kMinLog2;
    while (log2 < kMaxLog2 && (uint64_t{kSlots} << log2) * 96 / 100 < expected) ++log2;
    reset(log2);
  }
  LogIndex(LogIndex&&) noexcept = default;
  LogIndex& operator=(LogIndex&&) noexcept = default;

  int log2_buckets() const noexcept { return log2_; }
  uint64_t bucket_count() const noexcept { return uint64_t{1} << log2_; }
  size_t size() const noexcept { return count_; }
  size_t bytes() const noexcept { return static_cast<size_t>(bucket_count() * kSlots * sizeof(uint64_t)); }
  uint64_t grows() const noexcept { return grows_; }
  std::span<const uint64_t> raw() const noexcept { return {table_.get(), bucket_count() * kSlots}; }

  std::pair<uint64_t, uint64_t> buckets(uint32_t fp) const noexcept {
    const uint64_t mask = bucket_count() - 1;
    const uint64_t b1 = fp & mask;
    const uint64_t mix = (uint64_t{fp} * 0x9E3779B97F4A7C15ULL) >> 32;
    return {b1, b1 ^ ((mix & mask) | 1)};
  }

  // Calls visit(slot_ref) for each slot whose fingerprint is fp, until it returns true;
  // returns the slot it accepted, or nullptr.
  template <class Visit>
  uint64_t* find(uint32_t fp, Visit&& visit) {
    const auto [b1, b2] = buckets(fp);
    for (uint64_t b : {b1, b2}) {
      uint64_t* s = table_.get() + b * kSlots;
      for (int i = 0; i < kSlots; ++i)
        if (s[i] != 0 && fp_of(s[i]) == fp && visit(s[i])) return &s[i];
    }
    return nullptr;
  }
  template <class Visit>
  const uint64_t* find(uint32_t fp, Visit&& visit) const {
    return const_cast<LogIndex*>(this)->find(fp, std::forward<Visit>(visit));
  }

  // Adds a slot (the caller made sure the key is not in the index yet). Doubles the
  // table when a kick chain of kMaxKicks fails; throws Errc::full past 2^28 buckets.
  void insert(uint32_t fp, uint64_t loc) {
    uint64_t entry = make(fp, loc);
    while (!place(entry)) grow();
    ++count_;
  }

  // Empties a slot returned by find().
  void erase(uint64_t* slot) noexcept {
    *slot = 0;
    --count_;
  }

  // Rebuilds from a raw table (a snapshot): `slots` must hold 4 * 2^log2 words.
  static LogIndex from_raw(int log2, std::span<const uint64_t> slots) {
    if (log2 < kMinLog2 || log2 > kMaxLog2 || slots.size() != (uint64_t{kSlots} << log2))
      throw Error(Errc::corrupt, "log index: bad table size");
    LogIndex idx(0);
    idx.reset(log2);
    std::copy(slots.begin(), slots.end(), idx.table_.get());
    for (uint64_t b = 0; b < idx.bucket_count(); ++b)
      for (int i = 0; i < kSlots; ++i) {
        const uint64_t s = slots[b * kSlots + i];
        if (s == 0) continue;
        const auto [b1, b2] = idx.buckets(fp_of(s));
        if (b != b1 && b != b2) throw Error(Errc::corrupt, "log index: slot in a bucket it cannot hash to");
        ++idx.count_;
      }
    return idx;
  }

 private:
  struct Free {
    void operator()(uint64_t* p) const noexcept { std::free(p); }
  };

  void reset(int log2) {
    const size_t words = size_t{kSlots} << log2;
    void* p = std::aligned_alloc(64, std::max<size_t>(64, words * sizeof(uint64_t)));
    if (!p) throw std::bad_alloc();
    std::fill_n(static_cast<uint64_t*>(p), words, uint64_t{0});
    table_.reset(static_cast<uint64_t*>(p));
    log2_ = log2;
  }

  bool try_put(uint64_t b, uint64_t entry) noexcept {
    uint64_t* s = table_.get() + b * kSlots;
    for (int i = 0; i < kSlots; ++i)
      if (s[i] == 0) {
        s[i] = entry;
        return true;
      }
    return false;
  }

  // Places `entry`; on failure `entry` holds the slot left homeless and false is returned.
  bool place(uint64_t& entry) noexcept {
    auto [b1, b2] = buckets(fp_of(entry));
    if (try_put(b1, entry) || try_put(b2, entry)) return true;
    uint64_t b = (next_random() & 1) ? b1 : b2;
    for (int kick = 0; kick < kMaxKicks; ++kick) {
      uint64_t* s = table_.get() + b * kSlots;
      std::swap(entry, s[next_random() % kSlots]);
      const auto [c1, c2] = buckets(fp_of(entry));
      b = (b == c1) ? c2 : c1;
      if (try_put(b, entry)) return true;
    }
    return false;
  }

  // Doubles the table, re-placing every slot from its fingerprint; `pending` (the
  // homeless slot of a failed insert) is kept by the caller and placed afterwards.
  void grow() {
    if (log2_ >= kMaxLog2) throw Error(Errc::full, "log store index: more than 2^30 keys");
    std::unique_ptr<uint64_t[], Free> old = std::move(table_);
    const uint64_t old_words = bucket_count() * kSlots;
    int log2 = log2_ + 1;
    for (;;) {
      reset(log2);
      bool ok = true;
      for (uint64_t i = 0; i < old_words && ok; ++i) {
        uint64_t e = old[i];
        if (e != 0 && !place(e)) ok = false;
      }
      if (ok) break;
      if (++log2 > kMaxLog2) throw Error(Errc::full, "log store index: more than 2^30 keys");
    }
    ++grows_;
  }

  uint64_t next_random() noexcept {
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    return rng_;
  }

  std::unique_ptr<uint64_t[], Free> table_;
  int log2_ = 0;
  size_t count_ = 0;
  uint64_t grows_ = 0;
  uint64_t rng_ = 0x2545F4914F6CDD1DULL;
};

}  // namespace amq::detail
