#include "mcp/progress.h"

#include <gtest/gtest.h>

#include <mutex>
#include <vector>

namespace kf::mcp {
namespace {

using nlohmann::json;

struct Sink {
  std::mutex mu;
  std::vector<json> sent;
  CallContext::Send send() {
    return [this](const json& m) {
      std::lock_guard<std::mutex> g(mu);
      sent.push_back(m["params"]);
    };
  }
  size_t size() {
    std::lock_guard<std::mutex> g(mu);
    return sent.size();
  }
};

TEST(ProgressReporter, StepsAreSentAndNeverGoBack) {
  Sink sink;
  CallContext ctx("2025-06-18", "tok", sink.send());
  {
    ProgressReporter p(ctx, 3, std::chrono::hours(1));  // no heartbeat in this test
    p.Reach(0, "build");
    p.Reach(2, "execute");
    p.Reach(1, "late");  // a step out of order still moves progress forward
  }
  ASSERT_EQ(sink.sent.size(), 3u);
  EXPECT_EQ(sink.sent[0]["progress"], 0);
  EXPECT_EQ(sink.sent[0]["total"], 3);
  EXPECT_EQ(sink.sent[0]["message"], "build");
  EXPECT_EQ(sink.sent[1]["progress"], 2);
  EXPECT_GT(sink.sent[2]["progress"].get<double>(), 2);
  EXPECT_EQ(sink.sent[2]["progressToken"], "tok");
}

TEST(ProgressReporter, HeartbeatsGrowButStayBelowTheNextStep) {
  Sink sink;
  CallContext ctx("2025-03-26", 7, sink.send());
  {
    ProgressReporter p(ctx, 2, std::chrono::milliseconds(1));
    p.Reach(1, "build");
    while (sink.size() < 4) std::this_thread::yield();
  }
  std::lock_guard<std::mutex> g(sink.mu);
  double last = 0;
  for (size_t i = 1; i < sink.sent.size(); ++i) {
    double x = sink.sent[i]["progress"].get<double>();
    EXPECT_GT(x, sink.sent[i - 1]["progress"].get<double>());
    EXPECT_LT(x, 2);
    EXPECT_EQ(sink.sent[i]["message"].get<std::string>().rfind("build (", 0), 0u);
    last = x;
  }
  EXPECT_GT(last, 1);
}

TEST(ProgressReporter, NothingWithoutAToken) {
  Sink sink;
  CallContext ctx("2025-06-18", nullptr, sink.send());
  {
    ProgressReporter p(ctx, 2, std::chrono::milliseconds(1));
    p.Reach(1, "build");
  }
  EXPECT_EQ(sink.size(), 0u);
}

TEST(HeartbeatProgress, HalfWayAfterAMinuteNeverTheNextStep) {
  EXPECT_DOUBLE_EQ(HeartbeatProgress(2, std::chrono::seconds(0)), 2);
  EXPECT_DOUBLE_EQ(HeartbeatProgress(2, std::chrono::seconds(60)), 2.5);
  EXPECT_LT(HeartbeatProgress(2, std::chrono::hours(24)), 3);
  EXPECT_GT(HeartbeatProgress(2, std::chrono::seconds(61)),
            HeartbeatProgress(2, std::chrono::seconds(60)));
}

}  // namespace
}  // namespace kf::mcp
