#include "score/verdict.h"

#include <gtest/gtest.h>

namespace kf {
namespace {

using nlohmann::json;

Verdict FullVerdict() {
  Verdict v;
  v.problem_id = "level1/19_ReLU";
  v.problem_hash = "p123";
  v.candidate_hash = "c456";
  v.backend = "cuda";
  v.device = "NVIDIA H200";
  v.status = VerdictStatus::kOk;
  v.stages = {{"extract", true, 0.5, json::object()},
              {"build", true, 1200.0, {{"cache_hit", false}}}};
  v.trials_passed = 5;
  v.trials_total = 5;
  v.candidate_ms = TimingSummary{0.1, 0.09, 0.12, 100};
  v.eager_ms = 0.2;
  v.compile_ms = 0.15;
  v.speedup_vs_eager = 2.0;
  v.speedup_vs_compile = 1.5;
  v.reward = 1.5;
  Diagnostic d;
  d.stage = "timing";
  d.code = "roofline";
  d.severity = Severity::kInfo;
  d.message = "memory bound: 3.2 TB/s of 4.8 TB/s";
  v.diagnostics = {d};
  v.feedback = "Correct.";
  return v;
}

TEST(VerdictStatusTest, NamesRoundTrip) {
  const VerdictStatus all[] = {VerdictStatus::kOk,           VerdictStatus::kFormatError,
                               VerdictStatus::kCompileError, VerdictStatus::kRuntimeError,
                               VerdictStatus::kTimeout,      VerdictStatus::kIncorrect,
                               VerdictStatus::kCheat,        VerdictStatus::kInfraError};
  const char* names[] = {"ok",      "format_error", "compile_error", "runtime_error",
                         "timeout", "incorrect",    "cheat",         "infra_error"};
  for (int i = 0; i < 8; ++i) {
    EXPECT_STREQ(StatusName(all[i]), names[i]);
    VerdictStatus s = VerdictStatus::kOk;
    ASSERT_TRUE(StatusFromName(names[i], &s));
    EXPECT_EQ(s, all[i]);
  }
  VerdictStatus s;
  EXPECT_FALSE(StatusFromName("OK", &s));
  EXPECT_FALSE(StatusFromName("", &s));
}

TEST(VerdictJsonTest, SchemaFields) {
  json j = ToJson(FullVerdict());
  EXPECT_EQ(j["schema"], kVerdictSchema);
  EXPECT_EQ(j["problem"]["id"], "level1/19_ReLU");
  EXPECT_EQ(j["problem"]["hash"], "p123");
  EXPECT_EQ(j["candidate"]["hash"], "c456");
  EXPECT_EQ(j["candidate"]["format"], "kernelbench");
  EXPECT_EQ(j["backend"], "cuda");
  EXPECT_EQ(j["device"], "NVIDIA H200");
  EXPECT_EQ(j["status"], "ok");
  ASSERT_EQ(j["stages"].size(), 2u);
  EXPECT_EQ(j["stages"][1]["name"], "build");
  EXPECT_EQ(j["stages"][1]["ok"], true);
  EXPECT_DOUBLE_EQ(j["stages"][1]["ms"].get<double>(), 1200.0);
  EXPECT_EQ(j["stages"][1]["cache_hit"], false);  // detail merged into the stage
  EXPECT_EQ(j["correct_trials"], json({{"passed", 5}, {"total", 5}}));
  EXPECT_DOUBLE_EQ(j["timing"]["candidate_ms"]["median"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(j["timing"]["candidate_ms"]["p10"].get<double>(), 0.09);
  EXPECT_DOUBLE_EQ(j["timing"]["candidate_ms"]["p90"].get<double>(), 0.12);
  EXPECT_EQ(j["timing"]["candidate_ms"]["n"], 100);
  EXPECT_DOUBLE_EQ(j["timing"]["eager_ms"].get<double>(), 0.2);
  EXPECT_DOUBLE_EQ(j["timing"]["compile_ms"].get<double>(), 0.15);
  EXPECT_FALSE(j["timing"].contains("compile_unavailable"));
  EXPECT_DOUBLE_EQ(j["speedup"]["vs_eager"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["speedup"]["vs_compile"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j["reward"].get<double>(), 1.5);
  ASSERT_EQ(j["diagnostics"].size(), 1u);
  EXPECT_EQ(j["diagnostics"][0]["code"], "roofline");
  EXPECT_EQ(j["diagnostics"][0]["severity"], "info");
  EXPECT_EQ(j["feedback"], "Correct.");
}

TEST(VerdictJsonTest, UnknownValuesAreNull) {
  Verdict v;  // infra_error, nothing measured
  v.compile_unavailable = "torch.compile needs triton";
  json j = ToJson(v);
  EXPECT_EQ(j["status"], "infra_error");
  EXPECT_TRUE(j["timing"]["candidate_ms"].is_null());
  EXPECT_TRUE(j["timing"]["eager_ms"].is_null());
  EXPECT_TRUE(j["timing"]["compile_ms"].is_null());
  EXPECT_EQ(j["timing"]["compile_unavailable"], "torch.compile needs triton");
  EXPECT_TRUE(j["speedup"]["vs_eager"].is_null());
  EXPECT_TRUE(j["speedup"]["vs_compile"].is_null());
  EXPECT_TRUE(j.contains("reward"));
  EXPECT_TRUE(j["reward"].is_null());
  EXPECT_TRUE(j["stages"].is_array());
  EXPECT_TRUE(j["diagnostics"].is_array());
}

TEST(VerdictJsonTest, StageKeysWinOverDetail) {
  Verdict v;
  v.stages = {{"build", true, 3, {{"ms", 99}, {"name", "x"}, {"log", "..."}}}};
  json s = ToJson(v)["stages"][0];
  EXPECT_EQ(s["name"], "build");
  EXPECT_DOUBLE_EQ(s["ms"].get<double>(), 3);
  EXPECT_EQ(s["log"], "...");
}

void ExpectSame(const Verdict& a, const Verdict& b) { EXPECT_EQ(ToJson(a), ToJson(b)); }

TEST(VerdictJsonTest, RoundTripFull) {
  Verdict v = FullVerdict();
  Verdict back;
  std::string error;
  ASSERT_TRUE(VerdictFromJson(ToJson(v), &back, &error)) << error;
  ExpectSame(v, back);
  EXPECT_EQ(back.status, VerdictStatus::kOk);
  ASSERT_TRUE(back.candidate_ms.has_value());
  EXPECT_EQ(back.candidate_ms->n, 100);
  EXPECT_EQ(back.stages[1].detail, json({{"cache_hit", false}}));
  EXPECT_EQ(back.stages[0].detail, json::object());
  EXPECT_EQ(back.diagnostics[0].severity, Severity::kInfo);
}

TEST(VerdictJsonTest, RoundTripThroughTextWithNulls) {
  Verdict v;
  v.status = VerdictStatus::kCompileError;
  v.compile_unavailable = "not installed";
  v.reward = -1;
  Verdict back;
  std::string error;
  ASSERT_TRUE(VerdictFromJson(json::parse(ToJson(v).dump()), &back, &error)) << error;
  ExpectSame(v, back);
  EXPECT_FALSE(back.candidate_ms.has_value());
  EXPECT_FALSE(back.eager_ms.has_value());
  EXPECT_FALSE(back.speedup_vs_compile.has_value());
  EXPECT_EQ(back.compile_unavailable, "not installed");
}

TEST(VerdictJsonTest, RejectsMalformed) {
  std::string error;
  Verdict v;
  EXPECT_FALSE(VerdictFromJson(json::array(), &v, &error));
  EXPECT_FALSE(error.empty());

  json j = ToJson(FullVerdict());
  j["status"] = "great";
  EXPECT_FALSE(VerdictFromJson(j, &v, &error));
  EXPECT_NE(error.find("status"), std::string::npos);

  j = ToJson(FullVerdict());
  j["schema"] = kVerdictSchema + 1;
  EXPECT_FALSE(VerdictFromJson(j, &v, &error));
  EXPECT_NE(error.find("schema"), std::string::npos);

  j = ToJson(FullVerdict());
  j["correct_trials"]["passed"] = "five";
  EXPECT_FALSE(VerdictFromJson(j, &v, &error));
  EXPECT_NE(error.find("passed"), std::string::npos);

  j = ToJson(FullVerdict());
  j.erase("stages");
  EXPECT_FALSE(VerdictFromJson(j, &v, &error));

  j = ToJson(FullVerdict());
  j["diagnostics"][0]["line"] = "twelve";
  EXPECT_FALSE(VerdictFromJson(j, &v, &error));

  j = ToJson(FullVerdict());
  j["speedup"]["vs_eager"] = "fast";
  EXPECT_FALSE(VerdictFromJson(j, &v, &error));
  // The output is untouched on failure.
  EXPECT_EQ(v.problem_id, "");
}

}  // namespace
}  // namespace kf
