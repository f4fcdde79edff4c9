#include "execute/candidate_process.h"

#include <signal.h>

#include <cstring>

#include "common/protocol.h"
#include "execute/requests.h"

namespace kf::execute {
using Clock = std::chrono::steady_clock;
using nlohmann::json;
using std::chrono::milliseconds;

Status CandidateProcess::Spawn(const std::string& device, const std::filesystem::path& workdir,
                               const std::filesystem::path& jit_cache) {
  auto child = SpawnFromZygote(zygote_, "spawn", device, workdir, jit_cache);
  if (!child.ok()) return child.status();
  Adopt(std::move(child.value()));
  return Status::Ok();
}

void CandidateProcess::Adopt(ZygoteChild child) {
  Stop();
  child_ = std::move(child);
  chan_ = std::move(child_.chan);
}

void CandidateProcess::Stop() {
  chan_.Close();
  StopZygoteChild(zygote_, &child_);
}

std::string CandidateProcess::Reap() {
  auto r = zygote_.Request(requests::Reap(child_.pid, 5), milliseconds(10000));
  if (!r.ok()) return "it ended";
  if (r->value("running", false)) {
    ::kill(-child_.pid, SIGKILL);
    ::kill(child_.pid, SIGKILL);
    r = zygote_.Request(requests::Reap(child_.pid, 5), milliseconds(10000));
    if (!r.ok()) return "it closed its channel";
  }
  child_.pid = -1;
  if (r->contains("signal")) {
    int sig = (*r)["signal"].get<int>();
    return "it was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "it exited with code " + std::to_string(r->value("exit_code", -1));
}

namespace {

// What kforge makes of a message from the candidate host that breaks the protocol: the host
// runs the candidate's code, which may have written it, so it is the candidate's failure (a
// runtime error naming the message and the field), never the machine's.
json Broken(const Status& why) {
  return {{"ok", false}, {"kind", "protocol"},
          {"message", "its process broke the protocol: " + why.message()}};
}

}  // namespace

Result<json> CandidateProcess::Ask(const json& msg, milliseconds timeout) {
  const protocol::Schema& schema = protocol::Embedded();
  if (auto s = schema.CheckRequest("candidate", msg); !s.ok()) {
    return Status::Invalid("kforge broke the protocol: " + s.message());
  }
  if (auto s = chan_.Send(msg); !s.ok()) return Status::Unavailable(s.message());
  auto deadline = Clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return Status::Timeout("deadline");
    auto r = chan_.Receive(left);
    if (!r.ok()) return r.status();
    if (!r->is_object() || !r->contains("event")) {
      if (auto s = schema.CheckReplyTo("candidate", msg, *r); !s.ok()) return Broken(s);
      return r;
    }
    if (auto s = schema.CheckEvent("candidate", *r); !s.ok()) return Broken(s);
    auto b0 = Clock::now();
    LoadInlineReply reply = load_inline_((*r)["args"]);
    deadline += Clock::now() - b0;
    if (!reply.ok) build_failed_ = true;
    const json j =
        requests::LoadInlineAnswer(reply.ok, reply.so_path, reply.module_name, reply.message);
    if (auto s = schema.CheckEventReply("candidate", "load_inline", j); !s.ok()) {
      return Status::Invalid("kforge broke the protocol: " + s.message());
    }
    if (auto s = chan_.Send(j); !s.ok()) return Status::Unavailable(s.message());
  }
}

}  // namespace kf::execute
