// amq/any_set.hpp — every amq structure behind one runtime interface.
//
// The typed classes (BloomFilter, CuckooFilter, ...) are what C++ users normally
// want. AnySet is for code that picks the structure at run time — the `amq` CLI is
// written entirely against it, so the shell and C++ see the same behaviour: build a
// set of a named kind from keys, load any amq file (or a recognised outside format),
// query it, add to or erase from it where the kind allows, describe it, and write it
// back in the format it came in.
//
// Guarantees and cost. A set answers, writes and fails as its typed class does; an
// operation its kind lacks (insert into a static set, erase where the kind cannot)
// throws Errc::unsupported. A call costs one virtual call more than the typed one;
// contains_many hands a whole batch to the kind's batched lookup where it has one.
// Choose AnySet when the kind is known only at run time (from a file, a name or a
// flag); choose the typed class when it is known when compiling.
//
//   amq::BuildOptions opt;  opt.fpp = 0.01;
//   std::vector<amq::Bytes> keys = ...;
//   auto set = amq::build_set(amq::Kind::bloom, opt, keys);
//   auto again = amq::load_set(set->serialize());
//   bool maybe = again->contains(amq::as_bytes("apple"));
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "amq/format.hpp"
#include "amq/hash.hpp"

namespace amq {

// One layer of a layered set, for sets that describe their layers apart from params
// (a filter in Redis, amq/redis_bloom_filter.hpp).
struct SetLayerInfo {
  uint64_t capacity = 0, items = 0, bits = 0;
  uint32_t hashes = 0;
};

struct SetInfo {
  Kind kind;
  std::string format = "amq";  // the file format it is kept in: "amq", "guava", ...
  std::vector<std::pair<std::string, std::string>> params;  // in a stable order
  uint64_t items = 0;          // keys held (an estimate where the kind cannot count)
  bool items_exact = true;
  uint64_t bytes = 0;          // size of the serialized form
  double bits_per_key = 0;     // 8 * bytes / items (0 when empty)
  double fpp_expected = 0;     // the false-positive rate to expect now (0 for exact sets)
  std::vector<SetLayerInfo> layers;  // empty unless the set describes its layers apart from params
};

// A kind-specific option's value (amq/registry.hpp: each kind's OptionSpecs say which
// options it takes, of which type and range): a flag is a bool, an integer a uint64_t, a
// real a double, a choice or a text a std::string. A value may also be given as text, as
// on the command line ({"growth", "3"}): build_set parses it by the option's spec with
// the CLI's rules (parse_option_value), so the two read options alike.
using OptionValue = std::variant<bool, uint64_t, double, std::string>;
// Options by name, the CLI's flag without "--" ("fingerprint-bits").
using OptionMap = std::map<std::string, OptionValue, std::less<>>;

struct BuildOptions {
  double fpp = 0.01;                   // target false-positive rate
  std::optional<uint64_t> capacity;    // expected items; default: the number of keys given
  std::string format = "amq";          // output format: "amq", or a kind's outside format
  uint64_t seed = 0;                   // hash seed, for kinds with a seeded hash
  // What the keys are, recorded in an amq container (not in outside formats). With
  // KeyType::u64 every key is 8 bytes, little-endian (amq's uint64_t key); an ordered
  // kind (succinct) stores them big-endian so they sort numerically, and its set takes
  // and gives them little-endian like every other kind.
  KeyType key_type = KeyType::unknown;
  // Kind-specific options, by CLI option name. build_set checks them once against the
  // kind's OptionSpecs: an option the kind does not take, a value of the wrong type or out
  // of range throws amq::Error(invalid_argument).
  OptionMap extra;
  // Most bytes of memory the structure may take: build_set throws Errc::too_large,
  // before it allocates anything, when build_bytes is more. Unset: no limit.
  std::optional<uint64_t> max_bytes;
};

class AnySet {
 public:
  virtual ~AnySet() = default;
  virtual Kind kind() const noexcept = 0;
  // The key type recorded in the set's file (BuildOptions::key_type when built here);
  // KeyType::unknown when not recorded. info() states it as the param "key_type", and
  // serialize() keeps it.
  virtual KeyType key_type() const noexcept { return KeyType::unknown; }
  virtual bool contains(Bytes key) const = 0;
  // out[i] = contains(keys[i]); returns how many are true.
  virtual size_t contains_many(std::span<const Bytes> keys, std::span<bool> out) const;
  // Kinds that take inserts after they are built.
  virtual bool is_dynamic() const noexcept { return false; }
  // Adds a key. Throws Errc::unsupported for static kinds, Errc::full when the set
  // cannot take it (the set is then unchanged).
  virtual void insert(Bytes key);
  // insert() of each key in turn; a set that can take many at once (a filter in Redis:
  // one round trip a batch) does. After an error the keys before it may be in the set.
  virtual void insert_many(std::span<const Bytes> keys) {
    for (Bytes k : keys) insert(k);
  }
  // Kinds that can erase: removes one copy; false if none was found.
  virtual bool supports_erase() const noexcept { return false; }
  virtual bool erase(Bytes key);
  virtual SetInfo info() const = 0;
  // The whole file, in the format the set was built or loaded in.
  virtual std::vector<std::byte> serialize() const = 0;
  // Hands the same bytes to `sink`; a set that keeps its whole file image (SuccinctSet)
  // passes it without making a copy of gigabytes.
  virtual void write_to(const std::function<void(std::span<const std::byte>)>& sink) const { sink(serialize()); }
};

// Builds a set of `kind` holding `keys`. Throws amq::Error(invalid_argument) for
// options the kind does not take.
std::unique_ptr<AnySet> build_set(Kind kind, const BuildOptions& options, std::span<const Bytes> keys);

// Loads a file. `format` "auto" recognises amq containers and Guava Bloom filter
// streams; "amq" or "guava" insist on one; "parquet" reads a raw Parquet split block
// Bloom filter bitset (blocked-bloom, XXH64). Throws amq::Error on any malformed input.
std::unique_ptr<AnySet> load_set(std::span<const std::byte> file, std::string_view format = "auto");

// Loading with options: `format` as above, or an outside format that needs more than
// the bytes ("bip158": --siphash-key, --golomb-p, --golomb-m in `extra`;
// "cache-digest": base64url text).
struct LoadOptions {
  std::string format = "auto";
  OptionMap extra;  // by CLI option name, checked as BuildOptions::extra is
};
std::unique_ptr<AnySet> load_set(std::span<const std::byte> file, const LoadOptions& options);

// Opens the file at `path`: load_set(read_file(path), options), except that a set that
// can answer from a memory mapping (a SuccinctSet or BinaryFuseFilter in an amq container, format "auto"
// or "amq") is mapped, validated and queried in place instead of read and copied.
std::unique_ptr<AnySet> open_set(const std::string& path, const LoadOptions& options = {});

// The bytes of memory build_set(kind, options, keys) takes for the structure (about the
// size of its file; for gcs and succinct, which are built from sorted copies of the
// keys, an estimate of the building's peak), computed from the parameters without
// allocating anything. Throws as build_set does for options the kind does not take
// or parameters out of range.
uint64_t build_bytes(Kind kind, const BuildOptions& options, std::span<const Bytes> keys);

// Kind-specific option names build_set accepts in BuildOptions::extra (the names of the
// kind's OptionSpecs, amq/registry.hpp).
std::vector<std::string> extra_option_names(Kind kind);

}  // namespace amq
