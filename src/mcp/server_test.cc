#include <gtest/gtest.h>

#include <sstream>

#include "mcp/mcp.h"

namespace kf::mcp {
namespace {

using nlohmann::json;

Server Make() {
  Server s(ServerInfo{"kforge", "9.9", ""});
  s.AddTool({"echo",
             "echoes",
             {{"type", "object"}, {"properties", {{"x", {{"type", "string"}}}}}},
             [](const json& a) -> ToolResult {
               if (!a.contains("x")) return ToolResult::Error("x is required");
               return {a["x"].get<std::string>(), {{"x", a["x"]}}, false};
             }});
  return s;
}

json Call(Server& s, const json& msg) {
  auto r = s.HandleLine(msg.dump());
  EXPECT_TRUE(r.has_value());
  return r ? json::parse(*r) : json();
}

TEST(McpServer, InitializeNegotiatesVersion) {
  Server s = Make();
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
  Server s = Make();
  EXPECT_FALSE(s.HandleLine(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  EXPECT_FALSE(s.HandleLine(R"({"jsonrpc":"2.0","method":"notifications/unknown"})"));
}

TEST(McpServer, ToolsListAndCall) {
  Server s = Make();
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
  // A failing tool is a result with isError, not a protocol error.
  r = Call(s, {{"jsonrpc", "2.0"},
               {"id", 4},
               {"method", "tools/call"},
               {"params", {{"name", "echo"}, {"arguments", json::object()}}}});
  EXPECT_FALSE(r.contains("error"));
  EXPECT_EQ(r["result"]["isError"], true);
  EXPECT_EQ(r["result"]["content"][0]["text"], "x is required");
  // A handler that throws on a wrongly typed argument: still a result.
  r = Call(s, {{"jsonrpc", "2.0"},
               {"id", 5},
               {"method", "tools/call"},
               {"params", {{"name", "echo"}, {"arguments", {{"x", 3}}}}}});
  EXPECT_EQ(r["result"]["isError"], true);
  r = Call(
      s, {{"jsonrpc", "2.0"}, {"id", 6}, {"method", "tools/call"}, {"params", {{"name", "nope"}}}});
  EXPECT_EQ(r["error"]["code"], kInvalidParams);
}

TEST(McpServer, ToolTextThatIsNotUtf8IsReplacedNotThrown) {
  Server s(ServerInfo{});
  s.AddTool({"bytes", "", {{"type", "object"}}, [](const json&) {
               return ToolResult{"compiler said \xff", nullptr, false};
             }});
  auto line =
      s.HandleLine(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bytes"}})");
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(json::parse(*line)["result"]["content"][0]["text"], "compiler said \xef\xbf\xbd");
}

TEST(McpServer, ProtocolErrors) {
  Server s = Make();
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
  Server s = Make();
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

}  // namespace
}  // namespace kf::mcp
