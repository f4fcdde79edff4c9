// kforge lint-problems: flags problems that a trivial answer passes (zeros, a constant, an
// input, a subsample) or whose output varies less than the tolerance, and prints each
// problem's input contract (the invariants the judge's perturbed trials keep). The checks run
// in the Python runner (they need PyTorch); this command runs it and reports.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include "backend/backend.h"
#include "cli/commands.h"
#include "common/process.h"
#include "common/tolerance.h"
#include "eval/eval.h"
#include "problems/registry.h"

namespace kf::cli {
namespace {

struct LintFlags {
  std::vector<std::string> paths;
  std::string python;
  std::string backend;
  bool json = false;
  int draws = 3;
};

int RunLint(const LintFlags& f) {
  // A folder's problems are its *.py files that define Model (problems::ProblemFiles); a file
  // is linted as given.
  std::vector<std::filesystem::path> files;
  for (const auto& p : f.paths) {
    std::error_code ec;
    if (!std::filesystem::exists(p, ec)) {
      std::cerr << "kforge lint-problems: no such file or folder: " << p << "\n";
      return kExitUsage;
    }
    if (!std::filesystem::is_directory(p, ec)) {
      files.push_back(p);
      continue;
    }
    auto found = problems::ProblemFiles(p);
    if (!found.ok()) {
      std::cerr << "kforge lint-problems: " << found.status().message() << "\n";
      return kExitUsage;
    }
    if (found->empty()) {
      std::cerr << "kforge lint-problems: no problem (a .py file defining class Model) under "
                << p << "\n";
      return kExitUsage;
    }
    for (const auto& problem : *found) files.push_back(problem.path);
  }
  std::string python = f.python.empty() ? eval::DefaultPython() : f.python;
  std::string backend = f.backend.empty() ? backend::DefaultBackend() : f.backend;
  auto runner = eval::FindRunnerDir();
  char out_path[] = "/tmp/kforge-lint-XXXXXX";
  int fd = mkstemp(out_path);
  if (fd < 0) {
    std::cerr << "kforge lint-problems: cannot create a temporary file\n";
    return kExitInfra;
  }
  close(fd);
  SpawnOptions so;
  so.argv = {python, "-m", "kforge_runner.lint", "--device", backend, "--draws",
             std::to_string(f.draws)};
  // The judge's default tolerances: a problem is linted against the check it will face.
  for (auto& flag : ToleranceFlags(DefaultTolerances())) so.argv.push_back(std::move(flag));
  for (const auto& p : files) so.argv.push_back(std::filesystem::absolute(p).string());
  so.env_set = {"PYTHONPATH=" + runner.string(), "PYTHONDONTWRITEBYTECODE=1"};
  so.stdout_path = out_path;
  auto child = Spawn(so);
  if (!child.ok()) {
    std::cerr << "kforge lint-problems: " << child.status().message() << "\n";
    unlink(out_path);
    return kExitInfra;
  }
  auto e = child->Wait(std::chrono::hours(1));
  std::ifstream in(out_path);
  std::string line;
  int problems = 0, flagged = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;
    ++problems;
    bool ok = j.value("ok", false);
    flagged += ok ? 0 : 1;
    if (f.json) {
      std::cout << j.dump() << "\n";
      continue;
    }
    std::cout << (ok ? "ok    " : "FLAG  ") << j.value("problem", "?") << "\n";
    for (const auto& finding : j.value("findings", nlohmann::json::array())) {
      std::cout << "      " << finding.value("code", "") << ": " << finding.value("message", "")
                << "\n";
    }
    // The input contract the judge's perturbed trials keep (information, flags nothing).
    for (const auto& c : j.value("contract", nlohmann::json::array())) {
      std::cout << "      input " << c.value("input", 0) << ": " << c.value("text", "") << "\n";
    }
    const std::string signed_trial = j.value("signed_trial", "");
    if (!signed_trial.empty() && signed_trial != "runs") {
      std::cout << "      signed trial " << signed_trial << "\n";
    }
  }
  unlink(out_path);
  if (!e || !e->exited || e->exit_code != 0) {
    std::cerr << "kforge lint-problems: the linter failed ("
              << (e ? e->Describe() : std::string("timed out")) << ")\n";
    return kExitInfra;
  }
  if (!f.json) {
    std::cout << problems << " problems, " << flagged << " flagged\n";
  }
  return kExitOk;
}

}  // namespace

Command LintCommand() {
  return {"lint-problems",
          "Flag problems that a trivial answer passes or whose output barely varies",
          [](CLI::App* app) -> std::function<int()> {
            auto f = std::make_shared<LintFlags>();
            app->add_option("paths", f->paths, "problem files or folders")->required();
            app->add_option("--python", f->python, "Python interpreter with PyTorch");
            app->add_option("--backend", f->backend, "cuda or cpu")
                ->check(CLI::IsMember({"cuda", "cpu"}));
            app->add_option("--draws", f->draws, "seeded input draws per problem")
                ->check(CLI::Range(1, 20));
            app->add_flag("--json", f->json, "one JSON line per problem");
            return [f] { return RunLint(*f); };
          }};
}

}  // namespace kf::cli
