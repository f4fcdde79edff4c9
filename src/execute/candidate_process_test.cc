// A candidate host's lifecycle against a fake zygote and a fake host on socket pairs: no
// Python, no sandbox. The pid the fake zygote reports is a paused child of this test, so Stop's
// kill has a real process group to end.
#include "execute/candidate_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "common/process.h"
#include "execute/requests.h"
#include "execute/runner_fakes.h"

namespace kf::execute {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::milliseconds;

// Generous bounds for messages already written into a socket: never reached.
constexpr milliseconds kNow(10000);

json Load() {
  return requests::Load("class ModelNew: pass", "", json::array(), 1, json::array(),
                        json::array(), "");
}

// A process of this test that stands for a candidate host: paused in its own process group.
struct Paused {
  pid_t pid = fork();
  Paused() {
    if (pid == 0) {
      setpgid(0, 0);
      pause();
      _exit(0);
    }
    setpgid(pid, pid);
  }
  ~Paused() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  int Wait() {  // its wait status
    int status = 0;
    waitpid(pid, &status, 0);
    pid = -1;
    return status;
  }
};

// The lane's zygote, played by the test through `peer`.
struct FakeZygote {
  RunnerProc zygote;
  Channel peer;
  FakeZygote() { peer = PlayRunner(&zygote, "zygote", "zygote"); }
  void Answer(const json& j) { EXPECT_TRUE(peer.Send(j).ok()); }
  // Reads the spawn request: its JSON and the host's end of the candidate's channel, which
  // travels with its first byte (Channel::SendWithFd).
  std::pair<json, UniqueFd> TakeSpawn() {
    char first = 0;
    char control[CMSG_SPACE(sizeof(int))] = {};
    iovec iov = {&first, 1};
    msghdr mh = {};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control;
    mh.msg_controllen = sizeof control;
    EXPECT_EQ(recvmsg(peer.fd(), &mh, 0), 1);
    int fd = -1;
    if (cmsghdr* c = CMSG_FIRSTHDR(&mh); c && c->cmsg_type == SCM_RIGHTS) {
      memcpy(&fd, CMSG_DATA(c), sizeof fd);
    }
    std::string line(1, first);
    for (char ch; read(peer.fd(), &ch, 1) == 1 && ch != '\n';) line += ch;
    return {json::parse(line, nullptr, false), UniqueFd(fd)};
  }
};

class CandidateProcessTest : public testing::Test {
 protected:
  CandidateProcessTest()
      : workdir_(fs::path(testing::TempDir()) / ("cand-" + std::to_string(getpid()))),
        proc_(fake_.zygote, load_inline_) {}
  // A host still running is stopped by proc_'s destructor: its reap request then finds the
  // fake zygote gone at once instead of waiting for an answer.
  ~CandidateProcessTest() override { fake_.peer.Close(); }

  // Spawns through the fake zygote; host_ is then the candidate host's end.
  void Spawn() {
    fake_.Answer({{"ok", true}, {"pid", child_.pid}});
    ASSERT_TRUE(proc_.Spawn("cpu", workdir_).ok());
    auto [msg, fd] = fake_.TakeSpawn();
    EXPECT_EQ(msg["op"], "spawn");
    EXPECT_EQ(msg["device"], "cpu");
    EXPECT_EQ(msg["workdir"], workdir_.string());
    ASSERT_TRUE(fd.valid());
    host_ = Channel(std::move(fd));
  }

  std::vector<json> builds_;  // the args of each load_inline event served
  LoadInlineReply build_reply_{true, "/cache/ext.so", "ext", ""};
  LoadInlineFn load_inline_ = [this](const json& args) {
    builds_.push_back(args);
    return build_reply_;
  };
  Paused child_;
  fs::path workdir_;
  FakeZygote fake_;
  CandidateProcess proc_;
  Channel host_;
};

TEST_F(CandidateProcessTest, AsksServingBuildsThenStops) {
  Spawn();
  EXPECT_EQ(proc_.pid(), child_.pid);
  EXPECT_TRUE(fs::is_directory(workdir_));
  // The host asks for one build before it answers.
  ASSERT_TRUE(host_.Send({{"event", "load_inline"}, {"args", {{"name", "ext"}}}}).ok());
  ASSERT_TRUE(
      host_.Send({{"ok", true}, {"outputs", json::array()}, {"extension_calls", 42}}).ok());
  auto r = proc_.Ask(requests::Call("main", json::object()), kNow);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)["extension_calls"], 42);
  ASSERT_EQ(builds_.size(), 1u);
  EXPECT_EQ(builds_[0]["name"], "ext");
  EXPECT_FALSE(proc_.build_failed());
  auto asked = host_.Receive(kNow);
  ASSERT_TRUE(asked.ok());
  EXPECT_EQ((*asked)["op"], "call");
  auto built = host_.Receive(kNow);
  ASSERT_TRUE(built.ok());
  EXPECT_EQ((*built)["ok"], true);
  EXPECT_EQ((*built)["so_path"], "/cache/ext.so");

  const int pid = proc_.pid();
  fake_.Answer({{"ok", true}});  // to the reap
  proc_.Stop();
  int status = child_.Wait();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  auto reap = fake_.peer.Receive(kNow);
  ASSERT_TRUE(reap.ok());
  EXPECT_EQ((*reap)["op"], "reap");
  EXPECT_EQ((*reap)["pid"], pid);
  EXPECT_EQ(proc_.pid(), -1);
  EXPECT_FALSE(fs::exists(workdir_));
  proc_.Stop();  // idempotent: nothing more is asked of the zygote
  EXPECT_EQ(fake_.peer.Receive(milliseconds(0)).status().code(), Code::kTimeout);
}

TEST_F(CandidateProcessTest, AFailedBuildIsNoted) {
  Spawn();
  build_reply_ = {false, "", "", "error: expected ';'"};
  ASSERT_TRUE(host_.Send({{"event", "load_inline"}, {"args", json::object()}}).ok());
  ASSERT_TRUE(
      host_.Send({{"ok", false}, {"kind", "build_failed"}, {"message", "build failed"}}).ok());
  auto r = proc_.Ask(Load(), kNow);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(proc_.build_failed());
  (void)host_.Receive(kNow);  // the load request
  auto built = host_.Receive(kNow);
  ASSERT_TRUE(built.ok());
  EXPECT_EQ((*built)["ok"], false);
  EXPECT_EQ((*built)["message"], "error: expected ';'");
}

TEST_F(CandidateProcessTest, LateAndGoneHostsAreTold) {
  Spawn();
  auto late = proc_.Ask(requests::Call("main", json::object()), milliseconds(0));
  EXPECT_EQ(late.status().code(), Code::kTimeout);
  host_.Close();
  auto gone = proc_.Ask(requests::Call("main", json::object()), kNow);
  EXPECT_EQ(gone.status().code(), Code::kUnavailable);
}

// The host runs the candidate's code, which may write to its channel: a message that breaks the
// protocol is the host's failure, named by op and field, not an error of kforge's.
TEST_F(CandidateProcessTest, AHostBreakingTheProtocolFailsWithTheFieldNamed) {
  Spawn();
  ASSERT_TRUE(host_.Send({{"ok", true}, {"outputs", json::array()}, {"extension_calls", "many"}})
                  .ok());
  auto r = proc_.Ask(requests::Call("main", json::object()), kNow);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)["ok"], false);
  EXPECT_EQ((*r)["kind"], "protocol");
  EXPECT_EQ((*r)["message"],
            "its process broke the protocol: candidate 'call' reply: field 'extension_calls' "
            "must be integer, not string");
  ASSERT_TRUE(host_.Send({{"event", "load_inline"}, {"args", "x"}}).ok());
  r = proc_.Ask(Load(), kNow);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["kind"], "protocol");
  EXPECT_TRUE(builds_.empty());  // nothing built for it
}

TEST_F(CandidateProcessTest, ARequestBreakingTheProtocolIsNeverSent) {
  Spawn();
  auto r = proc_.Ask({{"op", "call"}, {"slot", "main"}}, kNow);
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("candidate 'call' request: missing required field "
                                      "'buffers'"),
            std::string::npos);
  EXPECT_EQ(host_.Receive(milliseconds(0)).status().code(), Code::kTimeout);
}

TEST_F(CandidateProcessTest, ReapSaysHowItEnded) {
  Spawn();
  fake_.Answer({{"ok", true}, {"running", false}, {"signal", 11}});
  EXPECT_EQ(proc_.Reap(), "it was killed by signal 11 (Segmentation fault)");
  EXPECT_EQ(proc_.pid(), -1);  // reaped: Stop kills nothing more
  proc_.Stop();
  EXPECT_FALSE(fs::exists(workdir_));
}

TEST_F(CandidateProcessTest, ReapKillsAHostStillRunning) {
  Spawn();
  fake_.Answer({{"ok", true}, {"running", true}});
  fake_.Answer({{"ok", true}, {"exit_code", 3}});
  EXPECT_EQ(proc_.Reap(), "it exited with code 3");
  int status = child_.Wait();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TEST_F(CandidateProcessTest, ReapWithoutAZygoteSaysItEnded) {
  Spawn();
  fake_.peer.Close();
  EXPECT_EQ(proc_.Reap(), "it ended");
}

TEST_F(CandidateProcessTest, AZygoteThatCannotForkIsAnError) {
  fake_.Answer({{"ok", false}, {"message", "fork: out of memory"}});
  Status s = proc_.Spawn("cpu", workdir_);
  EXPECT_EQ(s.code(), Code::kUnavailable);
  EXPECT_NE(s.message().find("fork: out of memory"), std::string::npos);
  EXPECT_EQ(proc_.pid(), -1);
  fs::remove_all(workdir_);  // made before the zygote was asked
}

// Lane::Impl::TakeHost (--prestart-host) against the same fake zygote: the lane's spare host.
class TakeHostTest : public testing::Test {
 protected:
  TakeHostTest() {
    lane_.zygote.what = "zygote";
    lane_.zygote.service = "zygote";
    lane_.zygote.chan = std::move(fake_.zygote.chan);
    lane_.opt.work_dir = fs::path(testing::TempDir()) / ("take-host-" + std::to_string(getpid()));
    lane_.opt.prestart_host = true;
    // A request the lane never sent fails its read instead of waiting for ever.
    timeval bound = {10, 0};
    setsockopt(fake_.peer.fd(), SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
  }
  ~TakeHostTest() override {
    fake_.peer.Close();  // a spare still held is stopped at once, its reap unanswered
    lane_.StopSpare();
    fs::remove_all(lane_.opt.work_dir);
  }
  // The next request the lane sent, read byte by byte as TakeSpawn reads (a Channel's read
  // ahead would swallow the next spawn's descriptor): a spawn or a plain one.
  json NextRequest() { return fake_.TakeSpawn().first; }

  // Forked before the fake zygote's sockets exist, so no copy of them outlives peer.Close().
  Paused a_, b_, c_, d_, e_;
  FakeZygote fake_;
  Lane::Impl lane_;
};

TEST_F(TakeHostTest, EachRunAfterTheFirstTakesTheSpareForkedDuringTheOneBefore) {
  bool prestarted = true;
  fake_.Answer({{"ok", true}, {"pid", a_.pid}});
  fake_.Answer({{"ok", true}, {"pid", b_.pid}});
  auto first = lane_.TakeHost("cpu", {}, &prestarted);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->pid, a_.pid);
  EXPECT_FALSE(prestarted);  // nothing was forked ahead of the first run
  const json fork_a = NextRequest(), fork_b = NextRequest();
  EXPECT_EQ(fork_a["workdir"], first->workdir.string());
  EXPECT_NE(fork_b["workdir"], fork_a["workdir"]);  // the spare has a folder of its own
  ASSERT_TRUE(lane_.spare.has_value());
  EXPECT_EQ(lane_.spare->proc.pid, b_.pid);

  // The spare still runs: the next run takes it, and the one after's spare is forked.
  fake_.Answer({{"ok", true}, {"running", true}});
  fake_.Answer({{"ok", true}, {"pid", c_.pid}});
  auto second = lane_.TakeHost("cpu", {}, &prestarted);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->pid, b_.pid);
  EXPECT_TRUE(prestarted);
  EXPECT_EQ(second->workdir.string(), fork_b["workdir"]);
  const json alive = NextRequest();
  EXPECT_EQ(alive["op"], "reap");  // asked whether it still runs, without waiting
  EXPECT_EQ(alive["pid"], b_.pid);
  EXPECT_EQ(alive["timeout_s"], 0);
  const json fork_c = NextRequest();
  EXPECT_EQ(lane_.spare->proc.pid, c_.pid);

  // A spare that ended (its start failed, or it was killed) is given no candidate: its end
  // would read as the candidate's crash. Its folder goes; the run gets a host forked now.
  fake_.Answer({{"ok", true}, {"exit_code", 70}});
  fake_.Answer({{"ok", true}, {"pid", d_.pid}});
  fake_.Answer({{"ok", true}, {"pid", e_.pid}});
  auto third = lane_.TakeHost("cpu", {}, &prestarted);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->pid, d_.pid);
  EXPECT_FALSE(prestarted);
  EXPECT_EQ(NextRequest()["op"], "reap");
  EXPECT_FALSE(fs::exists(fork_c["workdir"].get<std::string>()));
  EXPECT_EQ(NextRequest()["op"], "spawn");
  EXPECT_EQ(NextRequest()["op"], "spawn");
  EXPECT_EQ(lane_.spare->proc.pid, e_.pid);
  // Nothing else was asked: a reaped spare is not killed or reaped again.
  EXPECT_EQ(fake_.peer.Receive(milliseconds(0)).status().code(), Code::kTimeout);
}

TEST_F(TakeHostTest, ASpareForAnotherJitCacheIsStoppedNotGiven) {
  bool prestarted = true;
  fake_.Answer({{"ok", true}, {"pid", a_.pid}});
  fake_.Answer({{"ok", true}, {"pid", b_.pid}});
  ASSERT_TRUE(lane_.TakeHost("cpu", {}, &prestarted).ok());
  (void)NextRequest();
  const json spare = NextRequest();
  // A Triton candidate's host may write its compiler's cache: the spare forked without one
  // cannot serve it.
  const fs::path jit = lane_.opt.work_dir / "jit";
  fake_.Answer({{"ok", true}});  // the stopped spare's reap
  fake_.Answer({{"ok", true}, {"pid", c_.pid}});
  fake_.Answer({{"ok", true}, {"pid", d_.pid}});
  auto host = lane_.TakeHost("cpu", jit, &prestarted);
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(host->pid, c_.pid);
  EXPECT_FALSE(prestarted);
  int status = b_.Wait();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);  // the spare was killed
  EXPECT_EQ(NextRequest()["op"], "reap");
  EXPECT_FALSE(fs::exists(spare["workdir"].get<std::string>()));
  const json fresh = NextRequest();
  EXPECT_EQ(fresh["jit_cache"], jit.string());
  EXPECT_EQ(NextRequest()["jit_cache"], jit.string());  // the next spare serves the same cache
}

TEST_F(TakeHostTest, WithoutPrestartEveryRunForksItsOwn) {
  lane_.opt.prestart_host = false;
  bool prestarted = true;
  fake_.Answer({{"ok", true}, {"pid", a_.pid}});
  fake_.Answer({{"ok", true}, {"pid", b_.pid}});
  auto first = lane_.TakeHost("cpu", {}, &prestarted);
  auto second = lane_.TakeHost("cpu", {}, &prestarted);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->pid, a_.pid);
  EXPECT_EQ(second->pid, b_.pid);
  EXPECT_FALSE(prestarted);
  EXPECT_FALSE(lane_.spare.has_value());
  EXPECT_EQ(NextRequest()["op"], "spawn");
  EXPECT_EQ(NextRequest()["op"], "spawn");
  EXPECT_EQ(fake_.peer.Receive(milliseconds(0)).status().code(), Code::kTimeout);
}

}  // namespace
}  // namespace kf::execute
