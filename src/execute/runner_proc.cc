#include "execute/runner_proc.h"

#include <fstream>

#include "common/protocol.h"
#include "sandbox/sandbox.h"

namespace kf::execute {

std::string ReadTail(const std::filesystem::path& p, size_t max_bytes) {
  std::ifstream f(p, std::ios::binary | std::ios::ate);
  if (!f) return "";
  std::streamoff size = f.tellg();
  std::streamoff start = size > static_cast<std::streamoff>(max_bytes) ? size - max_bytes : 0;
  f.seekg(start);
  std::string out(static_cast<size_t>(size - start), '\0');
  f.read(out.data(), static_cast<std::streamsize>(out.size()));
  if (start > 0) {
    size_t nl = out.find('\n');
    if (nl != std::string::npos) out = out.substr(nl + 1);
  }
  return out;
}

std::string RunnerProc::LogTail(size_t max_bytes) const { return ReadTail(log_path, max_bytes); }

int RemoveSharedBuffers(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  if (dir.empty() || !dir.is_absolute()) return 0;
  const fs::path parent = dir.parent_path();
  std::error_code ec;
  const fs::path tmp = fs::temp_directory_path(ec);
  const bool in_scratch = parent == "/dev/shm" || (!ec && parent == tmp);
  if (!in_scratch || dir.filename().string().rfind("kforge-judge-", 0) != 0) return 0;
  if (!fs::is_directory(fs::symlink_status(dir, ec))) return 0;
  int removed = 0;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("buf", 0) == 0 && fs::is_regular_file(e.symlink_status(ec)) &&
        fs::remove(e.path(), ec)) {
      ++removed;
    }
  }
  fs::remove(dir, ec);  // only when nothing else is in it
  return removed;
}

Result<nlohmann::json> RunnerProc::Request(const nlohmann::json& msg,
                                           std::chrono::milliseconds timeout,
                                           const EventFn& on_event) {
  using Clock = std::chrono::steady_clock;
  const protocol::Schema& schema = protocol::Embedded();
  if (auto s = schema.CheckRequest(service, msg); !s.ok()) {
    return Status::Internal("kforge broke the protocol: " + s.message());
  }
  if (auto s = chan.Send(msg); !s.ok()) {
    return Status::Unavailable("the " + what + " process is gone: " + s.message() + "\n" +
                               LogTail());
  }
  auto deadline = Clock::now() + timeout;
  Result<nlohmann::json> r = Status::Internal("no reply");
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    r = chan.Receive(std::max(left, std::chrono::milliseconds(1)));
    if (!r.ok()) {
      if (r.status().code() == Code::kTimeout) {
        return Status::Timeout("the " + what + " did not answer '" + msg.value("op", "?") +
                               "' within " + std::to_string(timeout.count() / 1000) + " s");
      }
      return Status::Unavailable("the " + what + " process is gone: " + r.status().message() +
                                 "\n" + LogTail());
    }
    if (!on_event || !r->is_object() || !r->contains("event")) break;
    if (auto s = schema.CheckEvent(service, *r); !s.ok()) {
      return Status::Internal("the " + what + " broke the protocol: " + s.message());
    }
    const std::string event = (*r)["event"].get<std::string>();
    auto t0 = Clock::now();
    Result<nlohmann::json> answer = on_event(*r);
    deadline += Clock::now() - t0;
    nlohmann::json out = answer.ok() ? *answer : nlohmann::json::object();
    out["ok"] = answer.ok();
    if (!answer.ok()) out["message"] = answer.status().message();
    if (auto s = schema.CheckEventReply(service, event, out); !s.ok()) {
      return Status::Internal("kforge broke the protocol: " + s.message());
    }
    if (auto s = chan.Send(out); !s.ok()) {
      return Status::Unavailable("the " + what + " process is gone: " + s.message() + "\n" +
                                 LogTail());
    }
  }
  if (auto s = schema.CheckReplyTo(service, msg, *r); !s.ok()) {
    return Status::Internal("the " + what + " broke the protocol: " + s.message());
  }
  if (!r->value("ok", false)) {
    std::string m = r->value("message", "failed");
    if (r->contains("traceback")) m += "\n" + (*r)["traceback"].get<std::string>();
    return Status::Internal(what + " failed '" + msg.value("op", "?") + "': " + m);
  }
  return r;
}

Result<RunnerProc> StartRunner(const std::string& what, const std::string& python,
                               const std::filesystem::path& runner_dir, const std::string& module,
                               const std::filesystem::path& log_path) {
  UniqueFd mine, theirs;
  if (auto s = SocketPair(&mine, &theirs); !s.ok()) return s;
  SpawnOptions so;
  so.argv = {python, "-X", "faulthandler", "-m", "kforge_runner." + module, "--fd", "3"};
  so.fds = {{3, theirs.get()}};
  so.env_set = {"PYTHONPATH=" + runner_dir.string(), "PYTHONDONTWRITEBYTECODE=1",
                "PYTHONUNBUFFERED=1"};
  // Candidate hosts confine themselves with it; empty: they run unconfined and say so.
  so.env_set.push_back("KFORGE_SANDBOX_LIB=" + SandboxLibraryPath());
#ifndef NDEBUG
  // Debug builds have the runner check its own replies too (kforge checks them in any build).
  so.env_set.push_back("KFORGE_PROTOCOL_CHECK=1");
#endif
  so.stdout_path = log_path.string();
  so.stderr_path = log_path.string();
  auto child = Spawn(so);
  if (!child.ok()) return child.status();
  RunnerProc p;
  p.what = what;
  p.service = module;
  p.child = std::move(child.value());
  p.chan = Channel(std::move(mine));
  p.log_path = log_path;
  return p;
}

}  // namespace kf::execute
