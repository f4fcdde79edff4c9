#include "model_http/http_transport.h"

#include <httplib.h>

#include <algorithm>
#include <mutex>

namespace kf::model {
namespace {

class HttplibTransport : public HttpTransport {
 public:
  HttplibTransport(std::string base_url, std::string origin, std::string prefix, HttpOptions opt)
      : base_url_(std::move(base_url)),
        origin_(std::move(origin)),
        prefix_(std::move(prefix)),
        opt_(opt) {}

  Result<HttpResponse> Post(
      const std::string& path, const std::string& body,
      const std::vector<std::pair<std::string, std::string>>& headers) override {
    // One client per request: httplib's Client is not safe to share between threads.
    httplib::Client cli(origin_);
    cli.set_connection_timeout(opt_.connect_timeout);
    cli.set_read_timeout(opt_.request_timeout);
    cli.set_write_timeout(opt_.request_timeout);
    cli.set_keep_alive(false);
    httplib::Request req;
    req.method = "POST";
    req.path = prefix_ + path;
    req.body = body;
    req.headers.emplace("Content-Type", "application/json");
    for (const auto& [k, v] : headers) {
      req.headers.emplace(k, v);
    }
    // The read time-out bounds each wait for bytes; this bounds the whole answer, so a server
    // that trickles bytes cannot hold a sample for ever.
    const auto deadline = std::chrono::steady_clock::now() + opt_.request_timeout;
    req.progress = [deadline](uint64_t, uint64_t) {
      return std::chrono::steady_clock::now() < deadline;
    };
    try {
      return Convert(cli.send(req));
    } catch (const std::exception& e) {  // converted here: no exception leaves the transport
      return Status::Unavailable(std::string("request failed: ") + e.what());
    }
  }

  std::string Describe() const override { return base_url_; }

 private:
  Result<HttpResponse> Convert(const httplib::Result& r) const {
    if (!r) {
      const httplib::Error e = r.error();
      const std::string what = httplib::to_string(e);
      if (e == httplib::Error::Connection || e == httplib::Error::ConnectionTimeout ||
          e == httplib::Error::SSLConnection) {
        return Status::Unavailable("connection failed (" + what + "; is the server running?)");
      }
      if (e == httplib::Error::Canceled) {
        return Status::Timeout("the answer did not finish within " +
                               std::to_string(opt_.request_timeout.count()) +
                               " s (--request-timeout-s)");
      }
      if (e == httplib::Error::Read) {
        return Status::Timeout("no complete answer within " +
                               std::to_string(opt_.request_timeout.count()) +
                               " s (--request-timeout-s), or the connection broke");
      }
      return Status::Unavailable("request failed (" + what + ")");
    }
    return HttpResponse{r->status, r->body};
  }

  std::string base_url_, origin_, prefix_;
  HttpOptions opt_;
};

}  // namespace

Result<std::unique_ptr<HttpTransport>> MakeHttpTransport(const std::string& base_url,
                                                         const HttpOptions& opt) {
  std::string url = base_url;
  while (!url.empty() && url.back() == '/') {
    url.pop_back();
  }
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) {
    return Status::Invalid("model URL '" + base_url + "' has no http:// or https:// scheme");
  }
  std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") {
    return Status::Invalid("model URL '" + base_url + "': only http and https are supported");
  }
  size_t path_start = url.find('/', scheme_end + 3);
  std::string origin = path_start == std::string::npos ? url : url.substr(0, path_start);
  std::string prefix = path_start == std::string::npos ? "" : url.substr(path_start);
  if (origin.size() <= scheme_end + 3) {
    return Status::Invalid("model URL '" + base_url + "' has no host");
  }
  return std::unique_ptr<HttpTransport>(new HttplibTransport(url, origin, prefix, opt));
}

}  // namespace kf::model
