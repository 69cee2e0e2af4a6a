// SuccinctSet::Tails, the out-of-line part: tails compared and appended (rank(),
// key_at(), iteration).
#include "tails.hpp"

#include <bit>
#include <string>
#include <vector>

namespace amq {

namespace {

int compare_bytes(std::string_view a, std::span<const std::byte> b) noexcept { return a.compare(as_chars(b)); }

}  // namespace

uint64_t SuccinctSet::Tails::tail_index(const SuccinctSet& self, uint64_t v) noexcept {
  return tail_index<detail::kHwPopcount>(self, v, self.node_start(v));
}

std::string_view SuccinctSet::Tails::tail_of(const SuccinctSet& self, uint64_t t) noexcept {
  return tail_of_t<detail::kHwPopcount>(self, t);
}

int SuccinctSet::Tails::compare_tail(const SuccinctSet& self, uint64_t ti, std::span<const std::byte> rest) {
  const std::string_view t = Tails::tail_of(self, ti);
  if (self.syms_.empty()) return compare_bytes(t, rest);
  return self.syms_.compare(reinterpret_cast<const uint8_t*>(t.data()), t.size(),
                       reinterpret_cast<const uint8_t*>(rest.data()), rest.size());
}

void SuccinctSet::Tails::append_tail(const SuccinctSet& self, uint64_t ti, std::string& out) {
  const std::string_view t = Tails::tail_of(self, ti);
  if (self.syms_.empty()) {
    out += t;
    return;
  }
  self.syms_.append(reinterpret_cast<const uint8_t*>(t.data()), t.size(), out);
}

// One pass over the label bitmap's words, counting the pairs "11" (a one before bit 0)
// up to each sample: 2 bytes a sample (128 nodes) and 8 a group of 512 samples, whose
// counts (at most 511 * 128) fit 16 bits above its base.
void SuccinctSet::Tails::build_childless_counts(SuccinctSet& self, std::vector<uint16_t>& at,
                                                std::vector<uint64_t>& base) {
  const uint64_t samples = LoudsBits::samples(self.louds_.ones());
  at.assign(samples, 0);
  base.assign((samples + (uint64_t{1} << kChildlessGroupShift) - 1) >> kChildlessGroupShift, 0);
  const uint64_t* words = self.louds_.words();
  const auto pairs = [&](uint64_t i) {
    const uint64_t x = words[i];
    return x & ((x << 1) | (i == 0 ? 1 : words[i - 1] >> 63));
  };
  uint64_t w = 0, before = 0;  // the pairs ending in the words before w
  for (uint64_t j = 0; j < samples; ++j) {
    const uint64_t sp = self.louds_.sample(j << LoudsBits::kSampleShift);
    for (; w < sp >> 6; ++w) before += static_cast<uint64_t>(std::popcount(pairs(w)));
    const uint64_t c = before + static_cast<uint64_t>(std::popcount(pairs(w) & (~uint64_t{0} >> (63 - (sp & 63)))));
    if ((j & ((uint64_t{1} << kChildlessGroupShift) - 1)) == 0) base[j >> kChildlessGroupShift] = c;
    at[j] = static_cast<uint16_t>(c - base[j >> kChildlessGroupShift]);
  }
  self.louds_words_ = (self.louds_.size() + 63) >> 6;
  self.childless_at_ = at.data();
  self.childless_base_ = base.data();
}

}  // namespace amq
