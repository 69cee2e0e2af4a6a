// SuccinctSet::Iterator: keys in order by a depth-first walk of the trie, and the
// scans (prefix, range, lower_bound) built on it.
#include <algorithm>

#include "rooms.hpp"

namespace amq {

void SuccinctSet::Iterator::push_node(uint64_t v) {
  const uint64_t st = set_->node_start(v);
  stack_.push_back({v, st, set_->louds_.next_one(st), npos});
}

void SuccinctSet::Iterator::emit(uint64_t v) {
  key_.assign(path_);
  if (stack_.back().next == stack_.back().end) Tails::append_tail(*set_, v, key_);
  done_ = false;
  if ((has_stop_ && std::string_view(key_) >= std::string_view(stop_)) ||
      (!prefix_.empty() && std::string_view(key_).substr(0, prefix_.size()) != prefix_)) {
    done_ = true;
    stack_.clear();
  }
}

void SuccinctSet::Iterator::advance() {
  while (!stack_.empty()) {
    Frame& f = stack_.back();
    if (f.next < f.end) {
      const uint64_t pos = f.next++;
      const uint64_t child = pos - f.node + 1;
      path_.push_back(static_cast<char>(set_->labels_[pos - f.node]));
      // Siblings' label ranges follow each other: one select per parent, not per child.
      const uint64_t st = f.child_start == npos ? set_->node_start(child) : f.child_start;
      const uint64_t en = set_->louds_.next_one(st);
      f.child_start = en + 1;
      stack_.push_back({child, st, en, npos});
      if (set_->leaf_.get(child)) return emit(child);
      continue;
    }
    stack_.pop_back();
    if (!stack_.empty()) path_.pop_back();
  }
  done_ = true;
}

// Positions at the first key >= key.
void SuccinctSet::Iterator::seek(std::span<const std::byte> key) {
  stack_.clear();
  path_.clear();
  done_ = true;
  if (set_->n_ == 0) return;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(key.data());
  push_node(0);
  for (size_t d = 0;; ++d) {
    Frame& f = stack_.back();
    const uint64_t v = f.node;
    if (f.next == f.end) {  // a leaf without children
      if (Tails::compare_tail(*set_, v, key.subspan(d)) >= 0) return emit(v);
      return advance();
    }
    if (d == key.size()) {
      if (set_->leaf_.get(v)) return emit(v);
      return advance();
    }
    const uint8_t* lab = set_->labels_ + (f.next - v);
    const uint64_t k = f.end - f.next;
    const uint64_t j = static_cast<uint64_t>(std::lower_bound(lab, lab + k, p[d]) - lab);
    if (j < k && lab[j] == p[d]) {
      f.next += j + 1;
      path_.push_back(static_cast<char>(p[d]));
      push_node(f.next - v);  // the label at f.next - 1 leads to node (f.next - 1) - v + 1
      stack_[stack_.size() - 2].child_start = stack_.back().end + 1;
      continue;
    }
    f.next += j;
    return advance();
  }
}

SuccinctSet::Iterator SuccinctSet::begin() const {
  Iterator it(this);
  it.seek({});
  return it;
}

SuccinctSet::Iterator SuccinctSet::lower_bound(KeyView key) const {
  Iterator it(this);
  it.seek(key.bytes());
  return it;
}

SuccinctSet::Range SuccinctSet::scan(std::string_view prefix, std::optional<std::string_view> from,
                                     std::optional<std::string_view> to) const {
  Iterator it(this);
  it.prefix_ = prefix;
  if (to) {
    it.has_stop_ = true;
    it.stop_ = *to;
  }
  const std::string_view start = from && *from > prefix ? *from : prefix;
  it.seek(as_bytes(start));  // emit() applies the bounds from the first key on
  return Range(std::move(it));
}

SuccinctSet::Range SuccinctSet::prefix(KeyView prefix) const {
  return scan(as_chars(prefix.bytes()), std::nullopt, std::nullopt);
}

SuccinctSet::Range SuccinctSet::range(KeyView from, KeyView to) const {
  return scan({}, as_chars(from.bytes()), as_chars(to.bytes()));
}

}  // namespace amq
