#include <gtest/gtest.h>

#include <sstream>

#include "mcp/mcp.h"

namespace kf::mcp {
namespace {

using nlohmann::json;

// A Server holds a mutex, so tests build theirs in place and add tools to it.
void AddEcho(Server& s) {
  s.AddTool({"echo",
             "echoes",
             {{"type", "object"}, {"properties", {{"x", {{"type", "string"}}}}}},
             {{"type", "object"}, {"properties", {{"x", {{"type", "string"}}}}}},
             [](const json& a, const CallContext&) -> ToolResult {
               if (!a.contains("x")) return ToolResult::Error("x is required");
               return {a["x"].get<std::string>(), {{"x", a["x"]}}, false};
             }});
}

json Call(Server& s, const json& msg) {
  auto r = s.HandleLine(msg.dump());
  EXPECT_TRUE(r.has_value());
  return r ? json::parse(*r) : json();
}

TEST(McpServer, InitializeNegotiatesVersion) {
  Server s(ServerInfo{"kforge", "9.9", ""});
  AddEcho(s);
  json r = Call(s, {{"jsonrpc", "2.0"},
                    {"id", 1},
                    {"method", "initialize"},
                    {"params",
                     {{"protocolVersion", "2024-11-05"},
                      {"capabilities", json::object()},
                      {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}});
  EXPECT_EQ(r["id"], 1);
  EXPECT_EQ(r["result"]["protocolVersion"], "2024-11-05");
  EXPECT_TRUE(r["result"]["capabilities"].contains("tools"));
  EXPECT_EQ(r["result"]["serverInfo"]["name"], "kforge");
  r = Call(s, {{"jsonrpc", "2.0"},
               {"id", "a"},
               {"method", "initialize"},
               {"params", {{"protocolVersion", "1999-01-01"}}}});
  EXPECT_EQ(r["id"], "a");
  EXPECT_EQ(r["result"]["protocolVersion"], SupportedProtocolVersions().front());
}

TEST(McpServer, NotificationsGetNoAnswer) {
  Server s(ServerInfo{"kforge", "9.9", ""});
  AddEcho(s);
  EXPECT_FALSE(s.HandleLine(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  EXPECT_FALSE(s.HandleLine(R"({"jsonrpc":"2.0","method":"notifications/unknown"})"));
}

TEST(McpServer, ToolsListAndCall) {
  Server s(ServerInfo{"kforge", "9.9", ""});
  AddEcho(s);
  json r = Call(s, {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}});
  ASSERT_EQ(r["result"]["tools"].size(), 1u);
  EXPECT_EQ(r["result"]["tools"][0]["name"], "echo");
  EXPECT_EQ(r["result"]["tools"][0]["inputSchema"]["type"], "object");
  r = Call(s, {{"jsonrpc", "2.0"},
               {"id", 3},
               {"method", "tools/call"},
               {"params", {{"name", "echo"}, {"arguments", {{"x", "hi"}}}}}});
  EXPECT_EQ(r["result"]["content"][0]["type"], "text");
  EXPECT_EQ(r["result"]["content"][0]["text"], "hi");
  EXPECT_EQ(r["result"]["isError"], false);
  EXPECT_EQ(r["result"]["structuredContent"]["x"], "hi");
  // The same JSON as text, for clients that read only content.
  EXPECT_EQ(json::parse(r["result"]["content"][1]["text"].get<std::string>()), json({{"x", "hi"}}));
  // A failing tool is a result with isError, not a protocol error.
  r = Call(s, {{"jsonrpc", "2.0"},
               {"id", 4},
               {"method", "tools/call"},
               {"params", {{"name", "echo"}, {"arguments", json::object()}}}});
  EXPECT_FALSE(r.contains("error"));
  EXPECT_EQ(r["result"]["isError"], true);
  EXPECT_EQ(r["result"]["content"][0]["text"], "x is required");
  // A wrongly typed argument never reaches the handler: a result naming it.
  r = Call(s, {{"jsonrpc", "2.0"},
               {"id", 5},
               {"method", "tools/call"},
               {"params", {{"name", "echo"}, {"arguments", {{"x", 3}}}}}});
  EXPECT_EQ(r["result"]["isError"], true);
  EXPECT_EQ(r["result"]["content"][0]["text"],
            "echo: argument 'x' must be a string (got an integer)");
  r = Call(
      s, {{"jsonrpc", "2.0"}, {"id", 6}, {"method", "tools/call"}, {"params", {{"name", "nope"}}}});
  EXPECT_EQ(r["error"]["code"], kInvalidParams);
}

TEST(McpServer, ToolTextThatIsNotUtf8IsReplacedNotThrown) {
  Server s(ServerInfo{});
  s.AddTool({"bytes", "", {{"type", "object"}}, nullptr, [](const json&, const CallContext&) {
               return ToolResult{"compiler said \xff", nullptr, false};
             }});
  auto line =
      s.HandleLine(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bytes"}})");
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(json::parse(*line)["result"]["content"][0]["text"], "compiler said \xef\xbf\xbd");
}

TEST(McpServer, ProtocolErrors) {
  Server s(ServerInfo{"kforge", "9.9", ""});
  AddEcho(s);
  json r = json::parse(*s.HandleLine("{not json"));
  EXPECT_EQ(r["error"]["code"], kParseError);
  EXPECT_TRUE(r["id"].is_null());
  r = Call(s, {{"jsonrpc", "2.0"}, {"id", 7}, {"method", "resources/list"}});
  EXPECT_EQ(r["error"]["code"], kMethodNotFound);
  EXPECT_EQ(r["id"], 7);
  r = Call(s, {{"id", 8}, {"method", "ping"}});
  EXPECT_EQ(r["error"]["code"], kInvalidRequest);
  r = Call(s, {{"jsonrpc", "2.0"}, {"id", 9}, {"method", "ping"}});
  EXPECT_EQ(r["result"], json::object());
}

TEST(McpServer, ServeSkipsBlankLinesAndAnswersInOrder) {
  Server s(ServerInfo{"kforge", "9.9", ""});
  AddEcho(s);
  std::istringstream in(
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n\n"
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
  std::ostringstream out;
  s.Serve(in, out);
  EXPECT_EQ(out.str(),
            "{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{}}\n"
            "{\"id\":2,\"jsonrpc\":\"2.0\",\"result\":{}}\n");
}

json Init(Server& s, const std::string& version) {
  return Call(s, {{"jsonrpc", "2.0"},
                  {"id", 0},
                  {"method", "initialize"},
                  {"params", {{"protocolVersion", version}}}});
}

std::vector<json> Lines(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(json::parse(line));
  return out;
}

const char kBatch[] =
    R"([{"jsonrpc":"2.0","id":1,"method":"ping"},)"
    R"({"jsonrpc":"2.0","method":"notifications/initialized"},)"
    R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":"a"}}},)"
    R"({"jsonrpc":"2.0","id":3,"method":"nope"},)"
    R"(7])";

TEST(McpServer, BatchesAreAnsweredElementWiseUnder20250326) {
  Server s(ServerInfo{"kforge", "9.9", ""});
  AddEcho(s);
  EXPECT_EQ(Init(s, "2025-03-26")["result"]["protocolVersion"], "2025-03-26");
  json r = json::parse(*s.HandleLine(kBatch));
  ASSERT_TRUE(r.is_array());
  ASSERT_EQ(r.size(), 4u);  // the notification gets no answer
  EXPECT_EQ(r[0]["id"], 1);
  EXPECT_EQ(r[0]["result"], json::object());
  EXPECT_EQ(r[1]["id"], 2);
  EXPECT_EQ(r[1]["result"]["content"][0]["text"], "a");
  EXPECT_EQ(r[2]["id"], 3);
  EXPECT_EQ(r[2]["error"]["code"], kMethodNotFound);
  EXPECT_TRUE(r[3]["id"].is_null());
  EXPECT_EQ(r[3]["error"]["code"], kInvalidRequest);
  // Only notifications: nothing at all. An empty batch, or initialize inside one: refused.
  EXPECT_FALSE(s.HandleLine(R"([{"jsonrpc":"2.0","method":"notifications/initialized"}])"));
  r = json::parse(*s.HandleLine("[]"));
  EXPECT_TRUE(r.is_object());
  EXPECT_EQ(r["error"]["code"], kInvalidRequest);
  r = json::parse(*s.HandleLine(R"([{"jsonrpc":"2.0","id":9,"method":"initialize"}])"));
  EXPECT_EQ(r[0]["id"], 9);
  EXPECT_EQ(r[0]["error"]["code"], kInvalidRequest);
  EXPECT_EQ(s.protocol(), "2025-03-26");
}

TEST(McpServer, BatchesAreRefusedWhereTheProtocolHasNone) {
  for (const char* version : {"2025-06-18", "2024-11-05", ""}) {
    Server s(ServerInfo{"kforge", "9.9", ""});
    AddEcho(s);
    if (*version) Init(s, version);
    json r = json::parse(*s.HandleLine(kBatch));
    ASSERT_TRUE(r.is_object()) << version;  // one error, nothing of the batch was run
    EXPECT_TRUE(r["id"].is_null());
    EXPECT_EQ(r["error"]["code"], kInvalidRequest);
    EXPECT_NE(r["error"]["message"].get<std::string>().find("batches"), std::string::npos);
  }
  EXPECT_FALSE(BatchesAllowed("2025-06-18"));
  EXPECT_TRUE(BatchesAllowed("2025-03-26"));
}

TEST(McpServer, OutputSchemasAreListedFrom20250618On) {
  for (const char* version : {"2025-06-18", "2025-03-26", "2024-11-05"}) {
    Server s(ServerInfo{"kforge", "9.9", ""});
    AddEcho(s);
    Init(s, version);
    json tool =
        Call(s, {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}})["result"]["tools"][0];
    EXPECT_EQ(tool.contains("outputSchema"), std::string(version) == "2025-06-18") << version;
  }
}

void AddWork(Server& s) {
  s.AddTool({"work", "", {{"type", "object"}}, nullptr, [](const json&, const CallContext& c) {
               c.Progress(0, 2, "build");
               c.Progress(1, 2, "execute");
               return ToolResult{c.wants_progress() ? "told" : "quiet", nullptr, false};
             }});
}

TEST(McpServer, ProgressGoesOutBeforeTheAnswerOnlyWithAToken) {
  for (const char* version : {"2025-06-18", "2024-11-05"}) {
    Server s(ServerInfo{});
    AddWork(s);
    std::istringstream in(
        std::string(
            R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":")") +
        version +
        R"("}})"
        "\n"
        R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","_meta":{"progressToken":"t1"}}})"
        "\n"
        R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"work"}})"
        "\n");
    std::ostringstream out;
    s.Serve(in, out);
    auto lines = Lines(out.str());
    ASSERT_EQ(lines.size(), 5u) << out.str();
    EXPECT_EQ(lines[1]["method"], "notifications/progress");
    EXPECT_EQ(lines[1]["params"]["progressToken"], "t1");
    EXPECT_EQ(lines[1]["params"]["progress"], 0);
    EXPECT_EQ(lines[1]["params"]["total"], 2);
    EXPECT_EQ(lines[2]["params"]["progress"], 1);
    // `message` is a field of 2025-03-26 on.
    EXPECT_EQ(lines[2]["params"].contains("message"), std::string(version) == "2025-06-18");
    EXPECT_EQ(lines[3]["id"], 1);
    EXPECT_EQ(lines[3]["result"]["content"][0]["text"], "told");
    EXPECT_EQ(lines[4]["id"], 2);  // no token: no notification
    EXPECT_EQ(lines[4]["result"]["content"][0]["text"], "quiet");
  }
}

TEST(McpServer, NullArgumentsCountAsAbsentAndUnknownOnesAreNamed) {
  Server s(ServerInfo{});
  json schema = {{"type", "object"},
                 {"properties", {{"n", {{"type", "integer"}}}, {"p", {{"type", "string"}}}}},
                 {"required", {"p"}},
                 {"additionalProperties", false}};
  s.AddTool({"t", "", schema, nullptr, [](const json& a, const CallContext&) {
               return ToolResult{a.dump(), nullptr, false};
             }});
  auto call = [&](json args) {
    return Call(s, {{"jsonrpc", "2.0"},
                    {"id", 1},
                    {"method", "tools/call"},
                    {"params", {{"name", "t"}, {"arguments", args}}}})["result"];
  };
  EXPECT_EQ(call({{"p", "x"}, {"n", nullptr}})["content"][0]["text"], R"({"p":"x"})");
  json r = call({{"p", nullptr}});
  EXPECT_EQ(r["isError"], true);
  EXPECT_EQ(r["content"][0]["text"], "t: argument 'p' is required");
  r = call({{"p", "x"}, {"problme", "y"}});
  EXPECT_EQ(r["isError"], true);
  EXPECT_EQ(r["content"][0]["text"], "t: unknown argument 'problme' (arguments: n, p)");
}

}  // namespace
}  // namespace kf::mcp
