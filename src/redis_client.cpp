#include "amq/detail/redis_client.hpp"

#include <hiredis/hiredis.h>
#include <openssl/evp.h>
#include <sys/time.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "amq/error.hpp"

namespace amq::detail {
namespace {

[[noreturn]] void bad_url(std::string_view url, const std::string& why) {
  throw Error(Errc::invalid_argument, "bad Redis URL '" + std::string(url) + "': " + why +
                                          " (expected redis://[user:password@]host[:port][/db])");
}

std::string percent_decode(std::string_view s, std::string_view url) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    auto hex = [&](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    if (i + 2 >= s.size() || hex(s[i + 1]) < 0 || hex(s[i + 2]) < 0) bad_url(url, "bad percent escape");
    out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
    i += 2;
  }
  return out;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

RedisReply convert(const redisReply* r) {
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_STRING: out.type = RedisReply::Type::string; out.str.assign(r->str, r->len); break;
    case REDIS_REPLY_STATUS: out.type = RedisReply::Type::status; out.str.assign(r->str, r->len); break;
    case REDIS_REPLY_ERROR: out.type = RedisReply::Type::error; out.str.assign(r->str, r->len); break;
    case REDIS_REPLY_INTEGER: out.type = RedisReply::Type::integer; out.integer = r->integer; break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::array;
      out.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
      break;
    default: out.type = RedisReply::Type::nil; break;
  }
  return out;
}

// CRC16-CCITT (XMODEM), as Redis Cluster's keyHashSlot uses.
uint16_t crc16(std::string_view s) noexcept {
  uint16_t crc = 0;
  for (unsigned char c : s) {
    crc ^= static_cast<uint16_t>(c << 8);
    for (int i = 0; i < 8; ++i) crc = static_cast<uint16_t>((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
  }
  return crc;
}

// "MOVED 3999 127.0.0.1:6381" -> "127.0.0.1:6381"
std::string redirect_target(const std::string& err, const std::string& fallback_host) {
  const size_t sp = err.rfind(' ');
  std::string ep = sp == std::string::npos ? std::string() : err.substr(sp + 1);
  if (!ep.empty() && ep[0] == ':') ep = fallback_host + ep;  // unknown host: same host
  return ep;
}

std::pair<std::string, uint16_t> split_endpoint(const std::string& ep) {
  const size_t colon = ep.rfind(':');
  if (colon == std::string::npos || !all_digits(ep.substr(colon + 1)))
    throw Error(Errc::remote, "redis: bad node address '" + ep + "' from the cluster");
  const unsigned long port = std::stoul(ep.substr(colon + 1));
  if (port == 0 || port > 65535) throw Error(Errc::remote, "redis: bad node address '" + ep + "' from the cluster");
  return {ep.substr(0, colon), static_cast<uint16_t>(port)};
}

}  // namespace

std::string_view RedisReply::error_code() const noexcept {
  if (type != Type::error) return {};
  std::string_view s = str;
  return s.substr(0, s.find(' '));
}

RedisReply& expect_ok(RedisReply& r, std::string_view what) {
  if (r.is_error()) throw Error(Errc::remote, std::string(what) + ": " + r.str);
  return r;
}

RedisUrl RedisUrl::parse(std::string_view url) {
  constexpr std::string_view scheme = "redis://";
  if (url.substr(0, scheme.size()) != scheme) bad_url(url, "it must start with redis://");
  std::string_view rest = url.substr(scheme.size());
  RedisUrl u;
  // Path: /db
  std::string_view authority = rest;
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    authority = rest.substr(0, slash);
    std::string_view db = rest.substr(slash + 1);
    if (!db.empty()) {
      if (!all_digits(db) || db.size() > 9) bad_url(url, "database '" + std::string(db) + "' is not a number");
      u.db = std::stoll(std::string(db));
    }
  }
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    const std::string_view userinfo = authority.substr(0, at);
    authority = authority.substr(at + 1);
    const size_t colon = userinfo.find(':');
    if (colon == std::string_view::npos) {
      u.password = percent_decode(userinfo, url);  // redis://password@host, as redis-cli takes it
    } else {
      u.user = percent_decode(userinfo.substr(0, colon), url);
      u.password = percent_decode(userinfo.substr(colon + 1), url);
    }
  }
  std::string_view host = authority, port;
  if (!authority.empty() && authority[0] == '[') {  // [IPv6]:port
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) bad_url(url, "unclosed '['");
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') bad_url(url, "junk after ']'");
      port = after.substr(1);
      if (port.empty()) bad_url(url, "empty port");
    }
  } else if (const size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    if (port.empty()) bad_url(url, "empty port");
  }
  if (host.empty()) bad_url(url, "no host");
  if (host.find_first_of(" /?#@") != std::string_view::npos) bad_url(url, "bad host '" + std::string(host) + "'");
  u.host = std::string(host);
  if (!port.empty()) {
    if (!all_digits(port) || port.size() > 5) bad_url(url, "port '" + std::string(port) + "' is not a number");
    const unsigned long p = std::stoul(std::string(port));
    if (p == 0 || p > 65535) bad_url(url, "port " + std::string(port) + " is not in 1..65535");
    u.port = static_cast<uint16_t>(p);
  }
  return u;
}

// ---- RedisConnection ---------------------------------------------------------

RedisConnection::RedisConnection(std::string host, uint16_t port, const RedisUrl& auth, RedisTimeouts timeouts)
    : host_(std::move(host)), port_(port), auth_(auth), timeouts_(timeouts) {
  endpoint_ = host_ + ":" + std::to_string(port_);
  connect();
}

RedisConnection::~RedisConnection() { close(); }

void RedisConnection::close() noexcept {
  if (ctx_) redisFree(static_cast<redisContext*>(ctx_));
  ctx_ = nullptr;
}

void RedisConnection::connect() {
  close();
  redisContext* c = redisConnectWithTimeout(host_.c_str(), port_, to_timeval(timeouts_.connect));
  if (!c) throw Error(Errc::io, "redis " + endpoint_ + ": cannot allocate a connection");
  if (c->err) {
    std::string why = c->errstr;
    redisFree(c);
    if (why.find("Resource temporarily unavailable") != std::string::npos || why.find("timed out") != std::string::npos)
      why = "connect timed out after " + std::to_string(timeouts_.connect.count()) + " ms";
    throw Error(Errc::io, "redis " + endpoint_ + ": cannot connect: " + why);
  }
  if (redisSetTimeout(c, to_timeval(timeouts_.command)) != REDIS_OK) {
    redisFree(c);
    throw Error(Errc::io, "redis " + endpoint_ + ": cannot set the command timeout");
  }
  ctx_ = c;
  const std::string db = std::to_string(auth_.db);
  std::vector<std::vector<std::string_view>> hello;
  if (!auth_.password.empty()) {
    if (auth_.user.empty()) hello.push_back({"AUTH", auth_.password});
    else hello.push_back({"AUTH", auth_.user, auth_.password});
  }
  if (auth_.db != 0) hello.push_back({"SELECT", db});
  if (hello.empty()) return;
  const auto replies = pipeline(hello);
  size_t i = 0;
  if (!auth_.password.empty()) {
    if (replies[i].is_error()) {
      close();
      throw Error(Errc::remote, "redis " + endpoint_ + ": authentication failed" +
                                    (auth_.user.empty() ? std::string() : " for user '" + auth_.user + "'") + ": " +
                                    replies[i].str);
    }
    ++i;
  }
  if (auth_.db != 0 && replies[i].is_error()) {
    close();
    throw Error(Errc::remote, "redis " + endpoint_ + ": cannot select database " + db + ": " + replies[i].str);
  }
}

std::vector<RedisReply> RedisConnection::pipeline(const std::vector<std::vector<std::string_view>>& commands) {
  if (!ctx_) connect();
  auto* c = static_cast<redisContext*>(ctx_);
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (const auto& cmd : commands) {
    argv.clear();
    lens.clear();
    for (std::string_view a : cmd) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    if (redisAppendCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lens.data()) != REDIS_OK) {
      const std::string why = c->errstr;
      close();
      throw Error(Errc::io, "redis " + endpoint_ + ": cannot queue a command: " + why);
    }
  }
  std::vector<RedisReply> out;
  out.reserve(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    if (redisGetReply(c, &raw) != REDIS_OK || raw == nullptr) {
      std::string why = c->errstr;
      const int err = c->err;
      close();
      if (err == REDIS_ERR_EOF || why.find("closed") != std::string::npos)
        why = "the server closed the connection";
      else if (why.find("Resource temporarily unavailable") != std::string::npos)
        why = "no reply within " + std::to_string(timeouts_.command.count()) + " ms";
      throw Error(Errc::io, "redis " + endpoint_ + ": connection lost (" + why +
                                "); the command may or may not have been applied");
    }
    auto* r = static_cast<redisReply*>(raw);
    out.push_back(convert(r));
    freeReplyObject(r);
  }
  for (const auto& r : out) {
    if (r.is_error() && r.error_code() == "NOAUTH")
      throw Error(Errc::remote, "redis " + endpoint_ + ": authentication required (give the password in the URL: "
                                                       "redis://[user:]password@host:port): " + r.str);
  }
  return out;
}

// ---- RedisScript -------------------------------------------------------------

RedisScript::RedisScript(std::string b) : body(std::move(b)) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(body.data(), body.size(), md, &len, EVP_sha1(), nullptr) != 1)
    throw Error(Errc::io, "cannot compute SHA1 of a Redis script");
  static const char* hex = "0123456789abcdef";
  for (unsigned i = 0; i < len; ++i) {
    sha1 += hex[md[i] >> 4];
    sha1 += hex[md[i] & 15];
  }
}

// ---- RedisClient -------------------------------------------------------------

uint16_t RedisClient::key_slot(std::string_view key) noexcept {
  const size_t open = key.find('{');
  if (open != std::string_view::npos) {
    const size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) key = key.substr(open + 1, close - open - 1);
  }
  return crc16(key) & 16383;
}

RedisClient::RedisClient(std::string_view url, RedisTimeouts timeouts) : url_(RedisUrl::parse(url)), timeouts_(timeouts) {
  default_endpoint_ = url_.endpoint();
  auto& first = node(default_endpoint_);
  RedisReply r = first.command({"CLUSTER", "SLOTS"});
  // A standalone server answers "ERR This instance has cluster support disabled" (or,
  // for an ACL user without the command, NOPERM): either way, no cluster routing.
  if (r.is_error()) return;
  cluster_ = true;
  if (url_.db != 0)
    throw Error(Errc::invalid_argument, "redis " + default_endpoint_ + " is a cluster node: only database 0 exists");
  refresh_slots(first);
}

RedisClient::~RedisClient() = default;
RedisClient::RedisClient(RedisClient&&) noexcept = default;
RedisClient& RedisClient::operator=(RedisClient&&) noexcept = default;

RedisConnection& RedisClient::node(const std::string& endpoint) {
  auto it = nodes_.find(endpoint);
  if (it != nodes_.end()) return *it->second;
  auto [host, port] = endpoint == default_endpoint_ ? std::pair{url_.host, url_.port} : split_endpoint(endpoint);
  auto conn = std::make_unique<RedisConnection>(host, port, url_, timeouts_);
  return *nodes_.emplace(endpoint, std::move(conn)).first->second;
}

void RedisClient::refresh_slots(RedisConnection& from) {
  RedisReply r = from.command({"CLUSTER", "SLOTS"});
  expect_ok(r, "redis " + from.endpoint() + ": CLUSTER SLOTS");
  if (r.type != RedisReply::Type::array) throw Error(Errc::remote, "redis: CLUSTER SLOTS gave no array");
  std::vector<std::string> owner(16384);
  for (const auto& range : r.elements) {
    if (range.elements.size() < 3 || range.elements[0].type != RedisReply::Type::integer ||
        range.elements[1].type != RedisReply::Type::integer || range.elements[2].elements.size() < 2)
      throw Error(Errc::remote, "redis: malformed CLUSTER SLOTS reply");
    const auto& master = range.elements[2];
    std::string host = master.elements[0].str;
    if (host.empty() || host == "?") host = url_.host;
    const std::string ep = host + ":" + std::to_string(master.elements[1].integer);
    const long long lo = range.elements[0].integer, hi = range.elements[1].integer;
    if (lo < 0 || hi > 16383 || lo > hi) throw Error(Errc::remote, "redis: bad slot range in CLUSTER SLOTS");
    for (long long s = lo; s <= hi; ++s) owner[static_cast<size_t>(s)] = ep;
  }
  slot_owner_ = std::move(owner);
}

std::vector<std::string> RedisClient::masters() const {
  if (!cluster_) return {default_endpoint_};
  std::vector<std::string> out;
  for (const auto& ep : slot_owner_)
    if (!ep.empty() && std::find(out.begin(), out.end(), ep) == out.end()) out.push_back(ep);
  return out;
}

RedisReply RedisClient::command_on(const std::string& endpoint, const std::vector<std::string_view>& args) {
  return node(endpoint).command(args);
}

RedisReply RedisClient::command(std::string_view routing_key, const std::vector<std::string_view>& args) {
  return routed(routing_key, args, nullptr);
}

RedisReply RedisClient::eval(const RedisScript& script, const std::vector<std::string_view>& keys,
                             const std::vector<std::string_view>& args) {
  const std::string numkeys = std::to_string(keys.size());
  std::vector<std::string_view> cmd{"EVALSHA", script.sha1, numkeys};
  cmd.insert(cmd.end(), keys.begin(), keys.end());
  cmd.insert(cmd.end(), args.begin(), args.end());
  return routed(keys.empty() ? std::string_view() : keys[0], cmd, &script);
}

RedisReply RedisClient::routed(std::string_view routing_key, const std::vector<std::string_view>& args,
                               const RedisScript* script) {
  std::string target = default_endpoint_;
  if (cluster_) {
    const std::string& owner = slot_owner_[key_slot(routing_key)];
    if (owner.empty())
      throw Error(Errc::remote, "redis cluster: no node serves slot " + std::to_string(key_slot(routing_key)) +
                                    " (is the cluster complete?)");
    target = owner;
  }
  bool asking = false;
  int tryagain = 0;
  for (int hop = 0; hop < 8; ++hop) {
    RedisConnection& conn = node(target);
    auto send = [&] {
      if (!asking) return conn.command(args);
      return std::move(conn.pipeline({{"ASKING"}, args})[1]);
    };
    RedisReply r = send();
    if (script && r.is_error() && r.error_code() == "NOSCRIPT") {
      ++stats_.noscript;
      RedisReply load = conn.command({"SCRIPT", "LOAD", script->body});
      expect_ok(load, "redis " + conn.endpoint() + ": SCRIPT LOAD");
      r = send();
    }
    if (!r.is_error()) return r;
    const std::string_view code = r.error_code();
    if (cluster_ && code == "MOVED") {
      ++stats_.moved;
      target = redirect_target(r.str, url_.host);
      asking = false;
      refresh_slots(node(target));
      continue;
    }
    if (cluster_ && code == "ASK") {
      ++stats_.ask;
      target = redirect_target(r.str, url_.host);
      asking = true;
      continue;
    }
    if (cluster_ && code == "TRYAGAIN" && ++tryagain < 200) {  // keys split by a slot migration: wait
      ++stats_.tryagain;
      ::usleep(25000);
      --hop;
      continue;
    }
    return r;
  }
  throw Error(Errc::remote, "redis cluster: too many redirections for key '" + std::string(routing_key) + "'");
}

}  // namespace amq::detail
