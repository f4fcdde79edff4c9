#include "execute/candidate_process.h"

#include <signal.h>

#include <cstring>

namespace kf::execute {
using Clock = std::chrono::steady_clock;
using nlohmann::json;
using std::chrono::milliseconds;

Status CandidateProcess::Spawn(const std::string& device, const std::filesystem::path& workdir,
                               const std::filesystem::path& jit_cache) {
  auto child = SpawnFromZygote(zygote_, "spawn", device, workdir, jit_cache);
  if (!child.ok()) return child.status();
  child_ = std::move(child.value());
  chan_ = std::move(child_.chan);
  return Status::Ok();
}

void CandidateProcess::Stop() {
  chan_.Close();
  StopZygoteChild(zygote_, &child_);
}

std::string CandidateProcess::Reap() {
  auto r =
      zygote_.Request({{"op", "reap"}, {"pid", child_.pid}, {"timeout_s", 5}}, milliseconds(10000));
  if (!r.ok()) return "it ended";
  if (r->value("running", false)) {
    ::kill(-child_.pid, SIGKILL);
    ::kill(child_.pid, SIGKILL);
    r = zygote_.Request({{"op", "reap"}, {"pid", child_.pid}, {"timeout_s", 5}},
                        milliseconds(10000));
    if (!r.ok()) return "it closed its channel";
  }
  child_.pid = -1;
  if (r->contains("signal")) {
    int sig = (*r)["signal"].get<int>();
    return "it was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "it exited with code " + std::to_string(r->value("exit_code", -1));
}

Result<json> CandidateProcess::Ask(const json& msg, milliseconds timeout) {
  if (auto s = chan_.Send(msg); !s.ok()) return Status::Unavailable(s.message());
  auto deadline = Clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return Status::Timeout("deadline");
    auto r = chan_.Receive(left);
    if (!r.ok()) return r.status();
    if (r->value("event", "") != "load_inline") return r;
    auto b0 = Clock::now();
    LoadInlineReply reply = load_inline_((*r)["args"]);
    deadline += Clock::now() - b0;
    if (!reply.ok) build_failed_ = true;
    json j = {{"ok", reply.ok},
              {"so_path", reply.so_path},
              {"module_name", reply.module_name},
              {"message", reply.message}};
    if (auto s = chan_.Send(j); !s.ok()) return Status::Unavailable(s.message());
  }
}

}  // namespace kf::execute
