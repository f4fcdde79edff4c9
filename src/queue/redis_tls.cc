// TLS to Redis (rediss://) with OpenSSL, on a socket redis_conn.cc connected. Certificates are
// checked by default: the chain against the CA file (or the system's CAs) and the server's name
// or IP address against the certificate, as a browser would.
#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "queue/redis_socket.h"

namespace kf::queue {
namespace {

struct CtxFree {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
struct SslFree {
  void operator()(SSL* s) const { SSL_free(s); }
};
using CtxPtr = std::unique_ptr<SSL_CTX, CtxFree>;
using SslPtr = std::unique_ptr<SSL, SslFree>;

// The reasons on OpenSSL's error queue of this thread, oldest first; empties it.
std::string OpenSslErrors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    const char* reason = ERR_reason_error_string(e);
    std::string one = reason ? reason : "error " + std::to_string(e);
    if (out.find(one) == std::string::npos) out += (out.empty() ? "" : "; ") + one;
  }
  return out.empty() ? "unknown TLS error" : out;
}

// A socket BIO that writes with MSG_NOSIGNAL: a peer that hangs up must not raise SIGPIPE in a
// process that did not ignore it. Everything else is OpenSSL's socket BIO.
int SendNoSignal(BIO* b, const char* data, int len) {
  int fd = -1;
  BIO_get_fd(b, &fd);
  BIO_clear_retry_flags(b);
  ssize_t n = ::send(fd, data, static_cast<size_t>(len), MSG_NOSIGNAL);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) BIO_set_retry_write(b);
  return static_cast<int>(n);
}

BIO_METHOD* SocketMethod() {
  static BIO_METHOD* method = [] {
    const BIO_METHOD* base = BIO_s_socket();
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR,
                                 "kforge socket");
    BIO_meth_set_write(m, SendNoSignal);
    BIO_meth_set_read(m, BIO_meth_get_read(base));
    BIO_meth_set_puts(m, BIO_meth_get_puts(base));
    BIO_meth_set_ctrl(m, BIO_meth_get_ctrl(base));
    BIO_meth_set_create(m, BIO_meth_get_create(base));
    BIO_meth_set_destroy(m, BIO_meth_get_destroy(base));
    return m;
  }();
  return method;
}

bool IsIpAddress(const std::string& s) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

class TlsConn : public RedisConn {
 public:
  TlsConn(Fd fd, CtxPtr ctx, SslPtr ssl, std::string endpoint)
      : fd_(std::move(fd)),
        ctx_(std::move(ctx)),
        ssl_(std::move(ssl)),
        who_("Redis at " + endpoint) {}

  ~TlsConn() override {
    ERR_clear_error();
    SSL_shutdown(ssl_.get());  // close_notify, best effort: the socket is non-blocking
    ERR_clear_error();
  }

  Status Write(std::string_view bytes, RedisClock::time_point deadline) override {
    while (!bytes.empty()) {
      ERR_clear_error();
      int n = SSL_write(ssl_.get(), bytes.data(), static_cast<int>(bytes.size()));
      if (n > 0) {
        bytes.remove_prefix(static_cast<size_t>(n));
        continue;
      }
      if (auto s = Retry(n, deadline); !s.ok()) return s;
    }
    return Status::Ok();
  }

  Result<size_t> Read(char* buf, size_t cap, RedisClock::time_point deadline) override {
    for (;;) {
      ERR_clear_error();
      int n = SSL_read(ssl_.get(), buf, static_cast<int>(cap));
      if (n > 0) return static_cast<size_t>(n);
      if (auto s = Retry(n, deadline); !s.ok()) return s;
    }
  }

 private:
  // After a call that did not move bytes: waits for what OpenSSL needs, or says what broke.
  Status Retry(int rc, RedisClock::time_point deadline) {
    int err = SSL_get_error(ssl_.get(), rc);
    if (err == SSL_ERROR_WANT_READ) return WaitFd(fd_.get(), POLLIN, deadline, who_);
    if (err == SSL_ERROR_WANT_WRITE) return WaitFd(fd_.get(), POLLOUT, deadline, who_);
    if (err == SSL_ERROR_ZERO_RETURN) return Status::Unavailable(who_ + " closed the connection");
    if (err == SSL_ERROR_SYSCALL) {
      std::string why = errno != 0 ? std::strerror(errno) : "the connection was closed";
      return Status::Unavailable(who_ + ": " + why);
    }
    std::string why = OpenSslErrors();
    if (why.find("certificate required") != std::string::npos) {
      why += " (the server wants a client certificate: ?cert=FILE&key=FILE)";
    }
    return Status::Unavailable(who_ + ": TLS: " + why);
  }

  Fd fd_;
  CtxPtr ctx_;
  SslPtr ssl_;
  std::string who_;
};

}  // namespace

Result<std::unique_ptr<RedisConn>> StartTls(Fd fd, const RedisAddress& a,
                                            RedisClock::time_point deadline) {
  const std::string endpoint = RedisEndpoint(a);
  const std::string who = "TLS to Redis at " + endpoint;
  const RedisTls& t = a.tls;
  ERR_clear_error();
  CtxPtr ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) return Status::Internal(who + ": " + OpenSslErrors());
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (t.verify) {
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
    int ok = t.ca_file.empty()
                 ? SSL_CTX_set_default_verify_paths(ctx.get())
                 : SSL_CTX_load_verify_locations(ctx.get(), t.ca_file.c_str(), nullptr);
    if (ok != 1) {
      return Status::Invalid(who + ": cannot load the CA file " +
                             (t.ca_file.empty() ? "(system default)" : t.ca_file) + ": " +
                             OpenSslErrors());
    }
  } else {
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
  }
  if (!t.cert_file.empty()) {
    const std::string& key = t.key_file.empty() ? t.cert_file : t.key_file;
    if (SSL_CTX_use_certificate_chain_file(ctx.get(), t.cert_file.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx.get(), key.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx.get()) != 1) {
      return Status::Invalid(who + ": cannot use the client certificate " + t.cert_file +
                             " with key " + key + ": " + OpenSslErrors());
    }
  }
  SslPtr ssl(SSL_new(ctx.get()));
  BIO* bio = ssl ? BIO_new(SocketMethod()) : nullptr;
  if (!bio) return Status::Internal(who + ": " + OpenSslErrors());
  BIO_set_fd(bio, fd.get(), BIO_NOCLOSE);
  SSL_set_bio(ssl.get(), bio, bio);  // the SSL owns the BIO now
  const std::string name = t.server_name.empty() ? a.host : t.server_name;
  if (IsIpAddress(name)) {
    // No SNI for addresses; the certificate must list the address among its IP names.
    if (t.verify) X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl.get()), name.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl.get(), name.c_str());
    if (t.verify) SSL_set1_host(ssl.get(), name.c_str());
  }
  for (;;) {
    ERR_clear_error();
    int rc = SSL_connect(ssl.get());
    if (rc == 1) break;
    int err = SSL_get_error(ssl.get(), rc);
    Status wait;
    if (err == SSL_ERROR_WANT_READ) {
      wait = WaitFd(fd.get(), POLLIN, deadline, "the TLS handshake with Redis at " + endpoint);
    } else if (err == SSL_ERROR_WANT_WRITE) {
      wait = WaitFd(fd.get(), POLLOUT, deadline, "the TLS handshake with Redis at " + endpoint);
    } else {
      long verdict = SSL_get_verify_result(ssl.get());
      if (t.verify && verdict != X509_V_OK) {
        return Status::Unavailable(
            who + ": the server's certificate is not trusted: " +
            X509_verify_cert_error_string(verdict) + " (for '" + name +
            "'; name the CA that signed it with ?ca=FILE, the name it was issued for with "
            "?server_name=NAME)");
      }
      std::string why =
          err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0
              ? (errno != 0 ? std::strerror(errno) : "the server closed the connection")
              : OpenSslErrors();
      return Status::Unavailable(who + ": the handshake failed: " + why +
                                 " (is the port a TLS port? does the server want a client "
                                 "certificate, ?cert=FILE&key=FILE?)");
    }
    if (!wait.ok()) return wait;
  }
  return std::unique_ptr<RedisConn>(
      new TlsConn(std::move(fd), std::move(ctx), std::move(ssl), endpoint));
}

}  // namespace kf::queue
