#include <exception>
#include <iostream>

#include "mcp/mcp.h"

namespace kf::mcp {
using nlohmann::json;

namespace {

json ErrorResponse(const json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

}  // namespace

const std::vector<std::string>& SupportedProtocolVersions() {
  static const std::vector<std::string> kVersions = {"2025-06-18", "2025-03-26", "2024-11-05"};
  return kVersions;
}

Server::Server(ServerInfo info) : info_(std::move(info)) {}

void Server::AddTool(Tool tool) { tools_.push_back(std::move(tool)); }

std::optional<std::string> Server::HandleLine(const std::string& line) {
  json msg = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (msg.is_discarded()) {
    return ErrorResponse(nullptr, kParseError, "parse error: not JSON").dump();
  }
  bool respond = true;
  json reply = Handle(msg, &respond);
  if (!respond) {
    return std::nullopt;
  }
  return reply.dump(-1, ' ', false, json::error_handler_t::replace);  // never throws
}

json Server::Handle(const json& msg, bool* respond) {
  if (!msg.is_object() || msg.value("jsonrpc", "") != "2.0" || !msg.contains("method") ||
      !msg["method"].is_string()) {
    json id = msg.is_object() && msg.contains("id") ? msg["id"] : json(nullptr);
    return ErrorResponse(id, kInvalidRequest,
                         "invalid request: expected a JSON-RPC 2.0 object "
                         "with a method");
  }
  const std::string method = msg["method"];
  if (!msg.contains("id")) {  // a notification: never answered, whatever it is
    *respond = false;
    return nullptr;
  }
  const json& id = msg["id"];
  const json params = msg.contains("params") ? msg["params"] : json::object();
  auto ok = [&](json result) { return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}}; };
  if (method == "initialize") {
    std::string asked = params.is_object() ? params.value("protocolVersion", "") : "";
    std::string version = SupportedProtocolVersions().front();
    for (const auto& v : SupportedProtocolVersions()) {
      if (v == asked) {
        version = v;
      }
    }
    json result = {{"protocolVersion", version},
                   {"capabilities", {{"tools", {{"listChanged", false}}}}},
                   {"serverInfo", {{"name", info_.name}, {"version", info_.version}}}};
    if (!info_.instructions.empty()) {
      result["instructions"] = info_.instructions;
    }
    return ok(result);
  }
  if (method == "ping") {
    return ok(json::object());
  }
  if (method == "tools/list") {
    json tools = json::array();
    for (const auto& t : tools_) {
      tools.push_back(
          {{"name", t.name}, {"description", t.description}, {"inputSchema", t.input_schema}});
    }
    return ok({{"tools", tools}});
  }
  if (method == "tools/call") {
    json error;
    json result = CallTool(params, &error);
    if (!error.is_null()) {
      return ErrorResponse(id, error["code"], error["message"]);
    }
    return ok(result);
  }
  return ErrorResponse(id, kMethodNotFound, "method not found: " + method);
}

json Server::CallTool(const json& params, json* error) {
  if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
    *error = {{"code", kInvalidParams}, {"message", "tools/call needs params.name"}};
    return nullptr;
  }
  const std::string name = params["name"];
  json args = params.value("arguments", json::object());
  if (!args.is_object()) {
    *error = {{"code", kInvalidParams}, {"message", "params.arguments must be an object"}};
    return nullptr;
  }
  for (const auto& t : tools_) {
    if (t.name != name) {
      continue;
    }
    ToolResult r;
    // The boundary of the tools: nothing a handler throws (a JSON type error on a bad
    // argument, say) may end the session.
    try {
      r = t.handler(args);
    } catch (const std::exception& e) {
      r = ToolResult::Error(std::string("invalid arguments: ") + e.what());
    }
    json result = {{"content", {{{"type", "text"}, {"text", r.text}}}}, {"isError", r.is_error}};
    if (r.structured.is_object()) {
      result["structuredContent"] = r.structured;
    }
    return result;
  }
  *error = {{"code", kInvalidParams}, {"message", "unknown tool: " + name}};
  return nullptr;
}

void Server::Serve(std::istream& in, std::ostream& out) {
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
      continue;
    }
    if (auto reply = HandleLine(line)) {
      out << *reply << "\n" << std::flush;
    }
  }
}

}  // namespace kf::mcp
