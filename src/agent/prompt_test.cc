#include <gtest/gtest.h>

#include <fstream>

#include "agent/agent.h"

namespace kf::agent {
namespace {

TEST(Substitute, ReplacesKnownKeepsUnknownAndDoesNotRecurse) {
  std::vector<std::string> unknown;
  std::string out =
      Substitute("a {{x}} b {{ y }} c {{nope}} d {{x}}", {{"x", "1"}, {"y", "{{x}}"}}, &unknown);
  EXPECT_EQ(out, "a 1 b {{x}} c {{nope}} d 1");
  EXPECT_EQ(unknown, std::vector<std::string>{"nope"});
  EXPECT_EQ(Substitute("unclosed {{x", {{"x", "1"}}), "unclosed {{x");
  EXPECT_EQ(Substitute("", {}), "");
}

TEST(LoadTemplates, TheShippedOnesLoadForBothBackends) {
  for (const char* backend : {"cpu", "cuda"}) {
    auto t = LoadTemplates(std::filesystem::path(KFORGE_SOURCE_DIR) / "prompts", backend);
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_NE(t->task.find("{{io_shapes}}"), std::string::npos);
    EXPECT_NE(t->repair.find("{{previous_candidate}}"), std::string::npos);
    EXPECT_NE(t->repair.find("{{feedback}}"), std::string::npos);
    EXPECT_NE(t->format.find("ModelNew"), std::string::npos);
  }
}

TEST(LoadTemplates, TritonHasItsOwnFormatAndSystemMessage) {
  const auto dir = std::filesystem::path(KFORGE_SOURCE_DIR) / "prompts";
  auto triton = LoadTemplates(dir, "triton");
  ASSERT_TRUE(triton.ok()) << triton.status().message();
  EXPECT_NE(triton->format.find("@triton.jit"), std::string::npos);
  EXPECT_NE(triton->format.find("kernel[grid]"), std::string::npos);
  EXPECT_NE(triton->system.find("Triton"), std::string::npos);
  EXPECT_EQ(triton->system.find("load_inline"), std::string::npos);
  // The load_inline formats keep the shared system message.
  auto cuda = LoadTemplates(dir, "cuda");
  ASSERT_TRUE(cuda.ok());
  EXPECT_NE(cuda->system.find("load_inline"), std::string::npos);
  EXPECT_EQ(triton->task, cuda->task);
}

TEST(LoadTemplates, RejectsTyposAndMissingFiles) {
  auto dir =
      std::filesystem::temp_directory_path() / ("kf_prompt_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
  };
  write("system.txt", "sys");
  write("task.txt", "solve {{problem_source}}");
  write("repair.txt", "fix");
  write("format_cpu.txt", "fmt");
  EXPECT_TRUE(LoadTemplates(dir, "cpu").ok());
  auto missing = LoadTemplates(dir, "cuda");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  write("task.txt", "solve {{problem_sorce}}");
  auto t = LoadTemplates(dir, "cpu");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("problem_sorce"), std::string::npos);
  std::filesystem::remove_all(dir);
}

PromptTemplates Small() {
  return {"system for {{backend}}",
          "solve {{problem_id}}:\n{{problem_source}}\n{{io_shapes}}{{output_format}}",
          "turn {{turn}} was {{status}}:\n{{previous_candidate}}\n{{feedback}}\n{{goal}}",
          "format for {{device}}"};
}

TEST(Prompts, FirstAndRepair) {
  ProblemContext c{"level1/relu", "class Model: ...", "input0: float32 [2]\n", "cpu", "Xeon"};
  auto first = FirstPrompt(Small(), c);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].role, "system");
  EXPECT_EQ(first[0].content, "system for cpu");
  EXPECT_EQ(first[1].content,
            "solve level1/relu:\nclass Model: ...\ninput0: float32 [2]\nformat for Xeon");

  Verdict v;
  v.status = VerdictStatus::kIncorrect;
  v.feedback = "max abs error 3.0 at [1]";
  auto repair = RepairPrompt(Small(), c, 2, "class ModelNew: pass", v, std::nullopt);
  ASSERT_EQ(repair.size(), 2u);
  EXPECT_NE(repair[1].content.find("solve level1/relu"), std::string::npos);
  EXPECT_NE(repair[1].content.find(
                "turn 2 was incorrect:\nclass ModelNew: pass\nmax abs error 3.0 at [1]\nFix"),
            std::string::npos)
      << repair[1].content;

  v.status = VerdictStatus::kOk;
  auto faster = RepairPrompt(Small(), c, 3, "x", v, 2.5);
  EXPECT_NE(faster[1].content.find("at least 2.5x"), std::string::npos) << faster[1].content;
}

TEST(DescribeShapes, ListsDtypeShapeStrideAndContiguity) {
  execute::ProblemInfo info;
  info.inputs = nlohmann::json::array(
      {{{"shape", {4, 8}}, {"dtype", "float32"}, {"stride", {8, 1}}, {"device", "cpu"}},
       {{"shape", {4, 8}}, {"dtype", "float16"}, {"stride", {1, 4}}, {"device", "cuda:0"}},
       {{"value", "3"}}});
  info.outputs = nlohmann::json::array(
      {{{"shape", {4}}, {"dtype", "float32"}, {"stride", {1}}, {"device", "cpu"}}});
  info.init_inputs = nlohmann::json::array({64, 0.5});
  std::string s = DescribeShapes(info);
  EXPECT_NE(s.find("input0: float32 tensor, shape [4, 8], stride [8, 1], contiguous, on cpu"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("input1: float16 tensor, shape [4, 8], stride [1, 4], not contiguous"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("input2: Python value 3"), std::string::npos) << s;
  EXPECT_NE(s.find("output0: float32 tensor, shape [4]"), std::string::npos) << s;
  EXPECT_NE(s.find("[64,0.5]"), std::string::npos) << s;
}

}  // namespace
}  // namespace kf::agent
