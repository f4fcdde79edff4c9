// The tools of `kforge mcp` (list_problems, get_problem, evaluate_kernel, generate_kernel,
// optimize_kernel) and the state they share: the registered problems and one engine (kforge's
// pipeline) for the session, started on first use. mcp_command.cc declares their schemas and
// serves them.
//
// Problems come only from the registry (--problems folders, read at start-up): a tool's
// `problem` is a registered id, or a path that resolves to a registered problem's file; the
// judge never loads a file a client names. Every failure is a ToolResult with is_error and a
// message saying what to do; none throws.
//
// Thread-safety: one call at a time (the MCP server's thread); generate's samples run on
// threads of their own inside one call.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/generation.h"
#include "mcp/mcp.h"
#include "problems/registry.h"

namespace kf::cli {

struct McpFlags {
  std::vector<std::string> problems = {"problems"};  // folders registered at start-up
  int samples = 4;
  int turns = 3;
  EvalFlags eval;
  ModelSetup model;
};

class McpTools {
 public:
  McpTools(const McpFlags& f, const problems::Registry& registry);

  mcp::ToolResult ListProblems(const nlohmann::json& a);
  mcp::ToolResult GetProblem(const nlohmann::json& a, const mcp::CallContext& ctx);
  mcp::ToolResult EvaluateKernel(const nlohmann::json& a, const mcp::CallContext& ctx);
  mcp::ToolResult Generate(const nlohmann::json& a, const mcp::CallContext& ctx, bool optimize);

 private:
  // The registered problem `a["problem"]` names, written where the judge reads it (the
  // registered text, under the cache: what was registered is what is evaluated); or why not.
  struct Resolved {
    const problems::Problem* problem = nullptr;
    std::filesystem::path file;
  };
  Result<Resolved> Resolve(const nlohmann::json& a);
  Result<pipeline::Pipeline*> Engine();  // started on first use
  std::string Backend() const;

  const McpFlags& f_;
  const problems::Registry& registry_;
  const eval::EvalOptions options_;
  std::unique_ptr<pipeline::Pipeline> engine_;
};

// "status: ok, reward 1.23, 5/5 correct trials, 2.10x vs eager": the first line of a verdict's
// text result.
std::string VerdictLine(const Verdict& v);

}  // namespace kf::cli
