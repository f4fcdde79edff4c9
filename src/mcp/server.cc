#include <exception>
#include <iostream>

#include "mcp/mcp.h"

namespace kf::mcp {
using nlohmann::json;

namespace {

json ErrorResponse(const json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

// Tool output may hold any bytes (compiler messages): replaced, never a throw.
std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// Protocol versions are dates: "2025-06-18" >= "2025-03-26" as strings too.
bool AtLeast(const std::string& protocol, const char* version) {
  return !protocol.empty() && protocol >= version;
}

}  // namespace

const std::vector<std::string>& SupportedProtocolVersions() {
  static const std::vector<std::string> kVersions = {"2025-06-18", "2025-03-26", "2024-11-05"};
  return kVersions;
}

bool BatchesAllowed(const std::string& protocol) { return protocol == "2025-03-26"; }

CallContext::CallContext(std::string protocol, json progress_token, Send send)
    : protocol_(std::move(protocol)), token_(std::move(progress_token)), send_(std::move(send)) {}

void CallContext::Progress(double progress, std::optional<double> total,
                           const std::string& message) const {
  if (token_.is_null() || !send_) return;
  json params = {{"progressToken", token_}, {"progress", progress}};
  if (total) params["total"] = *total;
  if (!message.empty() && AtLeast(protocol_, "2025-03-26")) params["message"] = message;
  send_({{"jsonrpc", "2.0"}, {"method", "notifications/progress"}, {"params", params}});
}

Server::Server(ServerInfo info) : info_(std::move(info)) {}

void Server::AddTool(Tool tool) { tools_.push_back(std::move(tool)); }

void Server::Write(const json& message) {
  std::lock_guard<std::mutex> g(out_mu_);
  if (out_) *out_ << Dump(message) << "\n" << std::flush;
}

std::optional<std::string> Server::HandleLine(const std::string& line) {
  json msg = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (msg.is_discarded()) {
    return Dump(ErrorResponse(nullptr, kParseError, "parse error: not JSON"));
  }
  if (msg.is_array()) {
    auto replies = HandleBatch(msg);
    if (!replies) return std::nullopt;
    return Dump(*replies);
  }
  bool respond = true;
  json reply = Handle(msg, &respond);
  if (!respond) {
    return std::nullopt;
  }
  return Dump(reply);
}

std::optional<json> Server::HandleBatch(const json& batch) {
  if (!BatchesAllowed(protocol_)) {
    return ErrorResponse(
        nullptr, kInvalidRequest,
        "invalid request: JSON-RPC batches are not part of MCP " +
            (protocol_.empty() ? std::string("before initialize") : "protocol " + protocol_) +
            " (only 2025-03-26 has them); send one message per line");
  }
  if (batch.empty()) {
    return ErrorResponse(nullptr, kInvalidRequest, "invalid request: an empty batch");
  }
  json replies = json::array();
  for (const json& msg : batch) {
    bool respond = true;
    json reply;
    if (msg.is_object() && msg.value("method", json()) == "initialize") {
      // The lifecycle rule of 2025-03-26: nothing can come before initialization is done.
      reply = ErrorResponse(msg.value("id", json()), kInvalidRequest,
                            "invalid request: initialize may not be part of a batch");
      respond = msg.contains("id");
    } else {
      reply = Handle(msg, &respond);
    }
    if (respond) replies.push_back(std::move(reply));
  }
  if (replies.empty()) return std::nullopt;  // only notifications: JSON-RPC answers nothing
  return replies;
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
    protocol_ = version;
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
      json tool = {
          {"name", t.name}, {"description", t.description}, {"inputSchema", t.input_schema}};
      if (t.output_schema.is_object() && AtLeast(protocol_, "2025-06-18")) {
        tool["outputSchema"] = t.output_schema;
      }
      tools.push_back(std::move(tool));
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
  // Protocol errors: a request that is not a tool call at all.
  if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
    *error = {{"code", kInvalidParams}, {"message", "tools/call needs params.name (a string)"}};
    return nullptr;
  }
  const std::string name = params["name"];
  json args = params.value("arguments", json::object());
  if (!args.is_object()) {
    *error = {{"code", kInvalidParams}, {"message", "params.arguments must be an object"}};
    return nullptr;
  }
  // An argument sent as null is one not sent (some clients fill every optional one so).
  for (auto it = args.begin(); it != args.end();) {
    it = it->is_null() ? args.erase(it) : std::next(it);
  }
  json token = nullptr;
  if (params.contains("_meta") && params["_meta"].is_object()) {
    const json& t = params["_meta"].value("progressToken", json());
    if (t.is_string() || t.is_number_integer()) token = t;
  }
  const Tool* tool = nullptr;
  for (const auto& t : tools_) {
    if (t.name == name) tool = &t;
  }
  if (!tool) {
    *error = {{"code", kInvalidParams}, {"message", "unknown tool: " + name}};
    return nullptr;
  }
  // Everything past here is the tool's: failures are results the model can read and act on.
  ToolResult r;
  if (std::string why = CheckArguments(tool->input_schema, args); !why.empty()) {
    r = ToolResult::Error(name + ": " + why);
  } else {
    CallContext ctx(protocol_, token, [this](const json& m) { Write(m); });
    // The boundary of the tools: nothing a handler throws may end the session. Handlers
    // return their own errors; reaching this catch is a kforge bug, said as such.
    try {
      r = tool->handler(args, ctx);
    } catch (const std::exception& e) {
      r = ToolResult::Error(name + " failed inside kforge (a bug; please report it): " + e.what());
    }
  }
  json content = json::array({{{"type", "text"}, {"text", r.text}}});
  json result = {{"isError", r.is_error}};
  if (r.structured.is_object()) {
    result["structuredContent"] = r.structured;
    // The spec's advice for clients that read only content: the same JSON as text too.
    content.push_back({{"type", "text"}, {"text", Dump(r.structured)}});
  }
  result["content"] = std::move(content);
  return result;
}

void Server::Serve(std::istream& in, std::ostream& out) {
  {
    std::lock_guard<std::mutex> g(out_mu_);
    out_ = &out;
  }
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
      continue;
    }
    if (auto reply = HandleLine(line)) {
      std::lock_guard<std::mutex> g(out_mu_);
      out << *reply << "\n" << std::flush;
    }
  }
  std::lock_guard<std::mutex> g(out_mu_);
  out_ = nullptr;
}

}  // namespace kf::mcp
