// session: how a browser holds the reward service's token. It presents the token once, in the
// login form; the answer is a cookie that is not the token: "<expiry_s>.<HMAC-SHA256(key,
// expiry_s)>" with a key drawn when the process starts. So a cookie expires by itself, every
// session ends when the service restarts, the token is never kept by the browser, and a
// stolen cookie cannot be turned into the token (which the API accepts). The cookie is
// HttpOnly (no script reads it) and SameSite=Strict (no other site's request carries it).
// Forms carry a csrf field, HMAC(key, "csrf|" + cookie), checked in constant time.
//
// Thread-safety: immutable after construction.
#pragma once

#include <cstdint>
#include <string>

namespace kf::web {

inline constexpr const char* kSessionCookie = "kforge_session";

class Sessions {
 public:
  explicit Sessions(std::string key);  // tests pass a fixed key
  static std::string RandomKey();      // 32 bytes from the OS (OpenSSL RAND_bytes)

  std::string Issue(int64_t now_s, int64_t ttl_s) const;
  // Well-formed, signed by this key (constant-time comparison) and not expired.
  bool Valid(const std::string& cookie, int64_t now_s) const;
  // The csrf value forms of this session carry ("" cookie: a visitor without a session).
  std::string Csrf(const std::string& cookie) const;
  bool CsrfOk(const std::string& cookie, const std::string& presented) const;

 private:
  std::string Mac(const std::string& data) const;  // hex HMAC-SHA256
  std::string key_;
};

// The value of cookie `name` in a Cookie header ("a=1; kforge_session=x"); "" when absent.
std::string CookieValue(const std::string& header, const std::string& name);
// Constant-time equality of two strings of the same length (false for different lengths).
bool SameBytes(const std::string& a, const std::string& b);

}  // namespace kf::web
