#include "common/protocol.h"

#include <gtest/gtest.h>

#include "common/files.h"

namespace kf::protocol {
namespace {
using nlohmann::json;

const char* kSchema = R"({
  "version": 3,
  "services": {
    "judge": {
      "error": {"message": "string"},
      "ops": {
        "hello": {"request": {"protocol": "integer"}, "reply": {"protocol": "integer"}},
        "prepare": {
          "request": {"slot": "string", "seed": "integer", "signed": "boolean?"},
          "reply": {"skip": "string|null?", "times": "array<number>?"}
        },
        "build": {
          "request": {},
          "reply": {"so_file": "string"},
          "failure": {"message": "string", "cpu_s": "number?"}
        },
        "exit": {"request": {}, "reply": null}
      },
      "events": {
        "load_inline": {"request": {"args": "object"},
                        "reply": {"path": "string"}, "failure": {"path": "string"}}
      }
    }
  }
})";

Schema TestSchema() {
  auto s = Schema::Parse(kSchema);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.value();
}

TEST(ProtocolTest, AcceptsARequestWithExactlyItsFields) {
  Schema s = TestSchema();
  EXPECT_TRUE(s.CheckRequest("judge", {{"op", "prepare"}, {"slot", "T0"}, {"seed", 7}}).ok());
  EXPECT_TRUE(
      s.CheckRequest(
           "judge",
           {{"op", "prepare"}, {"slot", "T0"}, {"seed", uint64_t{1} << 62}, {"signed", true}})
          .ok());
}

TEST(ProtocolTest, RejectsAnUnknownOpNamingIt) {
  Status st = TestSchema().CheckRequest("judge", {{"op", "launch"}});
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_EQ(st.message(), "judge request: unknown op 'launch'");
  EXPECT_EQ(TestSchema().CheckRequest("judge", {{"slot", "T0"}}).message(),
            "judge request: missing required field 'op'");
  EXPECT_FALSE(TestSchema().CheckRequest("nobody", {{"op", "prepare"}}).ok());
}

TEST(ProtocolTest, RejectsAnUnknownFieldNamingOpAndField) {
  Status st = TestSchema().CheckRequest(
      "judge", {{"op", "prepare"}, {"slot", "T0"}, {"seed", 1}, {"colour", 2}});
  EXPECT_EQ(st.message(), "judge 'prepare' request: unknown field 'colour'");
}

TEST(ProtocolTest, RejectsAMissingRequiredField) {
  Status st = TestSchema().CheckRequest("judge", {{"op", "prepare"}, {"slot", "T0"}});
  EXPECT_EQ(st.message(), "judge 'prepare' request: missing required field 'seed'");
}

TEST(ProtocolTest, RejectsAWrongTypeNamingTheField) {
  Schema s = TestSchema();
  EXPECT_EQ(s.CheckRequest("judge", {{"op", "prepare"}, {"slot", "T0"}, {"seed", "7"}}).message(),
            "judge 'prepare' request: field 'seed' must be integer, not string");
  EXPECT_EQ(s.CheckRequest("judge", {{"op", "prepare"}, {"slot", "T0"}, {"seed", 7.5}}).message(),
            "judge 'prepare' request: field 'seed' must be integer, not number");
  EXPECT_EQ(s.CheckRequest("judge", {{"op", "prepare"}, {"slot", "T0"}, {"seed", true}}).message(),
            "judge 'prepare' request: field 'seed' must be integer, not boolean");
}

TEST(ProtocolTest, ChecksRepliesByOkAndTheOpsFailureFields) {
  Schema s = TestSchema();
  EXPECT_TRUE(s.CheckReply("judge", "prepare", {{"ok", true}}).ok());
  EXPECT_TRUE(s.CheckReply("judge", "prepare", {{"ok", true}, {"skip", nullptr}}).ok());
  EXPECT_TRUE(s.CheckReply("judge", "prepare", {{"ok", true}, {"times", {1, 2.5}}}).ok());
  EXPECT_EQ(s.CheckReply("judge", "prepare", {{"ok", true}, {"times", {1, "x"}}}).message(),
            "judge 'prepare' reply: field 'times' must be array<number>, not array");
  EXPECT_EQ(s.CheckReply("judge", "prepare", {{"skip", "why"}}).message(),
            "judge 'prepare' reply: missing required field 'ok'");
  // A failure has the service's error fields...
  EXPECT_TRUE(s.CheckReply("judge", "prepare", {{"ok", false}, {"message", "no"}}).ok());
  EXPECT_EQ(
      s.CheckReply("judge", "prepare", {{"ok", false}, {"skip", "x"}, {"message", "no"}}).message(),
      "judge 'prepare' reply: unknown field 'skip'");
  // ...unless the op has its own (a failed build is a result with facts).
  EXPECT_TRUE(s.CheckReply("judge", "build", {{"ok", false}, {"message", "x"}, {"cpu_s", 2}}).ok());
  EXPECT_EQ(s.CheckReply("judge", "build", {{"ok", true}}).message(),
            "judge 'build' reply: missing required field 'so_file'");
  EXPECT_FALSE(s.CheckReply("judge", "exit", {{"ok", true}}).ok());  // never answered
}

TEST(ProtocolTest, ChecksEventsAndTheirAnswers) {
  Schema s = TestSchema();
  EXPECT_TRUE(s.CheckEvent("judge", {{"event", "load_inline"}, {"args", json::object()}}).ok());
  EXPECT_EQ(s.CheckEvent("judge", {{"event", "load_inline"}, {"args", 1}}).message(),
            "judge 'load_inline' event: field 'args' must be object, not integer");
  EXPECT_EQ(s.CheckEvent("judge", {{"event", "print"}}).message(),
            "judge event: unknown event 'print'");
  EXPECT_TRUE(s.CheckEventReply("judge", "load_inline", {{"ok", false}, {"path", ""}}).ok());
  EXPECT_EQ(s.CheckEventReply("judge", "load_inline", {{"ok", true}}).message(),
            "judge 'load_inline' event reply: missing required field 'path'");
}

TEST(ProtocolTest, HelloMustCarryTheSchemasVersion) {
  Schema s = TestSchema();
  EXPECT_TRUE(s.CheckRequest("judge", {{"op", "hello"}, {"protocol", 3}}).ok());
  EXPECT_EQ(s.CheckRequest("judge", {{"op", "hello"}, {"protocol", 2}}).message(),
            "judge 'hello' request: field 'protocol' must be this schema's version 3");
  const json hello = {{"op", "hello"}, {"protocol", 3}};
  EXPECT_TRUE(s.CheckReplyTo("judge", hello, {{"ok", true}, {"protocol", 3}}).ok());
  Status older = s.CheckReplyTo("judge", hello, {{"ok", true}});
  EXPECT_NE(older.message().find("protocol version mismatch: kforge speaks 3, its judge speaks "
                                 "none"),
            std::string::npos)
      << older.message();
  Status newer = s.CheckReplyTo("judge", hello, {{"ok", true}, {"protocol", 4}});
  EXPECT_NE(newer.message().find("kforge speaks 3, its judge speaks 4"), std::string::npos);
  // A refusal (the runner saw the mismatch first) is an error reply like any other.
  EXPECT_TRUE(s.CheckReplyTo("judge", hello, {{"ok", false}, {"message", "mismatch"}}).ok());
}

TEST(ProtocolTest, RefusesASchemaWithAnUnknownType) {
  EXPECT_FALSE(Schema::Parse(R"({"version": 1, "services": {"j": {"ops": {"a": {
      "request": {"x": "str"}, "reply": {}}}}}})")
                   .ok());
  EXPECT_FALSE(Schema::Parse(R"({"services": {}})").ok());
  EXPECT_FALSE(Schema::Parse(R"({"version": 1, "services": {"j": []}})").ok());
  EXPECT_FALSE(Schema::Parse(R"({"version": 1, "services": {"j": {"ops": {"a": 1}}}})").ok());
  EXPECT_FALSE(Schema::Parse("not json").ok());
}

// One source of truth: the schema compiled in is the runner's file, and its version is the one
// that file states (tests/runner/test_protocol.py checks the runner reports the same).
TEST(ProtocolTest, TheEmbeddedSchemaIsTheRunnersFile) {
  auto text = ReadFile(std::string(KFORGE_SOURCE_DIR) + "/runner/protocol.json");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(std::string(EmbeddedText()), *text);
  EXPECT_EQ(Embedded().version(), json::parse(*text)["version"].get<int>());
  for (const char* service : {"judge", "zygote", "candidate", "build_worker"}) {
    EXPECT_FALSE(Embedded().Ops(service).empty()) << service;
  }
}

}  // namespace
}  // namespace kf::protocol
