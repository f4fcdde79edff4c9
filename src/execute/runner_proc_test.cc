// RunnerProc::Request against a runner played by the test on a socket pair: events sent before
// the reply (the confined judge's borrow and give_back) are answered in order, a failed answer
// reaches the runner as {"ok": false, "message"}, and events kforge does not expect break the
// protocol.
#include "execute/runner_proc.h"

#include <gtest/gtest.h>

#include <fstream>

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

// A killed judge's buffer folder (RemoveSharedBuffers, called when a lane ends).
class SharedBuffers : public ::testing::Test {
 protected:
  std::filesystem::path tmp = std::filesystem::temp_directory_path();
  std::vector<std::filesystem::path> made;
  std::filesystem::path Folder(const std::string& name) {
    auto d = tmp / (name + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    made.push_back(d);
    return d;
  }
  static void Write(const std::filesystem::path& p) { std::ofstream(p) << "x"; }
  void TearDown() override {
    for (auto& d : made) std::filesystem::remove_all(d);
  }
};

TEST_F(SharedBuffers, ADeadJudgesBuffersAndFolderAreRemoved) {
  auto d = Folder("kforge-judge-test");
  Write(d / "buf1");
  Write(d / "buf2");
  EXPECT_EQ(RemoveSharedBuffers(d), 2);
  EXPECT_FALSE(std::filesystem::exists(d));
  EXPECT_EQ(RemoveSharedBuffers(d), 0);  // gone already: nothing to do
  EXPECT_EQ(RemoveSharedBuffers(""), 0);  // a judge that never said hello
}

TEST_F(SharedBuffers, NothingButAJudgesBufferFolderIsTouched) {
  // Another name, or a folder below the scratch folders: left whole.
  auto other = Folder("not-a-judge-");
  Write(other / "buf1");
  EXPECT_EQ(RemoveSharedBuffers(other), 0);
  EXPECT_TRUE(std::filesystem::exists(other / "buf1"));
  auto deep = Folder("kforge-test-parent-") / "kforge-judge-x";
  std::filesystem::create_directories(deep);
  Write(deep / "buf1");
  EXPECT_EQ(RemoveSharedBuffers(deep), 0);
  EXPECT_TRUE(std::filesystem::exists(deep / "buf1"));
  EXPECT_EQ(RemoveSharedBuffers(std::filesystem::relative(other)), 0);
  // A judge folder: its buffers go, anything else stays (and so does the folder).
  auto d = Folder("kforge-judge-mixed");
  Write(d / "buf1");
  Write(d / "notes.txt");
  std::filesystem::create_directories(d / "buf_dir");
  Write(d / "buf_dir" / "keep");
  std::filesystem::create_symlink(other / "buf1", d / "buf9");
  EXPECT_EQ(RemoveSharedBuffers(d), 1);
  EXPECT_TRUE(std::filesystem::exists(d / "notes.txt"));
  EXPECT_TRUE(std::filesystem::exists(d / "buf_dir" / "keep"));
  EXPECT_TRUE(std::filesystem::exists(other / "buf1"));  // a link's target is not followed
  // A link named like a judge folder is not followed either.
  auto link = tmp / ("kforge-judge-link" + std::to_string(getpid()));
  std::filesystem::create_directory_symlink(other, link);
  made.push_back(link);
  EXPECT_EQ(RemoveSharedBuffers(link), 0);
  EXPECT_TRUE(std::filesystem::exists(other / "buf1"));
}

}  // namespace
}  // namespace kf::execute
