#include <algorithm>
#include <thread>

#include "model/model.h"

namespace kf::model {
namespace {

using nlohmann::json;

std::string Excerpt(const std::string& s, size_t max = 200) {
  std::string out = s.substr(0, max);
  for (char& c : out) {
    if (c == '\n' || c == '\r') {
      c = ' ';
    }
  }
  if (s.size() > max) {
    out += "...";
  }
  return out;
}

// The text of a content field: a string, or OpenAI's list of {"type":"text","text":...} parts.
std::string ContentText(const json& c) {
  if (c.is_string()) {
    return c.get<std::string>();
  }
  std::string out;
  if (c.is_array()) {
    for (const auto& part : c) {
      if (part.is_object() && part.value("type", "") == "text" && part.contains("text") &&
          part["text"].is_string()) {
        out += part["text"].get<std::string>();
      }
    }
  }
  return out;
}

// Waits for a free request slot and gives it back when destroyed.
class Slot {
 public:
  Slot(std::mutex& mu, std::condition_variable& cv, int* in_flight, int max)
      : mu_(mu), cv_(cv), in_flight_(in_flight) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return *in_flight_ < std::max(1, max); });
    ++*in_flight_;
  }
  ~Slot() {
    {
      std::lock_guard<std::mutex> g(mu_);
      --*in_flight_;
    }
    cv_.notify_one();
  }

 private:
  std::mutex& mu_;
  std::condition_variable& cv_;
  int* in_flight_;
};

}  // namespace

json ToJson(const std::vector<Message>& messages) {
  json out = json::array();
  for (const auto& m : messages) {
    out.push_back({{"role", m.role}, {"content", m.content}});
  }
  return out;
}

json ChatRequest(const std::string& model, const std::vector<Message>& messages,
                 const Sampling& s) {
  json body = {{"model", model},   {"messages", ToJson(messages)},
               {"n", s.n},         {"temperature", s.temperature},
               {"top_p", s.top_p}, {"max_tokens", s.max_tokens}};
  if (!s.stop.empty()) {
    body["stop"] = s.stop;
  }
  if (s.seed) {
    body["seed"] = *s.seed;
  }
  return body;
}

void SplitReasoning(const std::string& content, std::string* answer, std::string* reasoning) {
  answer->clear();
  reasoning->clear();
  const std::string open = "<think>", close = "</think>";
  size_t start = content.find(open);
  size_t end = content.find(close);
  if (start == std::string::npos && end == std::string::npos) {
    *answer = content;
    return;
  }
  // Some chat templates put <think> into the prompt, so the reply starts inside the block.
  size_t body = start == std::string::npos ? 0 : start + open.size();
  if (end == std::string::npos || end < body) {
    *answer = content.substr(0, start == std::string::npos ? 0 : start);
    *reasoning = content.substr(body);
    return;
  }
  *reasoning = content.substr(body, end - body);
  *answer = content.substr(0, start == std::string::npos ? 0 : start) +
            content.substr(end + close.size());
  // The answer usually starts with the blank line that followed </think>.
  size_t first = answer->find_first_not_of(" \t\r\n");
  answer->erase(0, first == std::string::npos ? answer->size() : first);
}

Result<ChatResult> ParseChatResponse(const std::string& body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::Internal("the model server answered with something that is not JSON: \"" +
                            Excerpt(body) + "\"");
  }
  if (!j.is_object() || !j.contains("choices") || !j["choices"].is_array() ||
      j["choices"].empty()) {
    std::string why = j.is_object() && j.contains("error") ? ": error " + Excerpt(j["error"].dump())
                                                           : ": " + Excerpt(body);
    return Status::Internal(
        "the model server's answer has no choices (not an OpenAI chat "
        "completion)" +
        why);
  }
  ChatResult r;
  for (const auto& c : j["choices"]) {
    if (!c.is_object() || !c.contains("message") || !c["message"].is_object()) {
      return Status::Internal("a choice in the model server's answer has no message: " +
                              Excerpt(c.dump()));
    }
    const json& m = c["message"];
    Choice choice;
    std::string content = m.contains("content") ? ContentText(m["content"]) : "";
    std::string think;
    SplitReasoning(content, &choice.content, &think);
    // vLLM and SGLang reasoning parsers put it in reasoning_content; some servers say reasoning.
    for (const char* key : {"reasoning_content", "reasoning"}) {
      if (m.contains(key) && m[key].is_string()) {
        choice.reasoning = m[key].get<std::string>();
      }
    }
    if (!think.empty()) {
      choice.reasoning += (choice.reasoning.empty() ? "" : "\n") + think;
    }
    if (c.contains("finish_reason") && c["finish_reason"].is_string()) {
      choice.finish_reason = c["finish_reason"].get<std::string>();
    }
    r.choices.push_back(std::move(choice));
  }
  if (j.contains("usage")) {
    r.usage = j["usage"];
  }
  return r;
}

ModelClient::ModelClient(ClientOptions opt, std::unique_ptr<HttpTransport> transport, SleepFn sleep)
    : opt_(std::move(opt)), transport_(std::move(transport)), sleep_(std::move(sleep)) {
  if (!sleep_) {
    sleep_ = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
  }
}

Result<ChatResult> ModelClient::Chat(const std::vector<Message>& messages,
                                     const Sampling& sampling) {
  // Replace bytes that are not UTF-8 (a candidate echoed back may hold any) instead of throwing.
  const std::string body = ChatRequest(opt_.model, messages, sampling)
                               .dump(-1, ' ', false, json::error_handler_t::replace);
  std::vector<std::pair<std::string, std::string>> headers;
  if (!opt_.api_key.empty()) {
    headers.emplace_back("Authorization", "Bearer " + opt_.api_key);
  }
  const std::string where = transport_->Describe();
  std::chrono::milliseconds backoff = opt_.backoff_initial;
  Status last;
  const int attempts = std::max(1, opt_.max_attempts);
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    if (attempt > 1) {
      sleep_(backoff);
      backoff = std::min(opt_.backoff_max, backoff * 2);
    }
    Result<HttpResponse> resp = [&] {
      Slot slot(mu_, cv_, &in_flight_, opt_.max_concurrency);
      return transport_->Post("/chat/completions", body, headers);
    }();
    if (!resp.ok()) {
      const Status& s = resp.status();
      if (s.code() == Code::kTimeout) {
        return Status::Timeout("the model server at " + where + " is too slow: " + s.message());
      }
      last = Status::Unavailable("cannot reach the model server at " + where + ": " + s.message());
      if (s.code() == Code::kUnavailable) {
        continue;
      }
      return last;
    }
    const int code = resp->status;
    if (code == 429 || code >= 500) {
      last = Status::Unavailable("the model server at " + where + " answered HTTP " +
                                 std::to_string(code) + ": " + Excerpt(resp->body));
      continue;
    }
    if (code != 200) {
      return Status::Invalid("the model server at " + where + " refused the request with HTTP " +
                             std::to_string(code) + ": " + Excerpt(resp->body));
    }
    auto parsed = ParseChatResponse(resp->body);
    if (!parsed.ok()) {
      return parsed.status();
    }
    parsed->attempts = attempt;
    return parsed;
  }
  // Only retryable failures get here: the last one, and how often it was tried.
  return Status::Unavailable(last.message() + " (gave up after " + std::to_string(attempts) +
                             " attempts)");
}

}  // namespace kf::model
