// SuccinctSet::contains_many(): the descents of a batch of keys interleaved, per
// instruction set and per chain table, chosen once per set (amq/detail/dispatch.hpp).
#include <algorithm>

#include "amq/detail/dispatch.hpp"
#include "descent.hpp"

namespace amq {

using namespace detail::succinct;

// A single descent waits a cache miss or two at each level below the top table (the
// label bitmap's words at a select, the node's labels), and prefetching a level or
// two ahead hides only part of it. A batch has independent keys: kLanes descents run
// at once, each going on in its turn to its next select or tail compare, fetching
// what that reads (the select window from the child's sample, the labels near where
// the select will land, the leaf word, or the tail's lines), then handing over to the
// next lane. By its next turn the lines have mostly arrived. The levels are
// contains_t's; only sets of kInterleaveBytes or more come here (and tests). One
// function of ~140 lines on purpose, for contains_t's reason: a lane's start and step
// are lambdas over the batch's state, compiled inline into the one loop that turns
// the lanes.
template <bool Hw, bool WithChains>
[[gnu::always_inline]] inline size_t SuccinctSet::Batch::contains_batch_t(const SuccinctSet& self, const Probe* q,
                                                                          size_t m, bool* out) noexcept {
  constexpr unsigned kLanes = 8;
  struct Lane {
    const uint8_t* p;    // the key's byte for node v's labels
    const uint8_t* end;  // the key's end
    uint64_t v;          // the node
    uint64_t sp, rem;    // its label start: sp (known), or the (rem+1)-th one from position sp, plus 1
    bool known;          // sp is the label start (the top table's nodes, a chain's end)
    bool tail;           // v is a leaf: its tail is compared next turn
    uint32_t idx;        // the key's place in the batch
  };
  const uint8_t* const safe_end = self.labels_end_;
  Lane lane[kLanes];
  size_t next = 0, found = 0;
  // Loads key `next` into l (answering those the label maps or the single descent
  // settle); false when the batch has no more keys.
  auto start = [&](Lane& l) noexcept {
    while (next < m) {
      const size_t i = next++;
      const uint8_t* p = q[i].p;
      const size_t len = q[i].len;
      if (!self.jump_maps_ || len < 2) {  // short keys (and tiny sets): the single descent
        found += out[i] = Descent::contains_t<Hw, WithChains>(self, p, len);
        continue;
      }
      uint64_t v, st;
      if (!Descent::jump_start<Hw>(self, p, v, st)) {
        out[i] = false;
        continue;
      }
      l = {p, q[i].p + len, v, st, 0, true, false, static_cast<uint32_t>(i)};
      detail::prefetch_guess(self.louds_.words(), 8 * (st >> 6));
      detail::prefetch_guess(self.labels_, st - v);
      return true;
    }
    return false;
  };
  // Lane l's levels up to its next select (the top table's and a chain's ends cost
  // none, their lines stay cached), or its tail compare; true when its answer is out.
  auto step = [&](Lane& l) noexcept {
    uint64_t v = l.v;
    if (l.tail) {
      found += out[l.idx] = Tails::tail_equals<Hw>(self, v, l.p, static_cast<size_t>(l.end - l.p));
      return true;
    }
    uint64_t after, st;
    if (l.known) {
      st = l.sp;
      after = self.louds_.words()[st >> 6] >> (st & 63);
    } else {
      st = self.louds_.select_after<Hw>(l.sp, l.rem, after) + 1;
    }
    for (const uint8_t* p = l.p;; ++p) {
      const uint64_t k = after ? static_cast<uint64_t>(__builtin_ctzll(after)) : self.louds_.next_one(st) - st;
      if (k == 0) {
        // A leaf, maybe with a tail: fetch the tail bitmap's lines from where its
        // select starts (as tail_of_t) to just past where v's one likely lies, and
        // the tail's likely line; compare next turn.
        uint64_t tsp, trem;
        Tails::tail_select_start(self, v, tsp, trem);
        const uint64_t tg = tsp + ((trem * self.tail_ratio_) >> 16);
        for (uint64_t line = tsp >> 9; line <= (tg >> 9) + 1 && line < (tsp >> 9) + 6; ++line)
          detail::prefetch_guess(self.tail_map_.words(), 64 * line);
        detail::prefetch_guess(self.tail_, tg - v);
        l.p = p;
        l.v = v;
        l.tail = true;
        return false;
      }
      if (p == l.end) {
        found += out[l.idx] = self.leaf_.get(v);
        return true;
      }
      if constexpr (WithChains) {
        if (k == 1) {
          if (const Chains::Slot* c = Chains::headed_by(self, v)) {
            const uint64_t n = c->len;
            if (static_cast<uint64_t>(l.end - p) < n || !chain_matches(p, self.chains_->bytes.data() + c->at, n)) {
              out[l.idx] = false;
              return true;
            }
            // The chain ends at node c->end, whose labels the key's byte p[n] meets.
            p += n - 1;
            v = c->end;
            st = c->end_start;
            after = self.louds_.words()[st >> 6] >> (st & 63);
            continue;
          }
        }
      }
      const uint64_t j = find_label(self.labels_ + (st - v), k, *p, safe_end);
      if (j == k) {
        out[l.idx] = false;
        return true;
      }
      v = st - v + 1 + j;
      if (v < self.top_nodes_) {
        st = self.top_starts_[v];
        after = self.louds_.words()[st >> 6] >> (st & 63);
        continue;
      }
      const uint64_t s = v - 1;
      uint64_t sp, rem;
      Descent::select_start(self, v, kNoSample, 0, sp, rem);
      // The select reads words from the sample's on; the labels lie near the sample's
      // label index plus the nodes between (about a label a node).
      detail::prefetch_guess(self.louds_.words(), 8 * (sp >> 6));
      detail::prefetch_guess(self.louds_.words(), 8 * (sp >> 6) + 64);
      const uint64_t guess = (sp - s) + 2 * rem;
      detail::prefetch_guess(self.labels_, guess - 64);
      detail::prefetch_guess(self.labels_, guess);
      detail::prefetch_guess(self.labels_, guess + 64);
      if (p + 1 == l.end) detail::prefetch(self.leaf_.words() + (v >> 6));
      l.p = p + 1;
      l.v = v;
      l.sp = sp;
      l.rem = rem;
      l.known = false;
      return false;
    }
  };
  unsigned active = 0;
  for (; active < kLanes && start(lane[active]); ++active) {
  }
  while (active > 0) {
    for (unsigned g = 0; g < active;) {
      if (step(lane[g]) && !start(lane[g])) {
        lane[g] = lane[--active];  // the batch is spent: close the gap
        continue;
      }
      ++g;
    }
  }
  return found;
}

template <bool WithChains>
AMQ_SUCCINCT_TARGET_BMI2 size_t SuccinctSet::Batch::kernel_bmi2(const SuccinctSet& self, const Probe* q, size_t m,
                                                                bool* out) noexcept {
  return contains_batch_t<AMQ_SUCCINCT_HAS_BMI2, WithChains>(self, q, m, out);
}

template <bool WithChains>
size_t SuccinctSet::Batch::kernel_portable(const SuccinctSet& self, const Probe* q, size_t m, bool* out) noexcept {
  return contains_batch_t<false, WithChains>(self, q, m, out);
}

SuccinctSet::Batch::Fn SuccinctSet::Batch::select(bool with_chains) noexcept {
  using detail::Isa;
  static constexpr detail::Kernel<Fn> kPlain[] = {{Isa::bmi2, &kernel_bmi2<false>},
                                                  {Isa::portable, &kernel_portable<false>}};
  static constexpr detail::Kernel<Fn> kChains[] = {{Isa::bmi2, &kernel_bmi2<true>},
                                                   {Isa::portable, &kernel_portable<true>}};
  return with_chains ? detail::select_kernel(kChains) : detail::select_kernel(kPlain);
}

size_t SuccinctSet::contains_batch(const Probe* q, size_t m, bool* out) const noexcept {
  if (n_ == 0) {
    std::fill(out, out + m, false);
    return 0;
  }
  return batch_fn_(*this, q, m, out);
}

}  // namespace amq
