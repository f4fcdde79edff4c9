// kforge lint-problems: flags problems that a trivial answer passes (zeros, a constant, an
// input, a subsample) or whose output varies less than the tolerance, and prints each
// problem's input contract (the invariants the judge's perturbed trials keep). The checks run
// in the Python runner (they need PyTorch); this command runs it and reports.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

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
  bool contract_only = false;
  int draws = 3;
};

bool TrialsOutside(const nlohmann::json& j) {
  const auto t = j.value("trials", nlohmann::json::object());
  return !t.value("outside", nlohmann::json::array()).empty() || j.contains("trials_error");
}

// Whether the judge's perturbed trials kept the problem's inputs inside the contract: the
// trials checked, or each one whose inputs left it (none is kforge's promise).
void PrintTrials(const nlohmann::json& j) {
  if (j.contains("trials_error")) {
    std::cout << "      TRIALS NOT CHECKED: " << j.value("trials_error", "") << "\n";
    return;
  }
  if (!j.contains("trials")) return;
  const auto& t = j["trials"];
  const auto outside = t.value("outside", nlohmann::json::array());
  std::string checked;
  for (const auto& name : t.value("checked", nlohmann::json::array())) {
    checked += (checked.empty() ? "" : ", ") + name.get<std::string>();
  }
  if (outside.empty()) {
    std::cout << "      trials inside the contract: " << checked << "\n";
    return;
  }
  for (const auto& o : outside) {
    std::cout << "      OUTSIDE THE CONTRACT: " << o.value("trial", "?") << ", input "
              << o.value("input", 0) << " is no longer " << o.value("invariant", "?") << "\n";
  }
}

struct Counts {
  int problems = 0, flagged = 0, outside = 0;
};

// One problem's result line of the linter, printed (or passed on with --json) and counted.
void Report(const std::string& line, const LintFlags& f, Counts* n) {
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded()) return;
  ++n->problems;
  bool ok = j.value("ok", false);
  n->flagged += ok ? 0 : 1;
  n->outside += TrialsOutside(j) ? 1 : 0;
  if (f.json) {
    std::cout << j.dump() << std::endl;
    return;
  }
  std::cout << (ok ? "ok    " : "FLAG  ") << j.value("problem", "?") << "\n";
  for (const auto& finding : j.value("findings", nlohmann::json::array())) {
    std::cout << "      " << finding.value("code", "") << ": " << finding.value("message", "")
              << "\n";
  }
  // The input contract the judge's perturbed trials keep (information, flags nothing), and
  // how timed calls give each input fresh values inside it.
  const auto timed = j.value("timed_inputs", nlohmann::json::array());
  for (const auto& c : j.value("contract", nlohmann::json::array())) {
    const size_t i = c.value("input", 0);
    std::cout << "      input " << i << ": " << c.value("text", "");
    if (i < timed.size()) std::cout << "; timed calls: " << timed[i].get<std::string>();
    std::cout << "\n";
  }
  const std::string signed_trial = j.value("signed_trial", "");
  if (!signed_trial.empty() && signed_trial != "runs") {
    std::cout << "      signed trial " << signed_trial << "\n";
  }
  PrintTrials(j);
  std::cout.flush();
}

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
      std::cerr << "kforge lint-problems: no problem (a .py file defining class Model) under " << p
                << "\n";
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
  so.argv = {python,  "-m",      "kforge_runner.lint",   "--device",
             backend, "--draws", std::to_string(f.draws)};
  if (f.contract_only) so.argv.push_back("--contract-only");
  // The judge's default tolerances: a problem is linted against the check it will face.
  for (auto& flag : ToleranceFlags(DefaultTolerances())) so.argv.push_back(std::move(flag));
  for (const auto& p : files) so.argv.push_back(std::filesystem::absolute(p).string());
  so.env_set = {"PYTHONPATH=" + runner.string(), "PYTHONDONTWRITEBYTECODE=1"};
  so.stdout_path = out_path;
  // Spawned from this command's main thread: a lint killed outright (Ctrl-C, SIGTERM) takes
  // its linter along, which may be minutes into a large problem's draws.
  so.die_with_parent = true;
  auto child = Spawn(so);
  if (!child.ok()) {
    std::cerr << "kforge lint-problems: " << child.status().message() << "\n";
    unlink(out_path);
    return kExitInfra;
  }
  // Each problem is printed as the linter finishes it (one JSON line each); a linter that
  // finishes no problem for an hour is stopped.
  Counts n;
  std::ifstream in(out_path);
  std::string pending, line;
  auto read_lines = [&] {
    in.clear();
    while (std::getline(in, line)) {
      if (in.eof()) {  // a line still being written: keep it for the next read
        pending += line;
        break;
      }
      Report(pending + line, f, &n);
      pending.clear();
    }
  };
  std::optional<ExitInfo> e;
  auto last = std::chrono::steady_clock::now();
  bool stalled = false;
  while (!(e = child->Wait(std::chrono::milliseconds(200)))) {
    const int before = n.problems;
    read_lines();
    const auto now = std::chrono::steady_clock::now();
    if (n.problems != before) last = now;
    if (now - last > std::chrono::hours(1)) {
      e = child->Kill();
      stalled = true;
      break;
    }
  }
  read_lines();
  if (!pending.empty()) Report(pending, f, &n);
  std::cout.flush();
  if (stalled) {
    std::cerr << "kforge lint-problems: no problem finished within an hour; the linter was "
                 "stopped after "
              << n.problems << " of " << files.size() << " problems"
              << (static_cast<size_t>(n.problems) < files.size()
                      ? " (the next: " + files[n.problems].string() + ")"
                      : std::string())
              << "\n";
    unlink(out_path);
    return kExitInfra;
  }
  unlink(out_path);
  if (!e->exited || e->exit_code != 0) {
    std::cerr << "kforge lint-problems: the linter failed (" << e->Describe() << ")\n";
    return kExitInfra;
  }
  if (!f.json) {
    std::cout << n.problems << " problems, " << n.flagged << " flagged, " << n.outside
              << " with a trial outside its input contract\n";
  }
  // A trial outside the contract is kforge's error, not the problem's: it fails the command.
  return n.outside > 0 ? kExitCheckFailed : kExitOk;
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
            app->add_flag("--contract-only", f->contract_only,
                          "no reference run, no trivial answers: the input contract and whether "
                          "every perturbed trial keeps it (for large benchmarks)");
            return [f] { return RunLint(*f); };
          }};
}

}  // namespace kf::cli
