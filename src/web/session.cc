#include "web/session.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstdio>
#include <string_view>

namespace kf::web {

Sessions::Sessions(std::string key) : key_(std::move(key)) {}

std::string Sessions::RandomKey() {
  unsigned char buf[32];
  if (RAND_bytes(buf, sizeof buf) != 1) {
    // No entropy: a key nobody can guess is impossible, so no cookie may ever verify. An
    // empty key is refused by Valid (see there).
    return "";
  }
  return std::string(reinterpret_cast<char*>(buf), sizeof buf);
}

std::string Sessions::Mac(const std::string& data) const {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &n);
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < n; ++i) {
    hex += kHex[out[i] >> 4];
    hex += kHex[out[i] & 15];
  }
  return hex;
}

std::string Sessions::Issue(int64_t now_s, int64_t ttl_s) const {
  const std::string expiry = std::to_string(now_s + ttl_s);
  return expiry + "." + Mac("session|" + expiry);
}

bool Sessions::Valid(const std::string& cookie, int64_t now_s) const {
  if (key_.empty()) return false;
  const size_t dot = cookie.find('.');
  if (dot == std::string::npos || dot == 0 || dot > 18) return false;
  const std::string expiry = cookie.substr(0, dot);
  for (char c : expiry) {
    if (c < '0' || c > '9') return false;
  }
  if (!SameBytes(cookie.substr(dot + 1), Mac("session|" + expiry))) return false;
  return std::stoll(expiry) > now_s;
}

std::string Sessions::Csrf(const std::string& cookie) const { return Mac("csrf|" + cookie); }

bool Sessions::CsrfOk(const std::string& cookie, const std::string& presented) const {
  return !key_.empty() && SameBytes(presented, Csrf(cookie));
}

std::string CookieValue(const std::string& header, const std::string& name) {
  std::string_view h = header;
  size_t at = 0;
  while (at < h.size()) {
    size_t end = h.find(';', at);
    if (end == std::string_view::npos) end = h.size();
    std::string_view part = h.substr(at, end - at);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    if (part.size() > name.size() && part.substr(0, name.size()) == name &&
        part[name.size()] == '=') {
      return std::string(part.substr(name.size() + 1));
    }
    at = end + 1;
  }
  return "";
}

bool SameBytes(const std::string& a, const std::string& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace kf::web
