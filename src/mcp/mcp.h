// mcp: a Model Context Protocol server on stdio (JSON-RPC 2.0, one JSON message per line).
// Knows the protocol (initialize, ping, tools/list, tools/call, batches where the negotiated
// version has them, progress notifications), not the tools: those are registered by the caller
// (src/cli/mcp_command.cc) as a name, a description, input and output JSON schemas and a
// handler. Arguments are checked against the input schema before a handler sees them.
//
// Thread-safety: one Server serves one stream; requests are handled one at a time on the thread
// that calls Serve. A handler may report progress from other threads until it returns.
#pragma once

#include <functional>
#include <iosfwd>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kf::mcp {

// What a tool returns. is_error marks a failure of the tool (bad arguments, unknown problem,
// model server down), which MCP reports as a normal result for the model to read, not as a
// protocol error.
struct ToolResult {
  std::string text;                     // the result as text (content[0])
  nlohmann::json structured = nullptr;  // optional structuredContent (an object)
  bool is_error = false;

  static ToolResult Error(std::string message) { return {std::move(message), nullptr, true}; }
};

// What a handler gets besides its arguments: the negotiated protocol, and a way to report
// progress on the request it serves.
class CallContext {
 public:
  using Send = std::function<void(const nlohmann::json& message)>;
  CallContext(std::string protocol, nlohmann::json progress_token, Send send);

  const std::string& protocol() const { return protocol_; }
  // True when the request carried params._meta.progressToken.
  bool wants_progress() const { return !token_.is_null(); }
  // Sends notifications/progress with the request's token; nothing without one. The spec
  // wants `progress` to grow with every notification of a request: ProgressReporter keeps
  // that. `message` is sent under protocols that have it (2025-03-26 on). Thread-safe.
  void Progress(double progress, std::optional<double> total, const std::string& message) const;

 private:
  std::string protocol_;
  nlohmann::json token_;
  Send send_;
};

struct Tool {
  std::string name;
  std::string description;
  nlohmann::json input_schema;             // a JSON schema of type object (CheckArguments)
  nlohmann::json output_schema = nullptr;  // of structuredContent; listed from 2025-06-18 on
  std::function<ToolResult(const nlohmann::json& arguments, const CallContext& ctx)> handler;
};

struct ServerInfo {
  std::string name = "kforge";
  std::string version = "0.1.0";
  std::string instructions;
};

// Protocol versions we speak, newest first; an initialize asking for another gets the newest.
const std::vector<std::string>& SupportedProtocolVersions();
// Whether a JSON-RPC batch (an array of messages) is part of `protocol`: only 2025-03-26 has
// them (2024-11-05 did not yet, 2025-06-18 removed them).
bool BatchesAllowed(const std::string& protocol);

// The part of JSON Schema our tools use, checked on a tool's arguments: type (string, integer,
// number, boolean, object, array), required, additionalProperties: false, minimum, maximum.
// Returns "" when `arguments` conform, else a message naming the argument and what was wrong.
std::string CheckArguments(const nlohmann::json& schema, const nlohmann::json& arguments);

class Server {
 public:
  explicit Server(ServerInfo info);
  void AddTool(Tool tool);

  // One incoming line (a message or a batch) to its response line; nullopt when nothing is
  // answered (notifications). Progress notifications go to the stream Serve writes, if any.
  std::optional<std::string> HandleLine(const std::string& line);
  // Reads lines until end of input, writing one response per request line, and the progress
  // notifications of a request before its response.
  void Serve(std::istream& in, std::ostream& out);

  const std::string& protocol() const { return protocol_; }  // "" before initialize

 private:
  nlohmann::json Handle(const nlohmann::json& msg, bool* respond);
  std::optional<nlohmann::json> HandleBatch(const nlohmann::json& batch);
  nlohmann::json CallTool(const nlohmann::json& params, nlohmann::json* error);
  void Write(const nlohmann::json& message);

  ServerInfo info_;
  std::vector<Tool> tools_;
  std::string protocol_;
  std::mutex out_mu_;
  std::ostream* out_ = nullptr;  // guarded by out_mu_
};

// JSON-RPC error codes used here.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;

}  // namespace kf::mcp
