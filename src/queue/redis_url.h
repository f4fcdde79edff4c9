// redis_url: where the reward service's Redis is and how to log in to it, read from a URL,
//   redis://[user[:password]@]host[:port][/db][?option=value&...]
//   rediss://...                                   (TLS; options ca, cert, key, verify,
//   server_name)
// and how to print one without its secret. The forms follow redis-cli's: a user-info without a
// colon is a password ("redis://secret@host"), "redis://:secret@host" is the same, and
// "redis://user:secret@host" logs in as a Redis 6 ACL user. Characters of a user or password
// that a URL reserves (@ : / ? # %) are percent-encoded (%40 %3A %2F %3F %23 %25).
// "host:port" and "host" alone are accepted too (plain TCP, database 0).
//
// Secrets never leave these types as text: DescribeRedis and RedactRedisUrl put *** in the
// password's place, and every parse error quotes the URL redacted.
#pragma once

#include <string>

#include "common/status.h"

namespace kf::queue {

struct RedisTls {
  bool enabled = false;     // rediss://
  std::string ca_file;      // PEM bundle of trusted CAs; empty: the system's (SSL_CERT_FILE,
                            // then OpenSSL's default paths)
  std::string cert_file;    // client certificate chain (PEM) for a server that asks for one
  std::string key_file;     // its private key (PEM); empty: read from cert_file
  bool verify = true;       // check the server's chain and its name; off only with verify=none
  std::string server_name;  // the name the certificate must carry, sent as SNI; empty: host
};

struct RedisAddress {
  std::string host = "127.0.0.1";
  int port = 6379;
  int db = 0;
  std::string user;      // Redis 6 ACL user; empty: the default user
  std::string password;  // empty: no AUTH
  RedisTls tls;
};

Result<RedisAddress> ParseRedisUrl(const std::string& url);

// Sets the password from an environment variable's value (`--redis-password-env NAME`), so it
// appears in no command line. The URL must not carry one as well.
Status SetRedisPasswordFromEnv(const std::string& var, const char* value, RedisAddress* a);

// The address as a URL with the password replaced by *** (for logs and errors).
std::string DescribeRedis(const RedisAddress& a);
// Any string a user gave as a Redis URL, valid or not, with everything that could be a
// password replaced by ***: the user-info up to the last '@' after the scheme.
std::string RedactRedisUrl(const std::string& url);

}  // namespace kf::queue
