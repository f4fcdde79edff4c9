// kforge generate: ask a model for kernels, verify each, feed the verdicts back, keep the best.
#include <unistd.h>

#include <iostream>
#include <memory>

#include "backend/backend.h"
#include "cli/commands.h"
#include "cli/generation.h"
#include "score/score.h"

namespace kf::cli {
namespace {

struct GenerateFlags {
  std::string problem;
  std::string out_dir;
  int samples = 4;
  int turns = 3;
  double optimize_until = 0;
  EvalFlags eval;
  ModelSetup model;
};

// 0: a correct kernel was found; 1: none was; 3: the model server or kforge itself failed.
constexpr int kExitNoKernel = 1;

int RunGenerate(const GenerateFlags& f) {
  const std::string me = "kforge generate: ";
  if (!std::filesystem::is_regular_file(f.problem)) {
    std::cerr << me << "cannot read problem " << f.problem << "\n";
    return kExitUsage;
  }
  auto client = MakeClient(f.model, f.samples);
  if (!client.ok()) {
    std::cerr << me << client.status().message() << "\n";
    return client.status().code() == Code::kInvalidArgument ? kExitUsage : kExitInfra;
  }
  eval::EvalOptions eo = ToEvalOptions(f.eval);
  auto engine = MakeGenerationEngine(eo);
  if (!engine.ok()) {
    std::cerr << me << engine.status().message() << "\n";
    return kExitInfra;
  }
  GenerationRequest req;
  req.problem = f.problem;
  req.out_dir = f.out_dir.empty()
                    ? std::filesystem::path("out") / std::filesystem::path(f.problem).stem()
                    : std::filesystem::path(f.out_dir);
  req.backend = eo.backend;
  req.prompt_format = backend::PromptFormat(eo.backend, eo.family);  // --family triton: Triton
  req.prompt_dir = f.model.prompt_dir;
  req.options.samples = f.samples;
  req.options.turns = f.turns;
  if (f.optimize_until > 0) {
    req.options.optimize_until = f.optimize_until;
  }
  req.options.sampling = MakeSampling(f.model);
  req.progress = &std::cout;
  std::cout << "generating for " << eval::ProblemId(f.problem) << " with " << f.model.model
            << " at " << f.model.url << ": " << f.samples << " samples, up to " << f.turns
            << " turns, backend " << eo.backend << std::endl;
  auto report = RunGeneration(**engine, **client, req);
  if (!report.ok()) {
    std::cerr << me << report.status().message() << "\n";
    return report.status().code() == Code::kNotFound ||
                   report.status().code() == Code::kInvalidArgument
               ? kExitUsage
               : kExitInfra;
  }
  const agent::GenerateResult& r = report->result;
  bool color = isatty(STDOUT_FILENO) && getenv("NO_COLOR") == nullptr;
  std::cout << "\n";
  if (r.best) {
    std::cout << "best: sample " << r.best->sample << " turn " << r.best->turn << "\n"
              << score::Render(r.best->verdict, color) << "saved " << report->best_path.string()
              << " (verdict: " << report->verdict_path.string() << ")\n";
  } else {
    std::cout << "no correct kernel in " << f.samples << " samples of up to " << f.turns
              << " turns\n";
  }
  std::cout << "trajectories: " << report->trajectories_path.string() << std::endl;
  if (!r.model_error.ok()) {
    std::cerr << me << "stopped: " << r.model_error.message() << "\n";
    return kExitInfra;
  }
  if (!r.best && report->infra_errors > 0) {
    std::cerr << me << report->infra_errors
              << " verification(s) failed inside kforge (infra_error); "
              << "see the verdicts in " << report->trajectories_path.string() << "\n";
    return kExitInfra;
  }
  return r.best ? kExitOk : kExitNoKernel;
}

}  // namespace

Command GenerateCommand() {
  return {
      "generate",
      "Ask a model for kernels, verify each, feed the verdicts back; keep the fastest correct one",
      [](CLI::App* app) -> std::function<int()> {
        auto f = std::make_shared<GenerateFlags>();
        app->add_option("--problem", f->problem, "KernelBench-format problem file")->required();
        app->add_option("--out", f->out_dir,
                        "folder for best.py, best.json and trajectories.jsonl (out/<problem>)");
        app->add_option("--samples", f->samples, "independent samples, run in parallel (4)")
            ->check(CLI::Range(1, 256));
        app->add_option("--turns", f->turns, "model calls per sample at most (3)")
            ->check(CLI::Range(1, 100));
        app->add_option("--optimize-until", f->optimize_until,
                        "keep improving correct kernels until this speedup over eager")
            ->check(CLI::PositiveNumber);
        AddModelFlags(app, &f->model);
        app->get_option("--model-url")->required();
        app->get_option("--model")->required();
        AddEvalFlags(app, &f->eval, Lanes::kOne);
        return [f] { return RunGenerate(*f); };
      }};
}

}  // namespace kf::cli
