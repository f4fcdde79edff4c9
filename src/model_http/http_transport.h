// model_http: the real HTTP transport of the model client, on cpp-httplib. Built only with
// KFORGE_NET (there is no static cpp-httplib for the static release binary).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "common/status.h"
#include "model/model.h"

namespace kf::model {

struct HttpOptions {
  // The whole request (an answer still arriving after this long is abandoned) and each wait
  // for bytes of it. Thinking models need minutes for a long answer.
  std::chrono::seconds request_timeout{600};
  std::chrono::seconds connect_timeout{10};
};

// base_url: "http://host:port/v1" or "https://..."; requests go to base_url + path.
// Fails with kInvalidArgument for a URL that is not http(s)://host[:port][/path].
Result<std::unique_ptr<HttpTransport>> MakeHttpTransport(const std::string& base_url,
                                                         const HttpOptions& opt);

}  // namespace kf::model
