// SuccinctSet::Tails, the out-of-line part: tails compared and appended (rank(),
// key_at(), iteration).
#include "tails.hpp"

#include <string>

namespace amq {

namespace {

int compare_bytes(std::string_view a, std::span<const std::byte> b) noexcept { return a.compare(as_chars(b)); }

}  // namespace

std::string_view SuccinctSet::Tails::tail_of(const SuccinctSet& self, uint64_t v) noexcept {
  return tail_of_t<detail::kHwPopcount>(self, v);
}

int SuccinctSet::Tails::compare_tail(const SuccinctSet& self, uint64_t v, std::span<const std::byte> rest) {
  const std::string_view t = Tails::tail_of(self, v);
  if (self.syms_.empty()) return compare_bytes(t, rest);
  return self.syms_.compare(reinterpret_cast<const uint8_t*>(t.data()), t.size(),
                       reinterpret_cast<const uint8_t*>(rest.data()), rest.size());
}

void SuccinctSet::Tails::append_tail(const SuccinctSet& self, uint64_t v, std::string& out) {
  const std::string_view t = Tails::tail_of(self, v);
  if (self.syms_.empty()) {
    out += t;
    return;
  }
  self.syms_.append(reinterpret_cast<const uint8_t*>(t.data()), t.size(), out);
}

}  // namespace amq
