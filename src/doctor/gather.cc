// GatherFacts: the only part of doctor that acts. It runs runner/kforge_runner/doctor.py with
// the interpreter kforge would use and asks the kernel and PATH the rest.
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "backend/backend.h"
#include "build/environment.h"
#include "common/files.h"
#include "common/process.h"
#include "doctor/doctor.h"
#include "eval/eval.h"
#include "sandbox/sandbox.h"

namespace kf::doctor {
namespace fs = std::filesystem;
namespace {

// The runner has to import torch: minutes on a loaded machine are not a fault.
constexpr auto kRunnerTimeout = std::chrono::minutes(3);

// A temporary file removed when the object goes.
class TempFile {
 public:
  TempFile() {
    char path[] = "/tmp/kforge-doctor-XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) {
      close(fd);
      path_ = path;
    }
  }
  ~TempFile() {
    if (!path_.empty()) unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }
  // The file's text; "" if it cannot be read.
  std::string Read() const {
    auto text = ReadFile(path_);
    return text.ok() ? *text : std::string();
  }

 private:
  std::string path_;
};

// The last line of `text` that is a JSON object (torch may print before it); null if none.
nlohmann::json LastObject(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  nlohmann::json found;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.is_object()) found = std::move(j);
  }
  return found;
}

std::string Tail(std::string text, size_t bytes) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text.size() > bytes ? "..." + text.substr(text.size() - bytes) : text;
}

void RunRunner(const GatherOptions& opt, Facts* f) {
  std::string exe = FindExecutable(opt.python);
  if (exe.empty() || access(exe.c_str(), X_OK) != 0) {
    f->runner_error = "no such interpreter (not on PATH, or not executable)";
    return;
  }
  TempFile out, err;
  if (out.path().empty() || err.path().empty()) {
    f->runner_error = "cannot create a temporary file in /tmp";
    return;
  }
  nlohmann::json request = {{"backend", opt.backend},
                            {"probe", build::ToolchainProbe(opt.backend)}};
  SpawnOptions so;
  so.argv = {exe, "-m", "kforge_runner.doctor", request.dump()};
  so.env_set = {"PYTHONPATH=" + opt.runner_dir.string(), "PYTHONDONTWRITEBYTECODE=1"};
  so.stdout_path = out.path();
  so.stderr_path = err.path();
  auto child = Spawn(so);
  if (!child.ok()) {
    f->runner_error = child.status().message();
    return;
  }
  auto e = child->Wait(kRunnerTimeout);
  if (!e) {
    child->Kill();
    f->runner_error = "did not answer within 3 minutes";
    return;
  }
  f->runner = LastObject(out.Read());
  if (f->runner.is_null()) {
    f->runner_error = "kforge_runner.doctor failed (" + e->Describe() + "): " + Tail(err.Read(), 600);
  }
}

nlohmann::json SandboxProbe() {
  char buf[4096];
  if (kforge_sandbox_probe(buf, sizeof(buf)) != 0) return nullptr;
  auto j = nlohmann::json::parse(buf, nullptr, false);
  return j.is_discarded() ? nlohmann::json() : j;
}

}  // namespace

Facts GatherFacts(const GatherOptions& opt) {
  Facts f;
  f.backend = opt.backend;
  f.python = opt.python;
  f.runner_dir = opt.runner_dir.string();
  f.runner_found = fs::exists(opt.runner_dir / "kforge_runner" / "doctor.py");
  if (f.runner_found) RunRunner(opt, &f);
  f.gpu_nodes = backend::GpuNodes();
  f.sandbox = SandboxProbe();
  f.sandbox_library = SandboxLibraryPath();
  f.redis_server = FindExecutable("redis-server");
  return f;
}

}  // namespace kf::doctor
