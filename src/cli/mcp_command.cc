// kforge mcp: the verifier and the generation loop as MCP tools for coding agents, on stdio.
// stdout carries only protocol messages; progress and logs go to stderr.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/generation.h"
#include "mcp/mcp.h"

namespace kf::cli {
namespace {
namespace fs = std::filesystem;
using mcp::ToolResult;
using nlohmann::json;

struct McpFlags {
  std::string problems_dir;  // what list_problems lists by default
  int samples = 4;
  int turns = 3;
  EvalFlags eval;
  ModelSetup model;
};

bool ReadText(const fs::path& p, std::string* out) {
  std::ifstream f(p, std::ios::binary);
  if (!f) {
    return false;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return true;
}

bool IsProblem(const fs::path& p) {
  std::string text;
  return p.extension() == ".py" && ReadText(p, &text) &&
         text.find("class Model(") != std::string::npos &&
         text.find("def get_inputs") != std::string::npos;
}

json StringProp(const std::string& description) {
  return {{"type", "string"}, {"description", description}};
}
json NumberProp(const std::string& type, const std::string& description) {
  return {{"type", type}, {"description", description}};
}
json Schema(json properties, std::vector<std::string> required) {
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", required}};
}

// The tools, with the state they share: one Evaluator for the session, started on first use.
class Tools {
 public:
  explicit Tools(const McpFlags& f) : f_(f) {}

  Result<SharedEvaluator*> Evaluator() {
    if (!ev_) {
      auto ev = eval::Evaluator::Create(ToEvalOptions(f_.eval));
      if (!ev.ok()) {
        return ev.status();
      }
      ev_ = std::make_unique<SharedEvaluator>(std::move(ev.value()));
    }
    return ev_.get();
  }
  std::string Backend() const {
    return f_.eval.backend.empty() ? eval::DefaultBackend() : f_.eval.backend;
  }

  ToolResult ListProblems(const json& a) {
    fs::path root = a.value("path", f_.problems_dir);
    std::error_code ec;
    json list = json::array();
    if (fs::is_regular_file(root, ec)) {
      if (IsProblem(root)) {
        list.push_back({{"id", eval::ProblemId(root)}, {"path", root.string()}});
      }
    } else if (fs::is_directory(root, ec)) {
      std::vector<fs::path> found;
      for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
           it.increment(ec)) {
        if (it->is_regular_file() && IsProblem(it->path())) {
          found.push_back(it->path());
        }
      }
      std::sort(found.begin(), found.end());
      for (const auto& p : found) {
        list.push_back({{"id", eval::ProblemId(p)}, {"path", p.string()}});
      }
    } else {
      return ToolResult::Error("no such file or folder: " + root.string());
    }
    std::string text;
    for (const auto& p : list) {
      text += p["path"].get<std::string>() + "\n";
    }
    if (text.empty()) {
      text = "no KernelBench-format problems under " + root.string() + "\n";
    }
    return {text, {{"problems", list}}, false};
  }

  ToolResult GetProblem(const json& a) {
    fs::path path = a.at("problem").get<std::string>();
    std::string source;
    if (!ReadText(path, &source)) {
      return ToolResult::Error("cannot read problem " + path.string());
    }
    auto ev = Evaluator();
    if (!ev.ok()) {
      return ToolResult::Error(ev.status().message());
    }
    auto facts = (*ev)->Describe(path);
    if (!facts.ok()) {
      return ToolResult::Error("the judge could not load the problem: " + facts.status().message());
    }
    std::string text = "Problem " + eval::ProblemId(path) + " (" + path.string() + "), backend " +
                       Backend() + ", device " + facts->device + "\n\n```python\n" + source +
                       "```\n\n" + agent::DescribeShapes(facts->info);
    return {text,
            {{"id", eval::ProblemId(path)},
             {"path", path.string()},
             {"source", source},
             {"backend", Backend()},
             {"device", facts->device},
             {"inputs", facts->info.inputs},
             {"outputs", facts->info.outputs},
             {"init_inputs", facts->info.init_inputs}},
            false};
  }

  // The candidate of a call: `candidate` (code or a model reply) or `candidate_file`.
  bool Candidate(const json& a, std::string* text, std::string* error) {
    if (a.contains("candidate")) {
      *text = a["candidate"].get<std::string>();
      return true;
    }
    if (a.contains("candidate_file")) {
      if (ReadText(a["candidate_file"].get<std::string>(), text)) {
        return true;
      }
      *error = "cannot read " + a["candidate_file"].get<std::string>();
      return false;
    }
    *error = "pass the candidate as `candidate` (text) or `candidate_file` (a path)";
    return false;
  }

  ToolResult EvaluateKernel(const json& a) {
    fs::path problem = a.at("problem").get<std::string>();
    if (!fs::is_regular_file(problem)) {
      return ToolResult::Error("cannot read problem " + problem.string());
    }
    std::string text, error;
    if (!Candidate(a, &text, &error)) {
      return ToolResult::Error(error);
    }
    auto ev = Evaluator();
    if (!ev.ok()) {
      return ToolResult::Error(ev.status().message());
    }
    Verdict v = (*ev)->Evaluate(problem, text);
    std::string summary = std::string("status: ") + StatusName(v.status) + "\n" + v.feedback;
    // A verdict is a result whatever its status; only kforge failing is a tool error.
    return {summary, ToJson(v), v.status == VerdictStatus::kInfraError};
  }

  ToolResult Generate(const json& a, bool optimize) {
    fs::path problem = a.at("problem").get<std::string>();
    if (!fs::is_regular_file(problem)) {
      return ToolResult::Error("cannot read problem " + problem.string());
    }
    ModelSetup ms = f_.model;
    ms.url = a.value("model_url", ms.url);
    ms.model = a.value("model", ms.model);
    GenerationRequest req;
    req.problem = problem;
    req.backend = Backend();
    req.prompt_dir = ms.prompt_dir;
    req.out_dir = a.value("out", std::string());
    req.progress = &std::cerr;
    req.options.samples = a.value("samples", optimize ? 1 : f_.samples);
    req.options.turns = a.value("turns", f_.turns);
    req.options.sampling = MakeSampling(ms);
    const char* target_key = optimize ? "target_speedup" : "optimize_until";
    if (a.contains(target_key)) {
      req.options.optimize_until = a[target_key].get<double>();
    }
    if (req.options.samples < 1 || req.options.samples > 64 || req.options.turns < 1 ||
        req.options.turns > 20) {
      return ToolResult::Error("samples must be 1..64 and turns 1..20");
    }
    if (optimize) {
      std::string error;
      if (!Candidate(a, &req.options.initial_candidate, &error)) {
        return ToolResult::Error(error);
      }
    }
    auto client = MakeClient(ms, req.options.samples);
    if (!client.ok()) {
      return ToolResult::Error(client.status().message());
    }
    auto ev = Evaluator();
    if (!ev.ok()) {
      return ToolResult::Error(ev.status().message());
    }
    auto report = RunGeneration(**ev, **client, req);
    if (!report.ok()) {
      return ToolResult::Error(report.status().message());
    }
    const agent::GenerateResult& r = report->result;
    json trajectories = json::array();
    for (const auto& t : r.trajectories) {
      trajectories.push_back(agent::TrajectoryJson(t));
    }
    json out = {{"trajectories", trajectories},
                {"trajectories_path", report->trajectories_path.string()},
                {"best", nullptr}};
    std::string text;
    if (r.best) {
      out["best"] = {{"sample", r.best->sample},
                     {"turn", r.best->turn},
                     {"candidate", r.best->candidate},
                     {"verdict", ToJson(r.best->verdict)}};
      text = "Found a correct kernel (sample " + std::to_string(r.best->sample) + ", turn " +
             std::to_string(r.best->turn) + ").\n" + r.best->verdict.feedback + "\n\n```python\n" +
             r.best->candidate + "```\n";
    } else {
      text = "No correct kernel was found.\n";
    }
    if (!r.model_error.ok()) {
      out["model_error"] = r.model_error.message();
      return {text + "The model server failed: " + r.model_error.message() + "\n", out, true};
    }
    return {text, out, !r.best};
  }

 private:
  const McpFlags& f_;
  std::unique_ptr<SharedEvaluator> ev_;
};

int RunMcp(const McpFlags& f) {
  Tools tools(f);
  mcp::Server server(mcp::ServerInfo{
      "kforge", "0.1.0",
      "kforge verifies and times PyTorch kernels (KernelBench format: a problem file with class "
      "Model, get_inputs, get_init_inputs; a candidate with class ModelNew and load_inline "
      "kernels). Use get_problem for the exact input shapes, evaluate_kernel for a verdict with "
      "feedback, generate_kernel/optimize_kernel to run the model loop."});
  const json problem = StringProp("path of a KernelBench-format problem file");
  const json candidate = StringProp(
      "the candidate program (Python with class ModelNew), or a "
      "model reply holding it in a fenced code block");
  const json candidate_file = StringProp("path of a candidate file (instead of `candidate`)");
  server.AddTool({"list_problems", "List the KernelBench-format problems in a folder.",
                  Schema({{"path", StringProp("a folder (searched recursively) or a file; default: "
                                              "the server's --problems folder")}},
                         {}),
                  [&](const json& a) { return tools.ListProblems(a); }});
  server.AddTool({"get_problem",
                  "A problem's source and the shapes, dtypes and strides of its inputs and outputs "
                  "as the judge measures them, with the target backend and device.",
                  Schema({{"problem", problem}}, {"problem"}),
                  [&](const json& a) { return tools.GetProblem(a); }});
  server.AddTool(
      {"evaluate_kernel",
       "Verify and time a candidate against a problem: correctness trials, legality "
       "rules, speedup over eager PyTorch, reward and feedback (the verdict JSON).",
       Schema({{"problem", problem}, {"candidate", candidate}, {"candidate_file", candidate_file}},
              {"problem"}),
       [&](const json& a) { return tools.EvaluateKernel(a); }});
  server.AddTool(
      {"generate_kernel",
       "Ask the model server for kernels for a problem, verify each, feed the verdicts "
       "back for several turns, and return the fastest correct kernel.",
       Schema({{"problem", problem},
               {"samples", NumberProp("integer", "independent samples (default: --samples)")},
               {"turns", NumberProp("integer", "turns per sample (default: --turns)")},
               {"optimize_until",
                NumberProp("number", "keep improving until this speedup over eager")},
               {"model", StringProp("model name (default: --model)")},
               {"model_url", StringProp("OpenAI-compatible base URL (default: --model-url)")},
               {"out", StringProp("folder for best.py, best.json, trajectories.jsonl")}},
              {"problem"}),
       [&](const json& a) { return tools.Generate(a, false); }});
  server.AddTool(
      {"optimize_kernel",
       "Start from a given candidate: verify it, then have the model repair or speed it "
       "up over several turns; returns the fastest correct version.",
       Schema({{"problem", problem},
               {"candidate", candidate},
               {"candidate_file", candidate_file},
               {"target_speedup",
                NumberProp("number", "stop once this speedup over eager is reached")},
               {"samples", NumberProp("integer", "independent samples (default 1)")},
               {"turns", NumberProp("integer", "model turns (default: --turns)")},
               {"model", StringProp("model name (default: --model)")},
               {"model_url", StringProp("OpenAI-compatible base URL (default: --model-url)")},
               {"out", StringProp("folder for best.py, best.json, trajectories.jsonl")}},
              {"problem"}),
       [&](const json& a) { return tools.Generate(a, true); }});
  server.Serve(std::cin, std::cout);
  return kExitOk;
}

}  // namespace

Command McpCommand() {
  return {"mcp", "Serve kforge's tools to coding agents over MCP (JSON-RPC on stdin/stdout)",
          [](CLI::App* app) -> std::function<int()> {
            auto f = std::make_shared<McpFlags>();
            f->problems_dir = "problems";
            app->add_option("--problems", f->problems_dir, "folder list_problems lists (problems)");
            app->add_option("--samples", f->samples, "default samples of generate_kernel (4)")
                ->check(CLI::Range(1, 64));
            app->add_option("--turns", f->turns, "default turns of generate/optimize_kernel (3)")
                ->check(CLI::Range(1, 20));
            AddModelFlags(app, &f->model);
            AddEvalFlags(app, &f->eval);
            return [f] { return RunMcp(*f); };
          }};
}

}  // namespace kf::cli
