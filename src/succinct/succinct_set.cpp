// SuccinctSet: the parts that span its rooms (the file, its size by part). The trie is
// built in build.cpp, loaded in load.cpp, queried in descent.cpp, batch.cpp, ranks.cpp
// and iterator.cpp, with the tables of accelerators.cpp, counts.cpp and chains.cpp.
// docs/format.md ("SuccinctSet") describes the payload.
#include "amq/succinct_set.hpp"

#include "rooms.hpp"

namespace amq {

using namespace detail::succinct;

SuccinctSet::SuccinctSet() : SuccinctSet(build_views({}, {})) {}

bool SuccinctSet::is_mapped() const noexcept { return storage_ && storage_->is_mapped(); }
std::span<const std::byte> SuccinctSet::bytes() const noexcept { return storage_->bytes(); }

std::vector<std::byte> SuccinctSet::serialize() const {
  const std::span<const std::byte> file = bytes();
  return std::vector<std::byte>(file.begin(), file.end());
}

SuccinctSet::SizeParts SuccinctSet::size_parts() const noexcept {
  const Shape sh = shape_of(n_, nodes_, tail_bytes_, tails_coded());
  SizeParts p;
  for (int i = 0; i < kVecCount; ++i) {
    p.bitmaps += 8 * sh.words[i];
    p.directories += 8 * sh.dir_words[i];
  }
  p.labels = pad8(sh.edges);
  p.tails = pad8(tail_bytes_) + (tails_coded() ? detail::TailSymbols::kBytes : 0);
  p.load_tables = payload_bytes_ - sh.payload_bytes;
  return p;
}
}  // namespace amq
