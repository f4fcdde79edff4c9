#include "cli/mcp_tools.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "backend/backend.h"
#include "common/files.h"
#include "mcp/progress.h"
#include "queue/job.h"

namespace kf::cli {
namespace fs = std::filesystem;
using mcp::ToolResult;
using nlohmann::json;

namespace {

std::string Fixed(double x, const char* format) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

// "extract 2 ms, legality 1 ms, build 35.1 s": the stages a verdict has been through so far.
std::string StageTimes(const Verdict& v) {
  std::string s;
  for (const auto& st : v.stages) {
    s += (s.empty() ? "" : ", ") + st.name + " " +
         (st.ms < 1000 ? Fixed(st.ms, "%.0f ms") : Fixed(st.ms / 1000, "%.1f s"));
    if (!st.ok) s += " (failed)";
  }
  return s;
}

// The candidate of a call: `candidate` (code or a model reply) or `candidate_file`.
Result<std::string> Candidate(const json& a) {
  if (a.contains("candidate") && a.contains("candidate_file")) {
    return Status::Invalid("pass the candidate as `candidate` or `candidate_file`, not both");
  }
  if (a.contains("candidate")) return a["candidate"].get<std::string>();
  if (a.contains("candidate_file")) {
    const std::string path = a["candidate_file"].get<std::string>();
    auto text = ReadFile(path);
    if (!text.ok()) {  // ReadFile leaves errno at the cause
      return Status::NotFound("cannot read candidate_file '" + path + "': " + std::strerror(errno));
    }
    return std::move(*text);
  }
  return Status::Invalid("pass the candidate as `candidate` (text) or `candidate_file` (a path)");
}

}  // namespace

std::string VerdictLine(const Verdict& v) {
  std::string s = std::string("status: ") + StatusName(v.status) + ", reward ";
  s += v.reward ? Fixed(*v.reward, "%.3f") : std::string("none (infra_error has no reward)");
  if (v.trials_total > 0) {
    s += ", " + std::to_string(v.trials_passed) + "/" + std::to_string(v.trials_total) +
         " correct trials";
  }
  if (v.speedup_vs_eager) s += ", " + Fixed(*v.speedup_vs_eager, "%.2fx") + " vs eager";
  return s;
}

McpTools::McpTools(const McpFlags& f, const problems::Registry& registry)
    : f_(f), registry_(registry), options_(ToEvalOptions(f.eval)) {}

Result<pipeline::Pipeline*> McpTools::Engine() {
  if (!engine_) {
    auto engine = MakeGenerationEngine(options_);
    if (!engine.ok()) {
      return Status::Unavailable("kforge could not start its judge: " +
                                 engine.status().message() + " (kforge doctor checks the set-up)");
    }
    engine_ = std::move(engine.value());
  }
  return engine_.get();
}

std::string McpTools::Backend() const { return options_.backend; }

Result<McpTools::Resolved> McpTools::Resolve(const json& a) {
  const std::string name = a.value("problem", std::string());
  const problems::Problem* p = registry_.Resolve(name);
  if (!p) {
    return Status::NotFound(
        "unknown problem '" + name + "': kforge mcp evaluates only the " +
        std::to_string(registry_.size()) +
        " problems registered from its --problems folders, named by id (e.g. level1/relu) or by "
        "their file's path; call list_problems for the ids");
  }
  auto file = queue::MaterializeProblem(options_.cache_dir, p->id, p->hash, p->text);
  if (!file.ok()) {
    return Status::IoError("cannot write problem " + p->id +
                           " to the cache: " + file.status().message());
  }
  return Resolved{p, *file};
}

ToolResult McpTools::ListProblems(const json& a) {
  const std::string prefix = a.value("prefix", std::string());
  json list = json::array();
  std::string text;
  for (const problems::Problem* p : registry_.List()) {
    if (p->id.rfind(prefix, 0) != 0) continue;
    list.push_back({{"id", p->id}, {"path", p->path.string()}});
    text += p->id + "\n";
  }
  if (text.empty()) {
    text = "no registered problem id starts with '" + prefix + "' (" +
           std::to_string(registry_.size()) + " problems are registered)\n";
  }
  return {text, {{"problems", list}}, false};
}

ToolResult McpTools::GetProblem(const json& a, const mcp::CallContext& ctx) {
  auto r = Resolve(a);
  if (!r.ok()) return ToolResult::Error(r.status().message());
  mcp::ProgressReporter progress(ctx, 1);
  progress.Reach(0, "load " + r->problem->id + " in the judge");
  auto ev = Engine();
  if (!ev.ok()) return ToolResult::Error(ev.status().message());
  auto facts = (*ev)->Describe(r->file);
  if (!facts.ok()) {
    return ToolResult::Error("the judge could not load problem " + r->problem->id + ": " +
                             facts.status().message());
  }
  const std::string& source = r->problem->text;
  std::string text = "Problem " + r->problem->id + ", backend " + Backend() + ", device " +
                     facts->device + "\n\n```python\n" + source + "```\n\n" +
                     agent::DescribeShapes(facts->info);
  return {text,
          {{"id", r->problem->id},
           {"path", r->problem->path.string()},
           {"source", source},
           {"backend", Backend()},
           {"device", facts->device},
           {"inputs", facts->info.inputs},
           {"outputs", facts->info.outputs},
           {"init_inputs", facts->info.init_inputs}},
          false};
}

ToolResult McpTools::EvaluateKernel(const json& a, const mcp::CallContext& ctx) {
  auto r = Resolve(a);
  if (!r.ok()) return ToolResult::Error(r.status().message());
  auto text = Candidate(a);
  if (!text.ok()) return ToolResult::Error(text.status().message());
  auto ev = Engine();
  if (!ev.ok()) return ToolResult::Error(ev.status().message());
  // Three steps: extract and static rules, build (both in Prepare), execute and score.
  mcp::ProgressReporter progress(ctx, 3);
  progress.Reach(0, "extract, static, build");
  std::atomic<bool> started{false};  // a build thread took it: not answered from the store
  Verdict v = (*ev)->Evaluate({r->file, *text}, [&](pipeline::JobStage s, const Verdict& so_far) {
    started = true;
    // Built: the CPU stages are done; a final verdict (format, rules, compile) never gets here.
    if (s == pipeline::JobStage::kBuilt) {
      progress.Reach(2, StageTimes(so_far) + "; execute on " + Backend());
    }
  });
  if (!started) progress.Reach(2, "the verdict was stored: evaluated before with these settings");
  // A verdict is a result whatever its status; only kforge failing is a tool error.
  return {VerdictLine(v) + "\n" + v.feedback, ToJson(v), v.status == VerdictStatus::kInfraError};
}

ToolResult McpTools::Generate(const json& a, const mcp::CallContext& ctx, bool optimize) {
  auto r = Resolve(a);
  if (!r.ok()) return ToolResult::Error(r.status().message());
  ModelSetup ms = f_.model;
  ms.url = a.value("model_url", ms.url);
  ms.model = a.value("model", ms.model);
  if (ms.url.empty() || ms.model.empty()) {
    return ToolResult::Error(
        "no model server configured: start kforge mcp with --model-url and --model, or pass "
        "model_url and model");
  }
  GenerationRequest req;
  req.problem = r->file;
  req.backend = Backend();
  req.prompt_format = backend::PromptFormat(options_.backend, options_.family);
  req.prompt_dir = ms.prompt_dir;
  req.out_dir = a.value("out", std::string());
  req.progress = &std::cerr;
  req.options.samples = a.value("samples", optimize ? 1 : f_.samples);
  req.options.turns = a.value("turns", f_.turns);
  req.options.sampling = MakeSampling(ms);
  const char* target_key = optimize ? "target_speedup" : "optimize_until";
  if (a.contains(target_key)) req.options.optimize_until = a[target_key].get<double>();
  if (optimize) {
    auto c = Candidate(a);
    if (!c.ok()) return ToolResult::Error(c.status().message());
    req.options.initial_candidate = *c;
  }
  auto client = MakeClient(ms, req.options.samples);
  if (!client.ok()) return ToolResult::Error(client.status().message());
  auto ev = Engine();
  if (!ev.ok()) return ToolResult::Error(ev.status().message());
  // One step per turn (turn 0 verifies optimize's given candidate); samples that pass stop
  // early, so the total is an upper bound.
  const int per_sample = req.options.turns + (optimize ? 1 : 0);
  mcp::ProgressReporter progress(ctx, req.options.samples * per_sample);
  int turns_done = 0;
  req.on_turn = [&](const agent::Turn& t) { progress.Reach(++turns_done, ProgressLine(t)); };
  progress.Reach(0, "describe " + r->problem->id + ", then ask " + ms.model);
  auto report = RunGeneration(**ev, **client, req);
  if (!report.ok()) return ToolResult::Error(report.status().message());
  const agent::GenerateResult& g = report->result;
  json trajectories = json::array();
  std::string text;
  for (const auto& t : g.trajectories) {
    trajectories.push_back(agent::TrajectoryJson(t));
    text += "sample " + std::to_string(t.sample) + ": rewards";
    for (double x : t.rewards) text += " " + Fixed(x, "%.3f");
    if (t.rewards.empty()) text += " none";
    text += " (" + t.stop_reason + ")\n";
  }
  json out = {{"trajectories", trajectories},
              {"trajectories_path", report->trajectories_path.string()},
              {"best", nullptr}};
  if (g.best) {
    out["best"] = {{"sample", g.best->sample},
                   {"turn", g.best->turn},
                   {"candidate", g.best->candidate},
                   {"verdict", ToJson(g.best->verdict)}};
    text = "Found a correct kernel (sample " + std::to_string(g.best->sample) + ", turn " +
           std::to_string(g.best->turn) + "): " + VerdictLine(g.best->verdict) + "\n" + text +
           "\n" + g.best->verdict.feedback + "\n\n```python\n" + g.best->candidate + "```\n";
  } else {
    text = "No correct kernel was found.\n" + text;
  }
  if (!g.model_error.ok()) {
    out["model_error"] = g.model_error.message();
    return {text + "The model server failed: " + g.model_error.message() + "\n", out, true};
  }
  // Finding no correct kernel is an answer, not a failure of the tool.
  return {text, out, false};
}

}  // namespace kf::cli
