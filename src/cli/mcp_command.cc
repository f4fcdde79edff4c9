// kforge mcp: the verifier and the generation loop as MCP tools for coding agents, on stdio.
// stdout carries only protocol messages; progress and logs go to stderr. The tools themselves
// are in mcp_tools.cc; here are their schemas and the command's flags.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/mcp_tools.h"
#include "mcp/mcp.h"

namespace kf::cli {
namespace {
using mcp::CallContext;
using nlohmann::json;

json StringProp(const std::string& description) {
  return {{"type", "string"}, {"description", description}};
}
json IntProp(const std::string& description, int min, int max) {
  return {{"type", "integer"}, {"description", description}, {"minimum", min}, {"maximum", max}};
}
json NumberProp(const std::string& description) {
  return {{"type", "number"}, {"description", description}, {"minimum", 0}};
}
json Schema(json properties, std::vector<std::string> required) {
  return {{"type", "object"},
          {"properties", std::move(properties)},
          {"required", required},
          {"additionalProperties", false}};
}

// The structuredContent of each tool (outputSchema, listed from protocol 2025-06-18 on).
json VerdictSchema() {
  return {{"type", "object"},
          {"description",
           "the verdict JSON (docs/VERDICT.md): status, reward, trials, "
           "timings, speedups, diagnostics, feedback"},
          {"properties",
           {{"status", {{"type", "string"}}},
            {"reward", {{"type", {"number", "null"}}, {"description", "null for infra_error"}}},
            {"correct_trials", {{"type", "object"}}},
            {"speedup", {{"type", "object"}}},
            {"timing", {{"type", "object"}}},
            {"diagnostics", {{"type", "array"}}},
            {"feedback", {{"type", "string"}}}}},
          {"required", {"status", "reward", "feedback"}}};
}
json ProblemListSchema() {
  json item = {{"type", "object"},
               {"properties", {{"id", {{"type", "string"}}}, {"path", {{"type", "string"}}}}},
               {"required", {"id"}}};
  return {{"type", "object"},
          {"properties", {{"problems", {{"type", "array"}, {"items", item}}}}},
          {"required", {"problems"}}};
}
json ProblemSchema() {
  json props = {{"id", {{"type", "string"}}},     {"path", {{"type", "string"}}},
                {"source", {{"type", "string"}}}, {"backend", {{"type", "string"}}},
                {"device", {{"type", "string"}}}, {"inputs", {{"type", "array"}}},
                {"outputs", {{"type", "array"}}}, {"init_inputs", {{"type", "array"}}}};
  return {{"type", "object"},
          {"properties", props},
          {"required", {"id", "source", "inputs", "outputs"}}};
}
json GenerationSchema() {
  json best = {{"type", {"object", "null"}},
               {"properties",
                {{"sample", {{"type", "integer"}}},
                 {"turn", {{"type", "integer"}}},
                 {"candidate", {{"type", "string"}}},
                 {"verdict", VerdictSchema()}}}};
  return {{"type", "object"},
          {"properties",
           {{"best", best},
            {"trajectories", {{"type", "array"}}},
            {"trajectories_path", {{"type", "string"}}},
            {"model_error", {{"type", "string"}}}}},
          {"required", {"best", "trajectories"}}};
}

int RunMcp(const McpFlags& f) {
  problems::Registry registry;
  for (const auto& dir : f.problems) {
    if (auto s = registry.AddFolder(dir); !s.ok()) {
      std::cerr << "kforge mcp: " << s.message()
                << " (kforge mcp serves the problems of its --problems folders)\n";
      return kExitUsage;
    }
  }
  std::cerr << "kforge mcp: " << registry.size() << " problems registered" << std::endl;
  McpTools tools(f, registry);
  mcp::Server server(mcp::ServerInfo{
      "kforge", "0.1.0",
      "kforge verifies and times PyTorch kernels (KernelBench format: a problem file with class "
      "Model, get_inputs, get_init_inputs; a candidate with class ModelNew and load_inline "
      "kernels). Problems are named by their registered id: list_problems lists them. Use "
      "get_problem for the exact input shapes, evaluate_kernel for a verdict with reward and "
      "feedback, generate_kernel/optimize_kernel to run the model loop."});
  const json problem = StringProp(
      "a registered problem's id, e.g. level1/relu (list_problems lists them), or the path of "
      "its file");
  const json candidate = StringProp(
      "the candidate program (Python with class ModelNew), or a "
      "model reply holding it in a fenced code block");
  const json candidate_file = StringProp("path of a candidate file (instead of `candidate`)");
  const json model = StringProp("model name (default: --model)");
  const json model_url = StringProp("OpenAI-compatible base URL (default: --model-url)");
  const json out = StringProp("folder for best.py, best.json, trajectories.jsonl");
  server.AddTool({"list_problems", "List the registered problems (ids), optionally by prefix.",
                  Schema({{"prefix", StringProp("only ids starting with this, e.g. level2/")}}, {}),
                  ProblemListSchema(),
                  [&](const json& a, const CallContext&) { return tools.ListProblems(a); }});
  server.AddTool({"get_problem",
                  "A problem's source and the shapes, dtypes and strides of its inputs and outputs "
                  "as the judge measures them, with the target backend and device.",
                  Schema({{"problem", problem}}, {"problem"}), ProblemSchema(),
                  [&](const json& a, const CallContext& c) { return tools.GetProblem(a, c); }});
  server.AddTool(
      {"evaluate_kernel",
       "Verify and time a candidate against a problem: correctness trials, legality "
       "rules, speedup over eager PyTorch, reward and feedback (the verdict JSON).",
       Schema({{"problem", problem}, {"candidate", candidate}, {"candidate_file", candidate_file}},
              {"problem"}),
       VerdictSchema(),
       [&](const json& a, const CallContext& c) { return tools.EvaluateKernel(a, c); }});
  server.AddTool(
      {"generate_kernel",
       "Ask the model server for kernels for a problem, verify each, feed the verdicts "
       "back for several turns, and return the fastest correct kernel.",
       Schema({{"problem", problem},
               {"samples", IntProp("independent samples (default: --samples)", 1, 64)},
               {"turns", IntProp("turns per sample (default: --turns)", 1, 20)},
               {"optimize_until", NumberProp("keep improving until this speedup over eager")},
               {"model", model},
               {"model_url", model_url},
               {"out", out}},
              {"problem"}),
       GenerationSchema(),
       [&](const json& a, const CallContext& c) { return tools.Generate(a, c, false); }});
  server.AddTool(
      {"optimize_kernel",
       "Start from a given candidate: verify it, then have the model repair or speed it "
       "up over several turns; returns the fastest correct version.",
       Schema({{"problem", problem},
               {"candidate", candidate},
               {"candidate_file", candidate_file},
               {"target_speedup", NumberProp("stop once this speedup over eager is reached")},
               {"samples", IntProp("independent samples (default 1)", 1, 64)},
               {"turns", IntProp("model turns (default: --turns)", 1, 20)},
               {"model", model},
               {"model_url", model_url},
               {"out", out}},
              {"problem"}),
       GenerationSchema(),
       [&](const json& a, const CallContext& c) { return tools.Generate(a, c, true); }});
  server.Serve(std::cin, std::cout);
  return kExitOk;
}

}  // namespace

Command McpCommand() {
  return {"mcp", "Serve kforge's tools to coding agents over MCP (JSON-RPC on stdin/stdout)",
          [](CLI::App* app) -> std::function<int()> {
            auto f = std::make_shared<McpFlags>();
            app->add_option("--problems", f->problems,
                            "folder of KernelBench-format problems, registered by relative path: "
                            "the only problems the tools take (repeatable; default: problems)");
            app->add_option("--samples", f->samples, "default samples of generate_kernel (4)")
                ->check(CLI::Range(1, 64));
            app->add_option("--turns", f->turns, "default turns of generate/optimize_kernel (3)")
                ->check(CLI::Range(1, 20));
            AddModelFlags(app, &f->model);
            AddEvalFlags(app, &f->eval, Lanes::kOne);
            return [f] { return RunMcp(*f); };
          }};
}

}  // namespace kf::cli
