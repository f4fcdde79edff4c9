// auth: who may use the reward service. A bearer token (kforge serve --token-env NAME) that
// every request but /healthz must carry, compared in constant time; and whether an address
// to listen on stays on this machine (then the token may be left out).
//
// Thread-safety: a BearerCheck is immutable after construction.
#pragma once

#include <string>

#include "common/status.h"

namespace kf::serve {

class BearerCheck {
 public:
  BearerCheck() = default;  // no token: every request is let through
  explicit BearerCheck(const std::string& token);
  bool enabled() const { return enabled_; }
  // Whether `authorization` (the Authorization header's value) is "Bearer <the token>". The
  // time taken does not depend on how much of the token matched: both sides are hashed and the
  // digests compared with CRYPTO_memcmp.
  bool Allows(const std::string& authorization) const;

 private:
  bool enabled_ = false;
  std::string digest_;  // SHA-256 of the token, hex
};

// A token must be at least this long and free of white space and control characters.
inline constexpr size_t kMinTokenBytes = 16;
Status ValidToken(const std::string& token);

// Whether `host` names only loopback addresses: 127.0.0.0/8, ::1, ::ffff:127.x.y.z, or a name
// (such as "localhost") that resolves to nothing else. "0.0.0.0", "::" and every other address
// are not.
bool IsLoopbackHost(const std::string& host);

}  // namespace kf::serve
