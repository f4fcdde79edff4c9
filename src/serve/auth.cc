#include "serve/auth.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/crypto.h>

#include <cctype>
#include <cstring>

#include "common/hash.h"

namespace kf::serve {
namespace {

bool IsLoopback(const sockaddr* a) {
  if (a->sa_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(a);
    return (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
  }
  if (a->sa_family == AF_INET6) {
    const in6_addr& v6 = reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

}  // namespace

BearerCheck::BearerCheck(const std::string& token) : enabled_(true), digest_(Sha256Hex(token)) {}

bool BearerCheck::Allows(const std::string& authorization) const {
  if (!enabled_) return true;
  // "Bearer" is case-insensitive (RFC 6750 takes RFC 7235's auth-scheme); one or more spaces.
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size()) return false;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return false;
  }
  size_t start = kScheme.size();
  if (authorization[start] != ' ') return false;
  while (start < authorization.size() && authorization[start] == ' ') ++start;
  const std::string presented = Sha256Hex(std::string_view(authorization).substr(start));
  return presented.size() == digest_.size() &&
         CRYPTO_memcmp(presented.data(), digest_.data(), digest_.size()) == 0;
}

Status ValidToken(const std::string& token) {
  if (token.size() < kMinTokenBytes) {
    return Status::Invalid("the token is " + std::to_string(token.size()) +
                           " bytes long; at least " + std::to_string(kMinTokenBytes) +
                           " are needed (e.g. the output of `openssl rand -hex 32`)");
  }
  for (unsigned char c : token) {
    if (c <= ' ' || c == 0x7f) {
      return Status::Invalid("the token holds white space or a control character");
    }
  }
  return Status::Ok();
}

bool IsLoopbackHost(const std::string& host) {
  if (host.empty()) return false;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) return false;
  bool all = true;
  for (addrinfo* p = res; p != nullptr; p = p->ai_next) all = all && IsLoopback(p->ai_addr);
  ::freeaddrinfo(res);
  return all;
}

}  // namespace kf::serve
