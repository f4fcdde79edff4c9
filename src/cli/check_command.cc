// kforge check: the CPU-only stages of a verdict (extraction and the static rules) for any
// number of candidates, in milliseconds and without PyTorch or a GPU. For filtering model
// samples before they reach a GPU, and for seeing what the static stage makes of real code.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/eval_flags.h"
#include "common/files.h"
#include "eval/eval.h"

namespace kf::cli {
namespace {
using nlohmann::json;

struct CheckFlags {
  std::vector<std::string> candidates;
  std::string problem;  // "": rules that depend on the problem assume an fp32 problem
  bool json = false;
  bool specs = false;  // with --json: the statically resolved load_inline calls' arguments
  EvalFlags eval;
};

// What the static stage decides: format_error (no candidate), cheat (a rule broken), or pass
// (the build and the run decide the rest).
struct Checked {
  std::string outcome;
  std::string family;  // backend::FamilyName of what extract decided
  int triton_kernels = 0;
  std::vector<Diagnostic> diagnostics;
  int calls = 0, resolved = 0;  // load_inline call sites; resolved statically
  std::vector<ExtensionSpec> specs;  // the resolved calls' arguments, as the build stage gets them
};

Checked CheckOne(const std::string& text, const std::string& problem_text,
                 const eval::EvalOptions& opt) {
  Checked c;
  extract::Candidate cand = extract::Extract(text, opt.family);
  c.family = backend::FamilyName(cand.family);
  c.triton_kernels = static_cast<int>(cand.triton_kernels.size());
  c.diagnostics = cand.diagnostics;
  for (const auto& call : cand.inline_calls) {
    ++c.calls;
    c.resolved += call.resolved ? 1 : 0;
    if (call.resolved) c.specs.push_back(call.spec);
  }
  if (!cand.ok()) {
    c.outcome = "format_error";
    return c;
  }
  c.outcome = "pass";
  for (auto& d : eval::StaticFindings(cand, problem_text, opt)) {
    if (d.severity == Severity::kError) c.outcome = "cheat";
    c.diagnostics.push_back(std::move(d));
  }
  return c;
}

int RunCheck(const CheckFlags& f) {
  std::string problem_text;
  if (!f.problem.empty()) {
    auto read = ReadFile(f.problem);
    if (!read.ok()) {
      std::cerr << "kforge check: cannot read problem " << f.problem << "\n";
      return kExitUsage;
    }
    problem_text = std::move(*read);
  }
  eval::EvalOptions opt = ToEvalOptions(f.eval);
  int rc = kExitOk;
  for (const auto& path : f.candidates) {
    auto text = ReadFile(path);
    if (!text.ok()) {
      std::cerr << "kforge check: cannot read candidate " << path << "\n";
      return kExitUsage;
    }
    Checked c = CheckOne(*text, problem_text, opt);
    if (c.outcome != "pass") rc = kExitCheckFailed;
    if (f.json) {
      json ds = json::array();
      for (const auto& d : c.diagnostics) ds.push_back(ToJson(d));
      json out = {{"candidate", path},
                  {"outcome", c.outcome},
                  {"policy", execute::PolicyName(opt.exec.policy)},
                  {"family", c.family},
                  {"triton_kernels", c.triton_kernels},
                  {"load_inline_calls", c.calls},
                  {"resolved_statically", c.resolved},
                  {"diagnostics", ds}};
      if (f.specs) {
        out["specs"] = json::array();
        for (const auto& s : c.specs) out["specs"].push_back(CanonicalJson(s));
      }
      std::cout << out.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
      continue;
    }
    if (c.family == "triton") {
      std::cout << path << ": " << c.outcome << " (triton: " << c.triton_kernels
                << " @triton.jit kernel" << (c.triton_kernels == 1 ? "" : "s")
                << ", compiled in the candidate's process)\n";
    } else {
      std::cout << path << ": " << c.outcome << " (" << c.calls << " load_inline call"
                << (c.calls == 1 ? "" : "s") << ", " << c.calls - c.resolved
                << " built from the arguments captured at run time)\n";
    }
    for (const auto& d : c.diagnostics) {
      std::cout << "  " << (d.line > 0 ? "line " + std::to_string(d.line) + ": " : "")
                << SeverityName(d.severity) << " " << d.code << ": " << d.message << "\n";
      if (!d.excerpt.empty()) std::cout << "    | " << d.excerpt << "\n";
      if (!d.hint.empty()) std::cout << "    hint: " << d.hint << "\n";
    }
  }
  return rc;
}

}  // namespace

Command CheckCommand() {
  return {"check",
          "Run only the static stages (extraction, static rules) on candidates: no PyTorch, no "
          "GPU; exit 1 when one would end format_error or cheat",
          [](CLI::App* app) -> std::function<int()> {
            auto f = std::make_shared<CheckFlags>();
            app->add_option("candidates", f->candidates, "candidate files or model replies")
                ->required();
            app->add_option("--problem", f->problem,
                            "the problem they answer (decides whether half precision is a "
                            "downgrade; default: an fp32 problem)");
            app->add_flag("--json", f->json, "one JSON object per candidate (JSON Lines)");
            app->add_flag("--specs", f->specs,
                          "with --json: each statically resolved load_inline call's arguments, "
                          "as the build stage receives them (bench/build_cpu.py builds them)")
                ->needs("--json");
            AddRuleFlags(app, &f->eval);
            f->eval.python = "python3";  // never started: no interpreter to look for
            return [f] { return RunCheck(*f); };
          }};
}

}  // namespace kf::cli
