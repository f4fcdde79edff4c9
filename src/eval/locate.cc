// Defaults that depend on the machine: paths, backend, interpreter.
#include <unistd.h>

#include <cstdlib>

#include "common/process.h"
#include "eval/eval.h"
#include "execute/policy.h"

#ifndef KFORGE_SOURCE_DIR
#define KFORGE_SOURCE_DIR ""
#endif

namespace kf::eval {
namespace fs = std::filesystem;

fs::path DefaultCacheDir() {
  if (const char* c = std::getenv("KFORGE_CACHE"); c && *c) return c;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "kforge";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : "/tmp") / ".cache" / "kforge";
}

fs::path FindRunnerDir() {
  if (const char* r = std::getenv("KFORGE_RUNNER_DIR"); r && *r) return r;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path dir = exe.parent_path(); !dir.empty() && dir != dir.root_path();
         dir = dir.parent_path()) {
      if (fs::exists(dir / "runner" / "kforge_runner" / "judge.py")) return dir / "runner";
    }
  }
  return fs::path(KFORGE_SOURCE_DIR) / "runner";
}

Status LoadPolicy(EvalOptions* opt) {
  if (!opt->exec.allowed_aten.empty()) return Status::Ok();
  auto ops = execute::ReadAllowlist(
      opt->allowlist.empty() ? execute::DefaultAllowlist(opt->runner_dir) : opt->allowlist);
  if (!ops.ok()) return ops.status();
  opt->exec.allowed_aten = std::move(ops.value());
  return Status::Ok();
}


namespace {

bool HasTorch(const std::string& python) {
  SpawnOptions so;
  so.argv = {python, "-c",
             "import importlib.util,sys; sys.exit(importlib.util.find_spec('torch') is None)"};
  so.stdout_path = "/dev/null";
  so.stderr_path = "/dev/null";
  auto child = Spawn(so);
  if (!child.ok()) return false;
  auto e = child->Wait(std::chrono::seconds(30));
  return e && e->exited && e->exit_code == 0;
}

}  // namespace

std::string DefaultPython() {
  if (const char* p = std::getenv("KFORGE_PYTHON"); p && *p) return p;
  for (const char* candidate : {"python3", "/usr/bin/python3"}) {
    if (!FindExecutable(candidate).empty() && HasTorch(candidate)) return candidate;
  }
  return "python3";
}

std::string ProblemId(const fs::path& p) {
  std::string parent = p.parent_path().filename().string();
  std::string stem = p.stem().string();
  if (parent.rfind("level", 0) == 0) return parent + "/" + stem;
  return stem;
}

}  // namespace kf::eval
