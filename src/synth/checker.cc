// The Checker that runs references in the Python runner: `python3 -m kforge_runner.synth`, one
// process per batch, one JSON line per problem on its stdout.
#include <unistd.h>

#include <fstream>

#include "common/process.h"
#include "common/tolerance.h"
#include "synth/synth.h"

namespace kf::synth {
namespace {
using nlohmann::json;

class PythonChecker : public Checker {
 public:
  explicit PythonChecker(PythonCheckerOptions opt) : opt_(std::move(opt)) {}

  Result<std::vector<CheckResult>> Check(const std::vector<std::filesystem::path>& files) override {
    // The judge's default tolerances: a problem is kept only if an honest kernel meets them.
    std::vector<std::string> args = {"check", "--draws", std::to_string(opt_.draws)};
    for (auto& flag : ToleranceFlags(DefaultTolerances())) args.push_back(std::move(flag));
    auto lines = Run(std::move(args), files);
    if (!lines.ok()) return lines.status();
    std::vector<CheckResult> out;
    for (const auto& j : *lines) {
      CheckResult r;
      r.ok = j.value("ok", false);
      for (const auto& f : j.value("findings", json::array())) {
        r.findings.push_back(f.value("code", "?") + ": " + f.value("message", ""));
      }
      if (j.contains("reference_ms") && j["reference_ms"].is_number()) {
        r.reference_ms = j["reference_ms"].get<double>();
      }
      out.push_back(std::move(r));
    }
    return out;
  }

  Result<std::vector<std::vector<double>>> Time(const std::vector<std::filesystem::path>& files,
                                                double stop_ms) override {
    auto lines = Run({"time", "--stop-ms", std::to_string(stop_ms)}, files);
    if (!lines.ok()) return lines.status();
    std::vector<std::vector<double>> out;
    for (const auto& j : *lines) {
      std::vector<double> t;
      for (const auto& x : j.value("ms", json::array())) {
        if (x.is_number()) t.push_back(x.get<double>());
      }
      out.push_back(std::move(t));
    }
    return out;
  }

 private:
  // Runs the module on `files`; one parsed line per file, in order.
  Result<std::vector<json>> Run(std::vector<std::string> args,
                                const std::vector<std::filesystem::path>& files) {
    char out_path[] = "/tmp/kforge-synth-XXXXXX";
    int fd = mkstemp(out_path);
    if (fd < 0) return Status::IoError("cannot create a temporary file");
    close(fd);
    SpawnOptions so;
    so.argv = {opt_.python, "-m", "kforge_runner.synth", args[0], "--device", opt_.device};
    so.argv.insert(so.argv.end(), args.begin() + 1, args.end());
    for (const auto& f : files) so.argv.push_back(std::filesystem::absolute(f).string());
    so.env_set = {"PYTHONPATH=" + opt_.runner_dir.string(), "PYTHONDONTWRITEBYTECODE=1"};
    so.stdout_path = out_path;
    so.die_with_parent = true;  // waited for below, by this thread: a killed synth takes it along
    auto child = Spawn(so);
    if (!child.ok()) {
      unlink(out_path);
      return Status::Unavailable("cannot start " + opt_.python + ": " + child.status().message());
    }
    auto e = child->Wait(std::chrono::seconds(opt_.timeout_s));
    std::vector<json> lines;
    std::ifstream in(out_path);
    std::string line;
    while (std::getline(in, line)) {
      auto j = json::parse(line, nullptr, false);
      if (!j.is_discarded() && j.is_object()) lines.push_back(std::move(j));
    }
    unlink(out_path);
    if (!e) {
      child->Kill();
      return Status::Timeout("the reference runner took longer than " +
                             std::to_string(opt_.timeout_s) + " s");
    }
    if (!e->exited || e->exit_code != 0) {
      return Status::Unavailable("the reference runner failed (" + e->Describe() + ")");
    }
    if (lines.size() != files.size()) {
      return Status::Unavailable("the reference runner answered " + std::to_string(lines.size()) +
                                 " of " + std::to_string(files.size()) + " problems");
    }
    return lines;
  }

  PythonCheckerOptions opt_;
};

}  // namespace

std::unique_ptr<Checker> MakePythonChecker(const PythonCheckerOptions& opt) {
  return std::make_unique<PythonChecker>(opt);
}

}  // namespace kf::synth
