#include "queue/redis_url.h"

#include <cstdlib>
#include <optional>

#include "common/hash.h"

namespace kf::queue {
namespace {

Status Bad(const std::string& url, const std::string& what) {
  return Status::Invalid("bad Redis URL " + RedactRedisUrl(url) + ": " + what);
}

// A piece of the URL, quoted for an error message, but only where no secret can hide in it: a
// URL with an '@' may have been cut in the wrong place (an unencoded '/' in a password), and
// any piece of it might be part of the password.
std::string Quote(const std::string& url, const std::string& piece) {
  if (url.find('@') != std::string::npos) return "";
  return " '" + piece + "'";
}

std::optional<std::string> PercentDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    int hi = HexDigit(s[i + 1]), lo = HexDigit(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::optional<long> Number(const std::string& s, long lo, long hi) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  long v = std::strtol(s.c_str(), nullptr, 10);
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

Status ParseUserInfo(const std::string& url, const std::string& info, RedisAddress* a) {
  // redis-cli's reading: "user:password", or a password alone.
  auto colon = info.find(':');
  std::string user = colon == std::string::npos ? "" : info.substr(0, colon);
  std::string pass = colon == std::string::npos ? info : info.substr(colon + 1);
  auto u = PercentDecode(user);
  auto p = PercentDecode(pass);
  if (!u || !p) return Bad(url, "a bad %-escape in the user or password");
  a->user = *u;
  a->password = *p;
  return Status::Ok();
}

Status ParseHostPort(const std::string& url, const std::string& hp, RedisAddress* a) {
  std::string host = hp, port;
  if (!hp.empty() && hp[0] == '[') {  // [IPv6]:port
    auto close = hp.find(']');
    if (close == std::string::npos) return Bad(url, "an IPv6 address without its ']'");
    host = hp.substr(1, close - 1);
    std::string tail = hp.substr(close + 1);
    if (!tail.empty()) {
      if (tail[0] != ':') return Bad(url, "text after the IPv6 address" + Quote(url, tail));
      port = tail.substr(1);
      if (port.empty()) return Bad(url, "an empty port");
    }
  } else if (auto colon = hp.rfind(':'); colon != std::string::npos) {
    host = hp.substr(0, colon);
    port = hp.substr(colon + 1);
    if (port.empty()) return Bad(url, "an empty port");
  }
  if (!port.empty()) {
    auto v = Number(port, 1, 65535);
    if (!v) {
      return Bad(url, "the port" + Quote(url, port) +
                          " is not a number from 1 to 65535 (a password with '/', '?' or '#' "
                          "must be percent-encoded)");
    }
    a->port = static_cast<int>(*v);
  }
  if (!host.empty()) a->host = host;
  return Status::Ok();
}

Status ParseOptions(const std::string& url, const std::string& query, RedisAddress* a) {
  size_t pos = 0;
  while (pos <= query.size()) {
    size_t amp = query.find('&', pos);
    std::string kv = query.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    pos = amp == std::string::npos ? query.size() + 1 : amp + 1;
    if (kv.empty()) continue;
    auto eq = kv.find('=');
    std::string key = kv.substr(0, eq);
    auto value = PercentDecode(eq == std::string::npos ? "" : kv.substr(eq + 1));
    if (!value) return Bad(url, "a bad %-escape in option" + Quote(url, key));
    if (!a->tls.enabled) {
      return Bad(url, "options" + Quote(url, key) + " are TLS options; use rediss://");
    }
    if (eq == std::string::npos || value->empty()) {
      return Bad(url, "option" + Quote(url, key) + " needs a value");
    }
    if (key == "ca") {
      a->tls.ca_file = *value;
    } else if (key == "cert") {
      a->tls.cert_file = *value;
    } else if (key == "key") {
      a->tls.key_file = *value;
    } else if (key == "server_name") {
      a->tls.server_name = *value;
    } else if (key == "verify") {
      if (*value == "full") {
        a->tls.verify = true;
      } else if (*value == "none") {
        a->tls.verify = false;
      } else {
        return Bad(url, "verify must be full or none");
      }
    } else {
      return Bad(
          url, "unknown option" + Quote(url, key) + " (known: ca, cert, key, verify, server_name)");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<RedisAddress> ParseRedisUrl(const std::string& url) {
  RedisAddress a;
  std::string rest = url;
  if (auto sep = url.find("://"); sep != std::string::npos) {
    std::string scheme = url.substr(0, sep);
    if (scheme == "rediss") {
      a.tls.enabled = true;
    } else if (scheme != "redis") {
      return Bad(url, "the scheme must be redis:// or rediss:// (TLS)");
    }
    rest = url.substr(sep + 3);
  }
  if (rest.empty()) return Bad(url, "no host");
  // The authority ends at the first '/', '?' or '#'; within it the user-info ends at the last
  // '@' (so an unencoded '@' in a password still works).
  size_t end = rest.find_first_of("/?#");
  std::string authority = rest.substr(0, end);
  std::string tail = end == std::string::npos ? "" : rest.substr(end);
  if (auto at = authority.rfind('@'); at != std::string::npos) {
    if (auto s = ParseUserInfo(url, authority.substr(0, at), &a); !s.ok()) return s;
    authority = authority.substr(at + 1);
  }
  if (auto s = ParseHostPort(url, authority, &a); !s.ok()) return s;
  if (!tail.empty() && tail[0] == '#') return Bad(url, "a '#' fragment");
  std::string path = tail, query;
  if (auto q = tail.find('?'); q != std::string::npos) {
    path = tail.substr(0, q);
    query = tail.substr(q + 1);
  }
  if (path.find('#') != std::string::npos || query.find('#') != std::string::npos) {
    return Bad(url, "a '#' (percent-encode it as %23 in a password)");
  }
  if (path.size() > 1) {
    auto db = Number(path.substr(1), 0, 1'000'000);
    if (!db) return Bad(url, "the database" + Quote(url, path.substr(1)) + " is not a number");
    a.db = static_cast<int>(*db);
  }
  if (auto s = ParseOptions(url, query, &a); !s.ok()) return s;
  return a;
}

Status SetRedisPasswordFromEnv(const std::string& var, const char* value, RedisAddress* a) {
  if (value == nullptr || *value == '\0') {
    return Status::Invalid("the environment variable " + var +
                           " (--redis-password-env) is not set or empty");
  }
  if (!a->password.empty()) {
    return Status::Invalid("the Redis password is given twice: in the URL and in " + var +
                           " (for an ACL user whose password is in " + var +
                           ", write redis://USER:@host; redis://WORD@host means password WORD, "
                           "as for redis-cli)");
  }
  a->password = value;
  return Status::Ok();
}

std::string DescribeRedis(const RedisAddress& a) {
  std::string out = a.tls.enabled ? "rediss://" : "redis://";
  if (!a.user.empty() || !a.password.empty())
    out += a.user + (a.password.empty() ? "" : ":***") + "@";
  bool v6 = a.host.find(':') != std::string::npos;
  out += (v6 ? "[" + a.host + "]" : a.host) + ":" + std::to_string(a.port);
  if (a.db != 0) out += "/" + std::to_string(a.db);
  if (a.tls.enabled) {
    std::string q;
    auto add = [&](const std::string& k, const std::string& v) {
      if (!v.empty()) q += (q.empty() ? "?" : "&") + k + "=" + v;
    };
    add("ca", a.tls.ca_file);
    add("cert", a.tls.cert_file);
    add("key", a.tls.key_file);
    add("server_name", a.tls.server_name);
    if (!a.tls.verify) add("verify", "none");
    out += q;
  }
  return out;
}

std::string RedactRedisUrl(const std::string& url) {
  size_t start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  size_t at = url.rfind('@');
  if (at == std::string::npos || at < start) return url;
  std::string info = url.substr(start, at - start);
  // Keep the user name where there is one; a user-info without ':' is a password alone.
  size_t colon = info.find(':');
  std::string user = colon == std::string::npos ? "" : info.substr(0, colon);
  if (user.find_first_of("/?#") != std::string::npos) user.clear();
  return url.substr(0, start) + user + ":***" + url.substr(at);
}

}  // namespace kf::queue
