// Zygote children, and the confined judge of an untrusted problem: problem text that came with
// a request (a reward service's inline problem) runs only in a process forked from the zygote
// and confined with a candidate's limits (no network, nothing writable but its own folder and
// the shared buffers, rlimits, seccomp), never in the trusted judge. It makes no shared buffer
// itself: it borrows each from the trusted judge (ConfinedRequest).
#include <signal.h>
#include <unistd.h>

#include "common/protocol.h"
#include "execute/lane_impl.h"
#include "execute/requests.h"

namespace kf::execute {
namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::milliseconds;

Result<ZygoteChild> SpawnFromZygote(RunnerProc& zygote, const std::string& op,
                                    const std::string& device, const fs::path& workdir,
                                    const fs::path& jit_cache) {
  UniqueFd mine, theirs;
  if (auto s = SocketPair(&mine, &theirs); !s.ok()) return s;
  std::error_code ec;
  fs::remove_all(workdir, ec);
  fs::create_directories(workdir, ec);
  if (ec) return Status::IoError("cannot create " + workdir.string() + ": " + ec.message());
  if (!jit_cache.empty()) {
    // Landlock grants a folder that exists; Triton fills it.
    fs::create_directories(jit_cache, ec);
    if (ec) return Status::IoError("cannot create " + jit_cache.string() + ": " + ec.message());
  }
  const json msg = requests::Spawn(op, device, workdir, jit_cache);
  const protocol::Schema& schema = protocol::Embedded();
  if (auto s = schema.CheckRequest("zygote", msg); !s.ok()) {
    return Status::Internal("kforge broke the protocol: " + s.message());
  }
  if (auto s = zygote.chan.SendWithFd(msg, theirs.get()); !s.ok()) {
    return Status::Unavailable("the zygote is gone: " + s.message());
  }
  theirs.Reset();
  auto r = zygote.chan.Receive(milliseconds(30000));
  if (r.ok()) {
    if (auto s = schema.CheckReplyTo("zygote", msg, *r); !s.ok()) {
      return Status::Internal("the zygote broke the protocol: " + s.message());
    }
  }
  if (!r.ok() || !r->value("ok", false)) {
    return Status::Unavailable("the zygote could not fork a process: " +
                               (r.ok() ? r->value("message", "?") : r.status().message()));
  }
  ZygoteChild child;
  child.pid = (*r)["pid"].get<int>();
  child.chan = Channel(std::move(mine));
  child.workdir = workdir;
  return child;
}

void StopZygoteChild(RunnerProc& zygote, ZygoteChild* child) {
  if (child->pid > 0) {
    child->chan.Close();
    ::kill(-child->pid, SIGKILL);
    ::kill(child->pid, SIGKILL);
    (void)zygote.Request(requests::Reap(child->pid, 30), milliseconds(40000));
    child->pid = -1;
  }
  if (!child->workdir.empty()) {
    std::error_code ec;
    fs::remove_all(child->workdir, ec);
    child->workdir.clear();
  }
}

void Lane::Impl::StopConfined() {
  if (!confined) return;
  confined->judge.chan.Close();
  StopZygoteChild(zygote, &confined->proc);
  const bool borrowed = confined->borrowed;
  confined.reset();
  // What it borrowed and had not given back (it was killed, or stopped between requests).
  if (borrowed) (void)judge.Request(requests::Reclaim(std::nullopt), milliseconds(60000));
}

Result<json> Lane::Impl::ConfinedRequest(const json& msg, milliseconds timeout) {
  // Its shared buffers are the trusted judge's: a CUDA IPC handle exported in the confined
  // judge's pid namespace would not open in the candidate host's (docs/SECURITY.md).
  auto lend = [this](const json& event) -> Result<json> {
    const std::string name = event["event"].get<std::string>();
    if (name == "borrow") {
      confined->borrowed = true;
      auto r = judge.Request(requests::Lend(event), milliseconds(60000));
      if (!r.ok()) return r.status();
      return json{{"buffer", (*r)["buffer"]}, {"id", (*r)["id"]}};
    }
    auto r = judge.Request(requests::Reclaim(event["ids"].get<std::vector<int64_t>>()),
                           milliseconds(60000));
    if (!r.ok()) return r.status();
    return json::object();
  };
  return confined->judge.Request(msg, timeout, lend);
}

Result<json> Lane::Impl::StartConfined(const std::string& problem) {
  StopConfined();
  // The trusted judge's trial buffers go back first: the confined judge needs the device.
  (void)judge.Request(requests::Bare("release_slots"), milliseconds(60000));
  auto child = SpawnFromZygote(
      zygote, "spawn_judge", DeviceName(),
      opt.work_dir / ("problem-" + std::to_string(getpid()) + "-" + std::to_string(++spawned)));
  if (!child.ok()) return child.status();
  Confined c;
  c.problem = problem;
  c.proc = std::move(child.value());
  c.judge.what = "untrusted problem's judge";
  c.judge.service = "judge";
  c.judge.chan = std::move(c.proc.chan);
  c.judge.log_path = c.proc.workdir / "output.log";
  confined = std::move(c);
  auto fail = [&](const Status& s) -> Status {
    StopConfined();
    return s;
  };
  // hello refuses (ok: false) unless the sandbox was entered: see judge.main_confined.
  auto hello = ConfinedRequest(requests::Hello(DeviceName()), opt.start_timeout);
  if (!hello.ok()) return fail(hello.status());
  if (!native_msg.is_null()) {
    if (auto r = ConfinedRequest(native_msg, milliseconds(60000)); !r.ok()) {
      return fail(r.status());
    }
  }
  auto loaded = ConfinedRequest(untrusted.at(problem), milliseconds(300000));
  if (!loaded.ok()) return fail(loaded.status());
  return loaded;
}

Result<json> Lane::Impl::JudgeRequest(const std::string& problem, const json& msg,
                                      milliseconds timeout) {
  if (untrusted.count(problem) == 0) {
    StopConfined();
    return judge.Request(msg, timeout);
  }
  if (!confined || confined->problem != problem) {
    if (auto r = StartConfined(problem); !r.ok()) return r.status();
  }
  auto r = ConfinedRequest(msg, timeout);
  // Gone or hung: the problem's own code did it. The next request forks a fresh judge.
  if (!r.ok() && r.status().code() != Code::kInternal) StopConfined();
  return r;
}

}  // namespace kf::execute
