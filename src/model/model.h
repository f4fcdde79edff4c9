// model: a client for OpenAI-compatible chat servers (vLLM, SGLang, llama.cpp, hosted APIs).
// The HTTP itself sits behind HttpTransport so tests script the server; the real transport
// (cpp-httplib) lives in src/model_http and exists only when kforge is built with KFORGE_NET.
//
// Thread-safety: ModelClient::Chat may be called from many threads; at most
// ClientOptions::max_concurrency requests are in flight at once, the rest wait their turn.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace kf::model {

struct Message {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};
nlohmann::json ToJson(const std::vector<Message>& messages);

// Sampling parameters of one request; each is sent as the OpenAI field of the same name.
struct Sampling {
  int n = 1;
  double temperature = 0.7;
  double top_p = 0.95;
  int max_tokens = 16384;  // reasoning models spend thousands of tokens before the code
  std::vector<std::string> stop;
  std::optional<int64_t> seed;  // unset: the server's own randomness
};

struct Choice {
  std::string content;    // the answer, reasoning removed
  std::string reasoning;  // `reasoning_content`, or what stood inside <think>...</think>
  std::string finish_reason;
};

struct ChatResult {
  std::vector<Choice> choices;  // never empty when returned ok
  nlohmann::json usage;         // the server's token counts, when it sent them
  int attempts = 1;             // HTTP requests made, retries included
};

struct HttpResponse {
  int status = 0;
  std::string body;
};

// One HTTP POST. Returns the response whatever its status code; fails with kUnavailable when
// no connection could be made and kTimeout when the server did not answer in time.
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  virtual Result<HttpResponse> Post(
      const std::string& path, const std::string& body,
      const std::vector<std::pair<std::string, std::string>>& headers) = 0;
  // Where requests go, for error messages ("http://localhost:8000/v1").
  virtual std::string Describe() const = 0;
};

struct ClientOptions {
  std::string model;    // the `model` field of every request
  std::string api_key;  // sent as "Authorization: Bearer ..."; empty sends none
  // Connect errors, 429 and 5xx are retried; time-outs, other 4xx and nonsense are not (a
  // timed-out generation would most likely time out again, and costs the most to repeat).
  int max_attempts = 4;
  std::chrono::milliseconds backoff_initial{1000};  // doubled after every failed attempt
  std::chrono::milliseconds backoff_max{30000};
  int max_concurrency = 8;  // requests in flight at once, over all threads
};

using SleepFn = std::function<void(std::chrono::milliseconds)>;

class ModelClient {
 public:
  // `sleep` waits between retries; tests pass one that records instead of sleeping.
  ModelClient(ClientOptions opt, std::unique_ptr<HttpTransport> transport, SleepFn sleep = {});

  // POST {base}/chat/completions. Errors name the cause and the server: kUnavailable (down),
  // kTimeout (slow), kInvalidArgument (a 4xx: bad model name, bad key), kInternal (an answer
  // that is not an OpenAI chat completion).
  Result<ChatResult> Chat(const std::vector<Message>& messages, const Sampling& sampling);

  const ClientOptions& options() const { return opt_; }

 private:
  ClientOptions opt_;
  std::unique_ptr<HttpTransport> transport_;
  SleepFn sleep_;
  std::mutex mu_;
  std::condition_variable cv_;
  int in_flight_ = 0;  // guarded by mu_
};

// The request body for one chat completion.
nlohmann::json ChatRequest(const std::string& model, const std::vector<Message>& messages,
                           const Sampling& sampling);

// Parses a /chat/completions response body; kInternal with a short excerpt when it is not
// JSON or has no choices.
Result<ChatResult> ParseChatResponse(const std::string& body);

// Splits "<think>...</think>answer" into reasoning and answer. Text without a think block is
// all answer; an unclosed <think> is all reasoning (the model ran out of tokens thinking).
void SplitReasoning(const std::string& content, std::string* answer, std::string* reasoning);

}  // namespace kf::model
