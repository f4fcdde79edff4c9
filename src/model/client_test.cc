#include <gtest/gtest.h>

#include <deque>
#include <thread>

#include "model/model.h"

namespace kf::model {
namespace {

using nlohmann::json;

// Plays back scripted answers and records what was sent.
class FakeTransport : public HttpTransport {
 public:
  std::deque<Result<HttpResponse>> script;
  std::vector<std::string> bodies;
  std::vector<std::vector<std::pair<std::string, std::string>>> headers;
  std::vector<std::string> paths;

  Result<HttpResponse> Post(const std::string& path, const std::string& body,
                            const std::vector<std::pair<std::string, std::string>>& h) override {
    paths.push_back(path);
    bodies.push_back(body);
    headers.push_back(h);
    if (script.empty()) return Status::Internal("script ran out");
    auto r = script.front();
    script.pop_front();
    return r;
  }
  std::string Describe() const override { return "http://fake/v1"; }
};

std::string Completion(const std::string& content, const json& extra = json::object()) {
  json msg = {{"role", "assistant"}, {"content", content}};
  msg.update(extra);
  return json{{"choices", {{{"index", 0}, {"message", msg}, {"finish_reason", "stop"}}}},
              {"usage", {{"completion_tokens", 7}}}}
      .dump();
}

struct Harness {
  FakeTransport* fake = nullptr;
  std::vector<std::chrono::milliseconds> sleeps;
  std::unique_ptr<ModelClient> client;

  explicit Harness(ClientOptions opt = {}) {
    auto t = std::make_unique<FakeTransport>();
    fake = t.get();
    if (opt.model.empty()) opt.model = "m";
    client = std::make_unique<ModelClient>(
        opt, std::move(t), [this](std::chrono::milliseconds d) { sleeps.push_back(d); });
  }
};

TEST(ModelClient, SendsOpenAiRequest) {
  ClientOptions opt;
  opt.model = "MusaCoder-27B";
  opt.api_key = "sk-test";
  Harness h(opt);
  h.fake->script.push_back(HttpResponse{200, Completion("hello")});
  Sampling s;
  s.n = 2;
  s.temperature = 0.5;
  s.top_p = 0.9;
  s.max_tokens = 100;
  s.stop = {"</answer>"};
  s.seed = 42;
  auto r = h.client->Chat({{"system", "sys"}, {"user", "hi"}}, s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->choices.at(0).content, "hello");
  EXPECT_EQ(r->choices.at(0).finish_reason, "stop");
  EXPECT_EQ(r->usage["completion_tokens"], 7);
  EXPECT_EQ(h.fake->paths.at(0), "/chat/completions");
  json body = json::parse(h.fake->bodies.at(0));
  EXPECT_EQ(body["model"], "MusaCoder-27B");
  EXPECT_EQ(body["messages"][1]["content"], "hi");
  EXPECT_EQ(body["n"], 2);
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(body["top_p"].get<double>(), 0.9);
  EXPECT_EQ(body["max_tokens"], 100);
  EXPECT_EQ(body["stop"][0], "</answer>");
  EXPECT_EQ(body["seed"], 42);
  ASSERT_EQ(h.fake->headers.at(0).size(), 1u);
  EXPECT_EQ(h.fake->headers[0][0].second, "Bearer sk-test");
}

TEST(ModelClient, NoKeyNoSeedNoStop) {
  Harness h;
  h.fake->script.push_back(HttpResponse{200, Completion("x")});
  ASSERT_TRUE(h.client->Chat({{"user", "hi"}}, Sampling{}).ok());
  json body = json::parse(h.fake->bodies.at(0));
  EXPECT_FALSE(body.contains("seed"));
  EXPECT_FALSE(body.contains("stop"));
  EXPECT_TRUE(h.fake->headers.at(0).empty());
}

TEST(ModelClient, RetriesConnectErrors429And5xxWithBackoff) {
  ClientOptions opt;
  opt.max_attempts = 5;
  opt.backoff_initial = std::chrono::milliseconds(100);
  opt.backoff_max = std::chrono::milliseconds(300);
  Harness h(opt);
  h.fake->script.push_back(Status::Unavailable("connection refused"));
  h.fake->script.push_back(HttpResponse{429, "slow down"});
  h.fake->script.push_back(HttpResponse{503, "overloaded"});
  h.fake->script.push_back(HttpResponse{500, "oops"});
  h.fake->script.push_back(HttpResponse{200, Completion("done")});
  auto r = h.client->Chat({{"user", "hi"}}, Sampling{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->attempts, 5);
  using std::chrono::milliseconds;
  EXPECT_EQ(h.sleeps, (std::vector<milliseconds>{milliseconds(100), milliseconds(200),
                                                 milliseconds(300), milliseconds(300)}));
}

TEST(ModelClient, GivesUpAfterMaxAttemptsNamingTheCause) {
  ClientOptions opt;
  opt.max_attempts = 3;
  Harness h(opt);
  for (int i = 0; i < 3; ++i) h.fake->script.push_back(Status::Unavailable("connection refused"));
  auto r = h.client->Chat({{"user", "hi"}}, Sampling{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_NE(r.status().message().find("cannot reach the model server at http://fake/v1"),
            std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("connection refused"), std::string::npos);
  EXPECT_NE(r.status().message().find("3 attempts"), std::string::npos);
  EXPECT_EQ(h.sleeps.size(), 2u);
}

TEST(ModelClient, TimeoutAnd4xxAndGarbageAreNotRetried) {
  {
    Harness h;
    h.fake->script.push_back(Status::Timeout("no answer within 5 s"));
    auto r = h.client->Chat({{"user", "hi"}}, Sampling{});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::kTimeout);
    EXPECT_NE(r.status().message().find("too slow"), std::string::npos);
    EXPECT_TRUE(h.sleeps.empty());
  }
  {
    Harness h;
    h.fake->script.push_back(HttpResponse{404, "{\"error\": \"model not found\"}"});
    auto r = h.client->Chat({{"user", "hi"}}, Sampling{});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find("HTTP 404"), std::string::npos);
    EXPECT_NE(r.status().message().find("model not found"), std::string::npos);
  }
  {
    Harness h;
    h.fake->script.push_back(HttpResponse{200, "<html>I am a teapot</html>"});
    auto r = h.client->Chat({{"user", "hi"}}, Sampling{});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::kInternal);
    EXPECT_NE(r.status().message().find("not JSON"), std::string::npos);
    EXPECT_NE(r.status().message().find("teapot"), std::string::npos);
    EXPECT_EQ(h.fake->bodies.size(), 1u);
  }
}

TEST(ParseChatResponse, RejectsMissingOrEmptyChoices) {
  for (const char* body : {"{}", "{\"choices\": []}", "[1,2]", "{\"choices\": [{\"text\": 1}]}",
                           "{\"error\": {\"message\": \"bad\"}}"}) {
    auto r = ParseChatResponse(body);
    EXPECT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().code(), Code::kInternal);
  }
  auto r = ParseChatResponse("{\"error\": {\"message\": \"context too long\"}}");
  EXPECT_NE(r.status().message().find("context too long"), std::string::npos);
}

TEST(ModelClient, BytesThatAreNotUtf8NeitherThrowNorVanish) {
  Harness h;
  h.fake->script.push_back(HttpResponse{200, "\xff\xfe\x80 binary garbage"});
  // A prompt holding invalid UTF-8 (an echoed candidate) is sent with the bytes replaced.
  auto r = h.client->Chat({{"user", "candidate \xc3"}}, Sampling{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not JSON"), std::string::npos);
  EXPECT_NE(h.fake->bodies.at(0).find("candidate \xef\xbf\xbd"), std::string::npos);
}

TEST(ParseChatResponse, KeepsReasoningApart) {
  auto r = ParseChatResponse(Completion("the code", {{"reasoning_content", "let me think"}}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->choices[0].content, "the code");
  EXPECT_EQ(r->choices[0].reasoning, "let me think");

  r = ParseChatResponse(Completion("<think>\nhmm, tiles\n</think>\n\n```python\nx\n```"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->choices[0].content, "```python\nx\n```");
  EXPECT_EQ(r->choices[0].reasoning, "\nhmm, tiles\n");

  // Content as a list of text parts.
  r = ParseChatResponse(json{
      {"choices",
       {{{"message",
          {{"content", {{{"type", "text"}, {"text", "a"}}, {{"type", "text"}, {"text", "b"}}}}}}}}}}
                            .dump());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->choices[0].content, "ab");
}

TEST(SplitReasoning, Cases) {
  std::string a, r;
  SplitReasoning("plain", &a, &r);
  EXPECT_EQ(a, "plain");
  EXPECT_EQ(r, "");
  SplitReasoning("<think>unfinished thought", &a, &r);
  EXPECT_EQ(a, "");
  EXPECT_EQ(r, "unfinished thought");
  // The template opened the block in the prompt: the reply starts inside it.
  SplitReasoning("inside</think>answer", &a, &r);
  EXPECT_EQ(a, "answer");
  EXPECT_EQ(r, "inside");
}

TEST(ModelClient, LimitsConcurrency) {
  // A transport that counts overlapping calls.
  class Counting : public HttpTransport {
   public:
    std::mutex mu;
    int now = 0, peak = 0;
    Result<HttpResponse> Post(const std::string&, const std::string&,
                              const std::vector<std::pair<std::string, std::string>>&) override {
      {
        std::lock_guard<std::mutex> g(mu);
        peak = std::max(peak, ++now);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      {
        std::lock_guard<std::mutex> g(mu);
        --now;
      }
      return HttpResponse{200, Completion("x")};
    }
    std::string Describe() const override { return "counting"; }
  };
  auto t = std::make_unique<Counting>();
  Counting* c = t.get();
  ClientOptions opt;
  opt.max_concurrency = 2;
  ModelClient client(opt, std::move(t));
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&] { EXPECT_TRUE(client.Chat({{"user", "x"}}, Sampling{}).ok()); });
  }
  for (auto& th : threads) th.join();
  EXPECT_LE(c->peak, 2);
  EXPECT_GE(c->peak, 1);
}

}  // namespace
}  // namespace kf::model
