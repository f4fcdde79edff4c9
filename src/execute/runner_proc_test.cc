// RunnerProc::Request against a runner played by the test on a socket pair: events sent before
// the reply (the confined judge's borrow and give_back) are answered in order, a failed answer
// reaches the runner as {"ok": false, "message"}, and events kforge does not expect break the
// protocol.
#include "execute/runner_proc.h"

#include <gtest/gtest.h>

#include "execute/requests.h"
#include "execute/runner_fakes.h"

namespace kf::execute {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

constexpr milliseconds kNow(10000);  // messages are already in the socket: never reached

struct FakeJudge {
  RunnerProc judge;
  Channel peer;
  FakeJudge() { peer = PlayRunner(&judge, "untrusted problem's judge", "judge"); }
  void Say(const json& j) { EXPECT_TRUE(peer.Send(j).ok()); }
  json Heard() {
    auto r = peer.Receive(kNow);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : json();
  }
};

const json kBorrow = {{"event", "borrow"}, {"shape", {2, 3}}, {"dtype", "float32"}};
const json kBuffer = {{"kind", "file"}, {"path", "/dev/shm/x/buf1"}, {"numel", 6},
                      {"shape", {2, 3}}, {"dtype", "float32"}};

TEST(RunnerProcEvents, EachEventIsAnsweredBeforeTheReplyIsRead) {
  FakeJudge f;
  f.Say(kBorrow);
  f.Say({{"event", "give_back"}, {"ids", {7}}});
  f.Say({{"ok", true}, {"peak_bytes", 10}, {"free_bytes", 0}});
  std::vector<std::string> seen;
  auto r = f.judge.Request(requests::Bare("memory"), kNow, [&](const json& e) -> Result<json> {
    seen.push_back(e["event"]);
    if (e["event"] == "borrow") return json{{"buffer", kBuffer}, {"id", 7}};
    return json::object();
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)["peak_bytes"], 10);
  EXPECT_EQ(seen, (std::vector<std::string>{"borrow", "give_back"}));
  EXPECT_EQ(f.Heard()["op"], "memory");
  json lent = f.Heard();
  EXPECT_EQ(lent["ok"], true);
  EXPECT_EQ(lent["id"], 7);
  EXPECT_EQ(lent["buffer"], kBuffer);
  EXPECT_EQ(f.Heard(), json({{"ok", true}}));
}

TEST(RunnerProcEvents, AFailedAnswerReachesTheRunnerWithItsReason) {
  FakeJudge f;
  f.Say(kBorrow);
  f.Say({{"ok", false}, {"message", "kforge could not lend a buffer: out of memory"}});
  auto r = f.judge.Request(requests::Bare("memory"), kNow, [](const json&) -> Result<json> {
    return Status::Internal("judge failed 'lend': out of memory");
  });
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("could not lend"), std::string::npos);
  f.Heard();  // the request
  json answer = f.Heard();
  EXPECT_EQ(answer["ok"], false);
  EXPECT_EQ(answer["message"], "judge failed 'lend': out of memory");
}

TEST(RunnerProcEvents, AnEventNobodyExpectsBreaksTheProtocol) {
  {
    FakeJudge f;  // no handler: the trusted judge sends no events
    f.Say(kBorrow);
    auto r = f.judge.Request(requests::Bare("memory"), kNow);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::kInternal);
    EXPECT_NE(r.status().message().find("broke the protocol"), std::string::npos)
        << r.status().message();
  }
  {
    FakeJudge f;  // a handler, and an event the judge's protocol does not have
    f.Say({{"event", "load_inline"}, {"args", json::object()}});
    bool called = false;
    auto r = f.judge.Request(requests::Bare("memory"), kNow, [&](const json&) -> Result<json> {
      called = true;
      return json::object();
    });
    ASSERT_FALSE(r.ok());
    EXPECT_FALSE(called);
    EXPECT_NE(r.status().message().find("unknown event 'load_inline'"), std::string::npos)
        << r.status().message();
  }
  {
    FakeJudge f;  // a borrow without its dtype
    f.Say({{"event", "borrow"}, {"shape", {2}}});
    auto r = f.judge.Request(requests::Bare("memory"), kNow,
                             [](const json&) -> Result<json> { return json::object(); });
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("dtype"), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace kf::execute
