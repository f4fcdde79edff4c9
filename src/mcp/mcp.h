// mcp: a Model Context Protocol server on stdio (JSON-RPC 2.0, one JSON message per line).
// Knows the protocol (initialize, ping, tools/list, tools/call), not the tools: those are
// registered by the caller (src/cli/mcp_command.cc) as a name, a description, an input JSON
// schema and a handler.
//
// Thread-safety: one Server serves one stream from one thread; handlers run on that thread.
#pragma once

#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kf::mcp {

// What a tool returns. is_error marks a failure of the tool (bad arguments, no kernel found),
// which MCP reports as a normal result for the model to read, not as a protocol error.
struct ToolResult {
  std::string text;                     // the result as text (content[0])
  nlohmann::json structured = nullptr;  // optional structuredContent (an object)
  bool is_error = false;

  static ToolResult Error(std::string message) { return {std::move(message), nullptr, true}; }
};

struct Tool {
  std::string name;
  std::string description;
  nlohmann::json input_schema;  // a JSON schema of type object
  std::function<ToolResult(const nlohmann::json& arguments)> handler;
};

struct ServerInfo {
  std::string name = "kforge";
  std::string version = "0.1.0";
  std::string instructions;
};

// Protocol versions we speak, newest first; an initialize asking for another gets the newest.
const std::vector<std::string>& SupportedProtocolVersions();

class Server {
 public:
  explicit Server(ServerInfo info);
  void AddTool(Tool tool);

  // One incoming line to its response line; nullopt for notifications (no response).
  std::optional<std::string> HandleLine(const std::string& line);
  // Reads lines until end of input, writing one response per request line.
  void Serve(std::istream& in, std::ostream& out);

 private:
  nlohmann::json Handle(const nlohmann::json& msg, bool* respond);
  nlohmann::json CallTool(const nlohmann::json& params, nlohmann::json* error);

  ServerInfo info_;
  std::vector<Tool> tools_;
};

// JSON-RPC error codes used here.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;

}  // namespace kf::mcp
