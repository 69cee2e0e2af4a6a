#include "amq/redis_bloom_filter.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "amq/detail/byte_io.hpp"
#include "amq/detail/redis_client.hpp"
#include "amq/error.hpp"
#include "amq/format.hpp"
#include "amq/scalable_bloom_filter.hpp"

namespace amq {

namespace detail {
// src/redis_scalable_io.cpp: between ScalableBloomFilter files and layers.
RedisBloomFilter::Layers scalable_file_to_layers(std::span<const std::byte> file);
std::vector<std::byte> layers_to_scalable_file(const RedisBloomFilter::Layers& layers);
}  // namespace detail

namespace {

using detail::RedisClient;
using detail::RedisReply;
using detail::RedisScript;

const RedisScript& script() {
  static const RedisScript s(
#include "redis_bloom_script.lua.inc"
  );
  return s;
}

// Bit order: amq bit i is bit i % 8 (LSB first) of byte i / 8; Redis offset i is bit
// 7 - i % 8 (MSB first) of byte i / 8. Converting is reversing each byte's bits.
constexpr std::array<uint8_t, 256> kReverse = [] {
  std::array<uint8_t, 256> t{};
  for (int i = 0; i < 256; ++i) {
    uint8_t r = 0;
    for (int b = 0; b < 8; ++b)
      if (i & (1 << b)) r = static_cast<uint8_t>(r | (0x80 >> b));
    t[static_cast<size_t>(i)] = r;
  }
  return t;
}();

std::string words_to_redis(std::span<const uint64_t> words) {
  std::string s(words.size() * 8, '\0');
  std::memcpy(s.data(), words.data(), s.size());
  for (char& c : s) c = static_cast<char>(kReverse[static_cast<uint8_t>(c)]);
  return s;
}

std::vector<uint64_t> redis_to_words(std::string_view s, uint64_t bits, const std::string& what) {
  const uint64_t bytes = bits / 8;
  if (s.size() > bytes)
    throw Error(Errc::corrupt, what + ": bitmap of " + std::to_string(s.size()) + " bytes for " + std::to_string(bits) +
                                   " bits");
  std::vector<uint64_t> words(static_cast<size_t>(bits / 64), 0);
  auto* out = reinterpret_cast<unsigned char*>(words.data());
  for (size_t i = 0; i < s.size(); ++i) out[i] = kReverse[static_cast<uint8_t>(s[i])];
  return words;
}

std::string fmt17(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void check_name(std::string_view name) {
  if (name.empty()) throw Error(Errc::invalid_argument, "a Redis filter needs a non-empty name");
  if (name.size() > 256) throw Error(Errc::invalid_argument, "Redis filter name longer than 256 bytes");
  if (name.find_first_of("{}") != std::string_view::npos)
    throw Error(Errc::invalid_argument, "Redis filter name '" + std::string(name) +
                                            "' must not contain '{' or '}' (it is the keys' hash tag)");
}

void check_params(const detail::ScalableParams& p) {
  detail::check_scalable_params(p, Errc::invalid_argument);  // as ScalableBloomFilter
  if (!detail::valid_params(p))
    throw Error(Errc::invalid_argument,
                "scalable Bloom filter parameters out of range: initial capacity " + std::to_string(p.initial_capacity) +
                    " (1..2^40), fpp " + fmt17(p.fpp) + " (0..1), growth " + fmt17(p.growth) + " (1..16), tightening " +
                    fmt17(p.tightening) + " (0..1)");
}

std::vector<std::string> param_strings(const detail::ScalableParams& p, uint64_t seed) {
  return {std::to_string(p.initial_capacity), fmt17(p.fpp), fmt17(p.growth), fmt17(p.tightening), std::to_string(seed)};
}

uint64_t parse_u64(const std::map<std::string, std::string>& m, const std::string& field, const std::string& what) {
  auto it = m.find(field);
  if (it == m.end()) throw Error(Errc::corrupt, what + ": metadata field '" + field + "' missing");
  const std::string& s = it->second;
  if (s.empty() || s.size() > 20 || s.find_first_not_of("0123456789") != std::string::npos)
    throw Error(Errc::corrupt, what + ": metadata field '" + field + "' = '" + s + "' is not a number");
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), nullptr, 10);
  if (errno) throw Error(Errc::corrupt, what + ": metadata field '" + field + "' out of range");
  return v;
}

double parse_double(const std::map<std::string, std::string>& m, const std::string& field, const std::string& what) {
  auto it = m.find(field);
  if (it == m.end()) throw Error(Errc::corrupt, what + ": metadata field '" + field + "' missing");
  char* end = nullptr;
  const double v = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end != '\0' || !std::isfinite(v))
    throw Error(Errc::corrupt, what + ": metadata field '" + field + "' = '" + it->second + "' is not a number");
  return v;
}

std::string get(const std::map<std::string, std::string>& m, const std::string& field) {
  auto it = m.find(field);
  return it == m.end() ? std::string() : it->second;
}

// The `layout` field; filters made before it existed have none and keep the legacy layout.
uint32_t parse_layout(const std::map<std::string, std::string>& m, const std::string& what) {
  if (m.find("layout") == m.end()) return detail::kLegacyLayout;
  const uint64_t v = parse_u64(m, "layout", what);
  if (v == detail::kLegacyLayout || v > detail::kRateSafeLayout)
    throw Error(v > detail::kRateSafeLayout ? Errc::unsupported : Errc::corrupt,
                what + ": layout " + std::to_string(v) + " (this version of amq knows 1, or no field for 0)");
  return static_cast<uint32_t>(v);
}

struct Meta {
  std::map<std::string, std::string> fields;
  int64_t pttl = -1;
};

// Runs the script; throws amq::Error for error replies, mapping the script's codes.
RedisReply run(RedisClient& c, std::string_view name, const std::string& meta, const std::string& prefix,
               const std::vector<std::string_view>& args, uint32_t layers = 1) {
  std::vector<std::string> lk;
  for (uint32_t i = 0; i < layers; ++i) lk.push_back(prefix + std::to_string(i));
  std::vector<std::string_view> keys{meta};
  for (const auto& k : lk) keys.push_back(k);
  RedisReply r = c.eval(script(), keys, args);
  if (!r.is_error()) return r;
  std::string msg = r.str;
  // Redis appends " script: <sha>, on @user_script:N." to errors raised in scripts.
  if (const size_t at = msg.find(" script: "); at != std::string::npos) msg.resize(at);
  const std::string_view code = r.error_code();
  const std::string where = "redis filter '" + std::string(name) + "' at " + c.url().endpoint() + ": ";
  auto rest = [&] { return msg.substr(std::min(msg.size(), code.size() + 1)); };
  if (code == "AMQ-NOTFOUND") throw Error(Errc::not_found, where + rest());
  if (code == "AMQ-INCOMPATIBLE") throw Error(Errc::incompatible, where + rest());
  if (code == "AMQ-FULL") throw Error(Errc::full, where + rest());
  if (code == "AMQ-CORRUPT") throw Error(Errc::corrupt, where + rest());
  if (code == "AMQ-FOREIGN")
    throw Error(Errc::incompatible, where + rest() + "; refusing to overwrite it (delete it, or choose another name)");
  if (code == "WRONGTYPE")
    throw Error(Errc::remote, where + "a key of the filter (" + meta + " or " + prefix +
                                  "<i>) holds another Redis type: " + msg);
  throw Error(Errc::remote, where + msg);
}

Meta read_meta(RedisClient& c, std::string_view name, const std::string& meta, const std::string& prefix) {
  RedisReply r = run(c, name, meta, prefix, {"meta"});
  Meta m;
  if (r.type != RedisReply::Type::array || r.elements.size() != 2)
    throw Error(Errc::remote, "redis filter '" + std::string(name) + "': unexpected reply to meta");
  const auto& h = r.elements[0].elements;
  for (size_t i = 0; i + 1 < h.size(); i += 2) m.fields[h[i].str] = h[i + 1].str;
  m.pttl = r.elements[1].integer;
  return m;
}

int64_t reply_int(const RedisReply& r, std::string_view what) {
  if (r.type != RedisReply::Type::integer) throw Error(Errc::remote, "redis: unexpected reply to " + std::string(what));
  return r.integer;
}

detail::RedisTimeouts timeouts(const RedisOptions& o) { return {o.connect_timeout, o.command_timeout}; }

// Guava's probe positions (BloomFilter's MURMUR128_MITZ_64 / _32), for a pushed filter.
void guava_positions(Bytes key, uint64_t bits, uint32_t k, GuavaStrategy s, std::string& out) {
  const Hash128 h = murmur3_x64_128(key);
  auto put = [&](uint64_t pos) {
    char b[8];
    const uint32_t lo = static_cast<uint32_t>(pos), hi = static_cast<uint32_t>(pos >> 32);
    std::memcpy(b, &lo, 4);
    std::memcpy(b + 4, &hi, 4);
    out.append(b, 8);
  };
  if (s == GuavaStrategy::murmur128_mitz_64) {
    uint64_t combined = h.low;
    for (uint32_t i = 0; i < k; ++i) {
      put((combined & 0x7fffffffffffffffULL) % bits);
      combined += h.high;
    }
  } else {
    const uint32_t hash1 = static_cast<uint32_t>(h.low), hash2 = static_cast<uint32_t>(h.low >> 32);
    for (uint32_t i = 1; i <= k; ++i) {
      int32_t combined = static_cast<int32_t>(hash1 + i * hash2);
      if (combined < 0) combined = ~combined;
      put(static_cast<uint64_t>(combined) % bits);
    }
  }
}

// The keys' probe pairs (a, b) as two little-endian 32-bit words each: the argument
// the Lua script's "add" and "test" read.
void pack_probe_pairs(const Xxh3Hasher& hasher, std::span<const Bytes> keys, std::string& packed) {
  packed.resize(keys.size() * 8);
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto pp = detail::probe_pair(hasher(keys[i]));
    const uint32_t a = static_cast<uint32_t>(pp.a), b = static_cast<uint32_t>(pp.b);
    std::memcpy(packed.data() + 8 * i, &a, 4);
    std::memcpy(packed.data() + 8 * i + 4, &b, 4);
  }
}

}  // namespace

std::string RedisBloomFilter::meta_key(std::string_view name) { return "amq:{" + std::string(name) + "}:meta"; }
std::string RedisBloomFilter::layer_key(std::string_view name, uint32_t layer) {
  return "amq:{" + std::string(name) + "}:L" + std::to_string(layer);
}

RedisBloomFilter::RedisBloomFilter(std::string_view url, std::string_view name, const RedisOptions& options)
    : options_(options), name_(name) {
  check_name(name);
  if (options_.batch == 0) options_.batch = 1;
  client_ = std::make_unique<RedisClient>(url, timeouts(options));
  meta_ = meta_key(name);
  prefix_ = "amq:{" + name_ + "}:L";
}

RedisBloomFilter::RedisBloomFilter(RedisBloomFilter&&) noexcept = default;
RedisBloomFilter& RedisBloomFilter::operator=(RedisBloomFilter&&) noexcept = default;
RedisBloomFilter::~RedisBloomFilter() = default;

std::string RedisBloomFilter::throw_context() const {
  return "redis filter '" + name_ + "' at " + client_->url().endpoint();
}

RedisBloomFilter RedisBloomFilter::create(std::string_view url, std::string_view name, const Params& params,
                                          uint64_t seed, const RedisOptions& options) {
  check_params(params);
  RedisBloomFilter f(url, name, options);
  const auto p = param_strings(params, seed);
  const auto g = detail::layer_geometry(params, 0);
  const std::string bits = std::to_string(g.bits), hashes = std::to_string(g.hashes), cap = std::to_string(g.capacity);
  run(*f.client_, f.name_, f.meta_, f.prefix_,
      {"reserve", p[0], p[1], p[2], p[3], p[4], bits, hashes, cap, std::to_string(params.layout)});
  f.load_meta();
  return f;
}

RedisBloomFilter RedisBloomFilter::open(std::string_view url, std::string_view name, const RedisOptions& options) {
  RedisBloomFilter f(url, name, options);
  f.load_meta();
  return f;
}

void RedisBloomFilter::load_meta() {
  const Meta m = read_meta(*client_, name_, meta_, prefix_);
  const std::string what = throw_context();
  if (m.fields.empty()) throw Error(Errc::not_found, what + ": no such filter (" + meta_ + " does not exist)");
  const std::string kind = get(m.fields, "kind");
  const uint64_t layers = parse_u64(m.fields, "layers", what);
  if (layers < 1 || layers > detail::kMaxLayers) throw Error(Errc::corrupt, what + ": bad layer count");
  known_layers_ = static_cast<uint32_t>(layers);
  if (kind == "scalable-bloom") {
    kind_ = Kind::scalable_bloom;
    params_.initial_capacity = parse_u64(m.fields, "n0", what);
    params_.fpp = parse_double(m.fields, "fpp", what);
    params_.growth = parse_double(m.fields, "growth", what);
    params_.tightening = parse_double(m.fields, "tightening", what);
    params_.layout = parse_layout(m.fields, what);
    seed_ = parse_u64(m.fields, "seed", what);
    if (!detail::valid_params(params_)) throw Error(Errc::corrupt, what + ": stored parameters out of range");
  } else if (kind == "bloom") {
    kind_ = Kind::bloom;
    bloom_bits_ = parse_u64(m.fields, "bits:0", what);
    const uint64_t k = parse_u64(m.fields, "hashes:0", what);
    const uint64_t s = parse_u64(m.fields, "strategy", what);
    if (bloom_bits_ == 0 || bloom_bits_ % 64 != 0 || bloom_bits_ > (uint64_t{0x7fffffff} * 64) || k < 1 || k > 255 ||
        s > 1)
      throw Error(Errc::corrupt, what + ": bad Bloom filter geometry in metadata");
    bloom_hashes_ = static_cast<uint32_t>(k);
    strategy_ = static_cast<GuavaStrategy>(s);
  } else {
    throw Error(Errc::corrupt, what + ": unknown filter kind '" + kind + "' in " + meta_);
  }
}

std::vector<std::string> RedisBloomFilter::geometry_args(uint32_t upto) const {
  std::vector<std::string> out;
  for (uint32_t i = 0; i < upto; ++i) {
    const auto g = detail::layer_geometry(params_, i);
    out.push_back(std::to_string(g.bits));
    out.push_back(std::to_string(g.hashes));
    out.push_back(std::to_string(g.capacity));
  }
  return out;
}

size_t RedisBloomFilter::insert_bytes(std::span<const Bytes> keys) {
  size_t added = 0;
  if (kind_ == Kind::bloom) {
    const std::string bits = std::to_string(bloom_bits_), k = std::to_string(bloom_hashes_);
    std::string packed;
    for (size_t at = 0; at < keys.size(); at += options_.batch) {
      const size_t n = std::min(options_.batch, keys.size() - at);
      packed.clear();
      for (size_t i = 0; i < n; ++i) guava_positions(keys[at + i], bloom_bits_, bloom_hashes_, strategy_, packed);
      RedisReply r = run(*client_, name_, meta_, prefix_, {"badd", bits, k, packed}, known_layers_);
      if (r.type != RedisReply::Type::array || r.elements.size() != 2) throw Error(Errc::remote, throw_context() + ": bad reply");
      added += static_cast<size_t>(reply_int(r.elements[1], "badd"));
    }
    return added;
  }
  const auto p = param_strings(params_, seed_);
  const Xxh3Hasher hasher{seed_};
  std::string packed;
  for (size_t at = 0; at < keys.size(); at += options_.batch) {
    const size_t n = std::min(options_.batch, keys.size() - at);
    pack_probe_pairs(hasher, keys.subspan(at, n), packed);
    size_t done = 0;
    int stalls = 0;
    int64_t status = 0;
    const uint32_t limit = detail::scalable_layer_limit(params_);
    const std::string limit_s = std::to_string(limit);
    do {
      const uint32_t upto = std::min<uint32_t>(limit, known_layers_ + 4);
      const auto geo = geometry_args(upto);
      const std::string G = std::to_string(upto);
      std::vector<std::string_view> args{"add", p[0], p[1], p[2], p[3], p[4], G, limit_s};
      for (const auto& s : geo) args.push_back(s);
      args.push_back(std::string_view(packed).substr(done * 8));
      RedisReply r = run(*client_, name_, meta_, prefix_, args, known_layers_);
      if (r.type != RedisReply::Type::array || r.elements.size() != 4)
        throw Error(Errc::remote, throw_context() + ": unexpected reply to add");
      status = reply_int(r.elements[0], "add");
      const int64_t processed = reply_int(r.elements[1], "add");
      const int64_t new_items = reply_int(r.elements[2], "add"), layers = reply_int(r.elements[3], "add");
      if (processed < 0 || static_cast<uint64_t>(processed) > n - done || layers < 1 || layers > detail::kMaxLayers)
        throw Error(Errc::remote, throw_context() + ": inconsistent reply to add");
      done += static_cast<size_t>(processed);
      added += static_cast<size_t>(new_items);
      if ((status == 0 && done != n) || status < 0 || status > 1)
        throw Error(Errc::remote, throw_context() + ": add stopped early");
      stalls = processed == 0 && static_cast<uint32_t>(layers) == known_layers_ ? stalls + 1 : 0;
      if (stalls > 2) throw Error(Errc::remote, throw_context() + ": add makes no progress");
      known_layers_ = static_cast<uint32_t>(layers);
    } while (status != 0);
  }
  return added;
}

size_t RedisBloomFilter::contains_bytes(std::span<const Bytes> keys, std::span<bool> out) {
  size_t found = 0;
  std::string packed;
  const std::string seed = std::to_string(seed_);
  const std::string bits = std::to_string(bloom_bits_), k = std::to_string(bloom_hashes_);
  const Xxh3Hasher hasher{seed_};
  for (size_t at = 0; at < keys.size(); at += options_.batch) {
    const size_t n = std::min(options_.batch, keys.size() - at);
    RedisReply r;
    packed.clear();
    if (kind_ == Kind::bloom) {
      for (size_t i = 0; i < n; ++i) guava_positions(keys[at + i], bloom_bits_, bloom_hashes_, strategy_, packed);
      r = run(*client_, name_, meta_, prefix_, {"btest", bits, k, packed}, known_layers_);
    } else {
      pack_probe_pairs(hasher, keys.subspan(at, n), packed);
      r = run(*client_, name_, meta_, prefix_, {"test", seed, packed}, known_layers_);
    }
    if (r.type != RedisReply::Type::array || r.elements.size() != 2 || r.elements[0].str.size() != n)
      throw Error(Errc::remote, throw_context() + ": unexpected reply to a lookup");
    const std::string& s = r.elements[0].str;
    for (size_t i = 0; i < n; ++i) found += (out[at + i] = s[i] == '1');
    if (kind_ == Kind::scalable_bloom && r.elements[1].integer >= 1 && r.elements[1].integer <= detail::kMaxLayers)
      known_layers_ = static_cast<uint32_t>(r.elements[1].integer);
  }
  return found;
}

RedisBloomInfo RedisBloomFilter::info() {
  load_meta();
  const Meta m = read_meta(*client_, name_, meta_, prefix_);
  const std::string what = throw_context();
  RedisBloomInfo i;
  i.name = name_;
  i.kind = kind_;
  i.ttl_ms = m.pttl < 0 ? -1 : m.pttl;
  if (kind_ == Kind::bloom) {
    RedisReply bc = client_->command(meta_, {"BITCOUNT", layer_key(name_, 0)});
    const double set = static_cast<double>(reply_int(expect_ok(bc, what), "BITCOUNT"));
    const double size = static_cast<double>(bloom_bits_);
    i.strategy = strategy_;
    i.bits = bloom_bits_;
    i.fpp_expected = std::pow(set / size, bloom_hashes_);
    const double est = -std::log1p(-set / size) * size / bloom_hashes_;
    i.items = std::isfinite(est) ? static_cast<uint64_t>(std::floor(est + 0.5)) : 0;
    i.layers.push_back({0, i.items, bloom_bits_, bloom_hashes_});
    return i;
  }
  i.params = params_;
  i.seed = seed_;
  double pass = 1;
  for (uint32_t l = 0; l < known_layers_; ++l) {
    const std::string s = std::to_string(l);
    RedisLayerInfo li;
    li.bits = parse_u64(m.fields, "bits:" + s, what);
    li.hashes = static_cast<uint32_t>(parse_u64(m.fields, "hashes:" + s, what));
    li.capacity = parse_u64(m.fields, "capacity:" + s, what);
    li.items = parse_u64(m.fields, "items:" + s, what);
    if (li.bits == 0 || li.hashes == 0) throw Error(Errc::corrupt, what + ": bad geometry of layer " + s);
    i.capacity += li.capacity;
    i.items += li.items;
    i.bits += li.bits;
    const detail::DoubleHashingOverlaps dh(li.hashes);
    pass *= 1 - detail::expected_layer_rate(dh, li.bits, li.hashes, static_cast<double>(li.items));
    i.layers.push_back(li);
  }
  i.fpp_expected = 1 - pass;
  return i;
}

void RedisBloomFilter::expire(std::chrono::milliseconds ttl) {
  const std::string ms = std::to_string(ttl.count() > 0 ? ttl.count() : 0);
  run(*client_, name_, meta_, prefix_, {"expire", ms}, known_layers_);
}

bool RedisBloomFilter::destroy() {
  RedisReply r = run(*client_, name_, meta_, prefix_, {"delete"}, known_layers_);
  return reply_int(r, "delete") == 1;
}

bool RedisBloomFilter::remove(std::string_view url, std::string_view name, const RedisOptions& options) {
  RedisBloomFilter f(url, name, options);
  return f.destroy();
}

void RedisBloomFilter::push_layers(std::string_view url, std::string_view name, const Layers& layers,
                                   const RedisOptions& options) {
  check_params(layers.params);
  const size_t L = layers.words.size();
  if (L < 1 || L > detail::kMaxLayers || layers.items.size() != L)
    throw Error(Errc::invalid_argument, "a scalable Bloom filter to push needs 1..64 layers, each with an item count");
  RedisBloomFilter f(url, name, options);
  const auto p = param_strings(layers.params, layers.seed);
  std::vector<std::string> fields{"format", "1", "kind", "scalable-bloom", "n0", p[0], "fpp", p[1], "growth", p[2],
                                  "tightening", p[3], "seed", p[4], "layers", std::to_string(L)};
  if (layers.params.layout != detail::kLegacyLayout) {
    fields.push_back("layout");
    fields.push_back(std::to_string(layers.params.layout));
  }
  uint64_t total = 0;
  std::vector<std::string> blobs;
  for (size_t i = 0; i < L; ++i) {
    const auto g = detail::layer_geometry(layers.params, static_cast<uint32_t>(i));
    if (layers.words[i].size() * 64 != g.bits)
      throw Error(Errc::invalid_argument, "layer " + std::to_string(i) + " has " +
                                              std::to_string(layers.words[i].size() * 64) + " bits; its geometry says " +
                                              std::to_string(g.bits));
    const std::string s = std::to_string(i);
    for (auto [k, v] : {std::pair<std::string, std::string>{"bits:", std::to_string(g.bits)},
                        {"hashes:", std::to_string(g.hashes)},
                        {"capacity:", std::to_string(g.capacity)},
                        {"items:", std::to_string(layers.items[i])}}) {
      fields.push_back(k + s);
      fields.push_back(v);
    }
    total += layers.items[i];
    blobs.push_back(words_to_redis(layers.words[i]));
  }
  fields.push_back("items");
  fields.push_back(std::to_string(total));
  if (layers.key_type != KeyType::unknown) {
    fields.push_back("key_type");
    fields.emplace_back(key_type_name(layers.key_type));
  }
  const std::string M = std::to_string(fields.size() / 2), Lc = std::to_string(L);
  std::vector<std::string_view> args{"push", M};
  for (const auto& s : fields) args.push_back(s);
  args.push_back(Lc);
  for (const auto& b : blobs) args.push_back(b);
  run(*f.client_, f.name_, f.meta_, f.prefix_, args);
}

void RedisBloomFilter::push_bloom(std::string_view url, std::string_view name, const BloomFilter& filter,
                                  const RedisOptions& options) {
  push_bloom_as(url, name, filter, "amq", KeyType::unknown, options);
}

void RedisBloomFilter::push_bloom_as(std::string_view url, std::string_view name, const BloomFilter& filter,
                                     const char* file_format, KeyType key_type, const RedisOptions& options) {
  RedisBloomFilter f(url, name, options);
  std::vector<std::string> fields{"format",   "1",
                                        "kind",     "bloom",
                                        "file",     file_format,
                                        "strategy", std::to_string(static_cast<int>(filter.strategy())),
                                        "layers",   "1",
                                        "bits:0",   std::to_string(filter.bit_size()),
                                        "hashes:0", std::to_string(filter.num_hashes()),
                                        "items",    "0"};
  if (key_type != KeyType::unknown) {
    fields.push_back("key_type");
    fields.emplace_back(key_type_name(key_type));
  }
  const std::string blob = words_to_redis(filter.words());
  const std::string M = std::to_string(fields.size() / 2);
  std::vector<std::string_view> args{"push", M};
  for (const auto& s : fields) args.push_back(s);
  args.push_back("1");
  args.push_back(blob);
  run(*f.client_, f.name_, f.meta_, f.prefix_, args);
}

namespace {

struct Pulled {
  std::map<std::string, std::string> fields;
  std::vector<std::string> blobs;
};

Pulled pull_raw(RedisClient& c, std::string_view name, const std::string& meta, const std::string& prefix) {
  RedisReply r = run(c, name, meta, prefix, {"pull"});
  if (r.type != RedisReply::Type::array || r.elements.empty())
    throw Error(Errc::remote, "redis filter '" + std::string(name) + "': unexpected reply to pull");
  Pulled p;
  const auto& h = r.elements[0].elements;
  for (size_t i = 0; i + 1 < h.size(); i += 2) p.fields[h[i].str] = h[i + 1].str;
  for (size_t i = 1; i < r.elements.size(); ++i) p.blobs.push_back(std::move(r.elements[i].str));
  return p;
}

}  // namespace

namespace {

// The "key_type" field of a pushed amq file; KeyType::unknown without one.
KeyType key_type_from(const Pulled& p, const std::string& what) {
  const auto it = p.fields.find("key_type");
  if (it == p.fields.end()) return KeyType::unknown;
  const auto type = key_type_from_name(it->second);
  if (!type) throw Error(Errc::corrupt, what + ": metadata field 'key_type' = '" + it->second + "' is not a key type");
  return *type;
}

RedisBloomFilter::Layers layers_from(const Pulled& p, const std::string& what) {
  if (get(p.fields, "kind") != "scalable-bloom")
    throw Error(Errc::wrong_kind, what + ": is a '" + get(p.fields, "kind") + "', not a scalable-bloom");
  RedisBloomFilter::Layers out;
  out.params.initial_capacity = parse_u64(p.fields, "n0", what);
  out.params.fpp = parse_double(p.fields, "fpp", what);
  out.params.growth = parse_double(p.fields, "growth", what);
  out.params.tightening = parse_double(p.fields, "tightening", what);
  out.params.layout = parse_layout(p.fields, what);
  out.seed = parse_u64(p.fields, "seed", what);
  out.key_type = key_type_from(p, what);
  if (!detail::valid_params(out.params)) throw Error(Errc::corrupt, what + ": stored parameters out of range");
  for (size_t i = 0; i < p.blobs.size(); ++i) {
    const std::string s = std::to_string(i);
    const auto g = detail::layer_geometry(out.params, static_cast<uint32_t>(i));
    const uint64_t bits = parse_u64(p.fields, "bits:" + s, what);
    if (bits != g.bits)
      throw Error(Errc::corrupt, what + ": layer " + s + " has " + std::to_string(bits) + " bits, the parameters give " +
                                     std::to_string(g.bits));
    out.words.push_back(redis_to_words(p.blobs[i], bits, what + " layer " + s));
    out.items.push_back(parse_u64(p.fields, "items:" + s, what));
  }
  return out;
}

BloomFilter bloom_from(const Pulled& p, const std::string& what) {
  if (get(p.fields, "kind") != "bloom")
    throw Error(Errc::wrong_kind, what + ": is a '" + get(p.fields, "kind") + "', not a bloom");
  const uint64_t bits = parse_u64(p.fields, "bits:0", what);
  const uint64_t k = parse_u64(p.fields, "hashes:0", what);
  const uint64_t s = parse_u64(p.fields, "strategy", what);
  if (bits == 0 || bits % 64 != 0 || bits / 64 > 0x7fffffff || k < 1 || k > 255 || s > 1 || p.blobs.size() != 1)
    throw Error(Errc::corrupt, what + ": bad Bloom filter geometry in metadata");
  BloomFilter b(bits / 64, static_cast<int>(k), static_cast<GuavaStrategy>(s));
  const auto words = redis_to_words(p.blobs[0], bits, what);
  std::copy(words.begin(), words.end(), b.mutable_words().begin());
  return b;
}

}  // namespace

RedisBloomFilter::Layers RedisBloomFilter::pull_layers(std::string_view url, std::string_view name,
                                                       const RedisOptions& options) {
  RedisBloomFilter f(url, name, options);
  return layers_from(pull_raw(*f.client_, f.name_, f.meta_, f.prefix_), f.throw_context());
}

BloomFilter RedisBloomFilter::pull_bloom(std::string_view url, std::string_view name, const RedisOptions& options) {
  RedisBloomFilter f(url, name, options);
  return bloom_from(pull_raw(*f.client_, f.name_, f.meta_, f.prefix_), f.throw_context());
}

void RedisBloomFilter::push(std::string_view url, std::string_view name, std::span<const std::byte> file,
                            const RedisOptions& options) {
  if (!has_container_magic(file) && BloomFilter::looks_like_guava(file))
    return push_bloom_as(url, name, BloomFilter::from_guava(file), "guava", KeyType::unknown, options);
  const Container c = parse_container(file);
  if (c.kind == Kind::bloom) return push_bloom_as(url, name, BloomFilter::load(file), "amq", c.key_type, options);
  if (c.kind == Kind::scalable_bloom) return push_layers(url, name, detail::scalable_file_to_layers(file), options);
  throw Error(Errc::wrong_kind, "only bloom and scalable-bloom files can be pushed to Redis, not a " +
                                    std::string(kind_name(c.kind)));
}

std::vector<std::byte> RedisBloomFilter::pull(std::string_view url, std::string_view name,
                                              const RedisOptions& options) {
  RedisBloomFilter f(url, name, options);
  const Pulled p = pull_raw(*f.client_, f.name_, f.meta_, f.prefix_);
  if (get(p.fields, "kind") == "bloom") {
    const BloomFilter b = bloom_from(p, f.throw_context());
    if (get(p.fields, "file") == "guava") return b.to_guava();
    std::vector<std::byte> file = b.serialize();
    if (const KeyType type = key_type_from(p, f.throw_context()); type != KeyType::unknown)
      set_container_key_type(file, type);
    return file;
  }
  return detail::layers_to_scalable_file(layers_from(p, f.throw_context()));
}

}  // namespace amq
