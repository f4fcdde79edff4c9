// kforge eval: verify and time one candidate, print one verdict.

#include <future>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/eval_flags.h"
#include "common/files.h"
#include "eval/eval.h"
#include "pipeline/pipeline.h"

namespace kf::cli {
namespace {

struct EvalCommandFlags {
  std::string problem;
  std::vector<std::string> candidates;
  bool json = false;
  EvalFlags eval;
};

// A candidate's text: the file at `path`, or standard input for "-".
bool ReadAll(const std::string& path, std::string* out) {
  if (path == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    *out = ss.str();
    return true;
  }
  auto text = ReadFile(path);
  if (!text.ok()) return false;
  *out = std::move(*text);
  return true;
}

int RunEval(const EvalCommandFlags& f) {
  std::vector<std::string> texts;
  for (const auto& c : f.candidates) {
    std::string text;
    if (!ReadAll(c, &text)) {
      std::cerr << "kforge eval: cannot read candidate " << c << "\n";
      return kExitUsage;
    }
    texts.push_back(std::move(text));
  }
  if (!std::filesystem::is_regular_file(f.problem)) {
    std::cerr << "kforge eval: cannot read problem " << f.problem << "\n";
    return kExitUsage;
  }
  eval::EvalOptions opt = ToEvalOptions(f.eval);

  // Through the one engine: candidates are built in the order given while earlier ones run,
  // and share one lane (one judge, one zygote, the problem loaded once). `eval` always
  // evaluates: no stored verdict.
  auto engine = pipeline::MakePipeline(opt, pipeline::InOrder());
  if (!engine.ok()) {
    std::cerr << "kforge eval: " << engine.status().message() << "\n";
    return kExitInfra;
  }
  std::vector<std::future<Verdict>> verdicts;
  for (const auto& text : texts) {
    verdicts.push_back(std::async(std::launch::async, [&pl = **engine, &f, text] {
      return pl.Evaluate({f.problem, text});
    }));
  }
  int rc = kExitOk;
  bool color = isatty(STDOUT_FILENO) && getenv("NO_COLOR") == nullptr;
  for (size_t i = 0; i < texts.size(); ++i) {
    Verdict v = verdicts[i].get();
    if (f.json) {
      // One candidate: the verdict, indented. Several: one verdict per line (JSON Lines).
      std::cout << (texts.size() == 1 ? ToJson(v).dump(2) : ToJson(v).dump()) << std::endl;
    } else {
      if (texts.size() > 1) std::cout << "== " << f.candidates[i] << "\n";
      std::cout << score::Render(v, color) << std::flush;
    }
    if (v.status == VerdictStatus::kInfraError) {
      std::string why, fix;
      if (!v.diagnostics.empty()) {
        why = v.diagnostics.back().message;
        fix = v.diagnostics.back().hint;
      }
      std::cerr << "kforge eval: infrastructure failure: " << why
                << (fix.empty() ? "" : " (fix: " + fix + ")") << "\n";
      rc = kExitInfra;
    }
  }
  return rc;
}

}  // namespace

Command EvalCommand() {
  return {"eval", "Verify and time one candidate against one problem; print its verdict",
          [](CLI::App* app) -> std::function<int()> {
            auto f = std::make_shared<EvalCommandFlags>();
            app->add_option("--problem", f->problem, "KernelBench-format problem file")->required();
            app->add_option("--candidate", f->candidates,
                            "candidate file or model reply ('-' reads standard input); repeat "
                            "to evaluate several in one lane")
                ->required();
            app->add_flag("--json", f->json, "print only the verdict JSON");
            AddEvalFlags(app, &f->eval, Lanes::kOne);
            AddTrialSeedFlag(app, &f->eval);
            return [f] { return RunEval(*f); };
          }};
}

}  // namespace kf::cli
