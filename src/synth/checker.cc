// The Checker that runs references in the Python runner: `python3 -m kforge_runner.synth`, one
// process per batch, one JSON line per problem on its stdout.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <optional>

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
    auto lines = Run(args, files);
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
  using Clock = std::chrono::steady_clock;

  // Runs the module on `files`; one parsed line per file, in order. A problem the runner does
  // not answer in time gets a check_timeout line of its own (no findings' worth of work is
  // lost for the others) and the runner starts again on the problems after it.
  Result<std::vector<json>> Run(const std::vector<std::string>& args,
                                const std::vector<std::filesystem::path>& files) {
    const auto deadline = Clock::now() + std::chrono::seconds(opt_.timeout_s);
    std::vector<json> lines;
    while (lines.size() < files.size()) {
      std::vector<std::filesystem::path> rest(files.begin() + lines.size(), files.end());
      bool stuck = false;
      auto part = RunOnce(args, rest, deadline, &stuck);
      if (!part.ok()) return part.status();
      for (auto& j : *part) lines.push_back(std::move(j));
      if (!stuck) break;
      const std::string message =
          "the reference runner had not finished this problem after " +
          std::to_string(part->empty() ? opt_.start_allowance_s + opt_.problem_timeout_s
                                       : opt_.problem_timeout_s) +
          " s (a reference that slow, or one that hangs, is no problem to train on)";
      json finding = {{"code", "check_timeout"}, {"message", message}};
      json line = {{"problem", std::filesystem::absolute(files[lines.size()]).string()},
                   {"ok", false},
                   {"findings", json::array({finding})},
                   {"ms", json::array()}};
      lines.push_back(std::move(line));
    }
    if (lines.size() != files.size()) {
      return Status::Unavailable("the reference runner answered " + std::to_string(lines.size()) +
                                 " of " + std::to_string(files.size()) + " problems");
    }
    return lines;
  }

  // One runner start on `files`: the lines it wrote. *stuck: it was killed because the next
  // problem took longer than allowed (the lines are those before it).
  Result<std::vector<json>> RunOnce(const std::vector<std::string>& args,
                                    const std::vector<std::filesystem::path>& files,
                                    Clock::time_point deadline, bool* stuck) {
    char out_path[] = "/tmp/kforge-synth-XXXXXX";
    int fd = mkstemp(out_path);
    if (fd < 0) return Status::IoError("cannot create a temporary file");
    close(fd);
    SpawnOptions so;
    so.argv = {opt_.python, "-m", "kforge_runner.synth", args[0], "--device", opt_.device};
    so.argv.insert(so.argv.end(), args.begin() + 1, args.end());
    // A problem near its time limit prints where it is to stderr (the synth log) first.
    so.argv.push_back("--dump-after-s");
    so.argv.push_back(std::to_string(std::max(1, opt_.problem_timeout_s * 3 / 4)));
    for (const auto& f : files) so.argv.push_back(std::filesystem::absolute(f).string());
    so.env_set = {"PYTHONPATH=" + opt_.runner_dir.string(), "PYTHONDONTWRITEBYTECODE=1"};
    so.stdout_path = out_path;
    so.die_with_parent = true;  // waited for below, by this thread: a killed synth takes it along
    auto child = Spawn(so);
    if (!child.ok()) {
      unlink(out_path);
      return Status::Unavailable("cannot start " + opt_.python + ": " + child.status().message());
    }
    // Answered problems, counted as whole lines of the output so far.
    auto answered = [&] {
      std::ifstream in(out_path, std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      return std::count(text.begin(), text.end(), '\n');
    };
    std::optional<ExitInfo> e;
    bool timed_out = false;
    long seen = 0;
    auto last = Clock::now();
    auto allowance = std::chrono::seconds(opt_.start_allowance_s + opt_.problem_timeout_s);
    while (!(e = child->Wait(std::chrono::milliseconds(250)))) {
      auto now = Clock::now();
      if (long n = answered(); n > seen) {
        seen = n;
        last = now;
        allowance = std::chrono::seconds(opt_.problem_timeout_s);
      }
      if (now >= deadline) {
        timed_out = true;
        break;
      }
      if (now - last > allowance) {
        *stuck = true;
        break;
      }
    }
    if (!e) child->Kill();
    std::vector<json> lines;
    std::ifstream in(out_path);
    std::string line;
    while (std::getline(in, line)) {
      auto j = json::parse(line, nullptr, false);
      if (!j.is_discarded() && j.is_object()) lines.push_back(std::move(j));
    }
    unlink(out_path);
    if (timed_out) {
      return Status::Timeout("the reference runner took longer than " +
                             std::to_string(opt_.timeout_s) + " s");
    }
    if (*stuck) {
      // Killed on the problem after the last whole line; a line it was writing is dropped.
      if (lines.size() > static_cast<size_t>(seen)) lines.resize(seen);
      if (lines.size() != static_cast<size_t>(seen)) {
        return Status::Unavailable("the reference runner wrote a line that is not JSON");
      }
      return lines;
    }
    if (!e->exited || e->exit_code != 0) {
      return Status::Unavailable("the reference runner failed (" + e->Describe() + ")");
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
