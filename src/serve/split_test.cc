#include "serve/split.h"

#include <gtest/gtest.h>

namespace kf::serve {
namespace {

// A previous attempt that a repair prompt carries: a complete, correct-looking program.
const std::string kEarlierProgram =
    "```python\nimport torch\nfrom torch.utils.cpp_extension import load_inline\n"
    "relu = load_inline(name='r', cpp_sources='...', functions=['relu'])\n"
    "class ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return relu.relu(x)\n"
    "```";
const std::string kProblem = "Write a faster ReLU for this model:\nclass Model(nn.Module): ...";
const std::string kFix = "Your program was slower than PyTorch. Make it faster.";
const std::string kAnswer =
    "Here it is.\n```python\nclass ModelNew(torch.nn.Module):\n    pass  # new\n```";

// Qwen2.5's chat template (apply_chat_template, add_generation_prompt=True) for a repair
// conversation: the problem, the earlier answer, the feedback, then the new assistant turn.
std::string QwenRepairPrompt() {
  return "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
         "assistant.<|im_end|>\n<|im_start|>user\n" +
         kProblem + "<|im_end|>\n<|im_start|>assistant\n" + kEarlierProgram +
         "<|im_end|>\n<|im_start|>user\n" + kFix + "<|im_end|>\n<|im_start|>assistant\n";
}

// Llama 3.1's template for the same conversation.
std::string LlamaRepairPrompt() {
  return "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge "
         "Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|><|start_header_id|>user"
         "<|end_header_id|>\n\n" +
         kProblem + "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n" +
         kEarlierProgram + "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n" + kFix +
         "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n";
}

// OpenRLHF decodes with special tokens kept: left padding before the prompt, the end of turn
// and right padding after the response.
std::string Padded(const std::string& pad, const std::string& prompt, const std::string& resp,
                   const std::string& eot) {
  return pad + pad + prompt + resp + eot + pad;
}

TEST(SplitQuery, EndOfTextBeforeARepairPromptGetsTheResponseNotTheEarlierProgram) {
  // The case: the query does not start with the prompt, the prompt carries a program.
  const std::string prompt = QwenRepairPrompt();
  const std::string query = "<|endoftext|>" + prompt + "I give up, sorry.";
  Span s = SplitQuery(query, prompt);
  ASSERT_EQ(s.method, Span::Method::kAfterPrompt) << s.why;
  EXPECT_EQ(s.Of(query), "I give up, sorry.");
  EXPECT_EQ(s.offset_bytes, std::string("<|endoftext|>").size() + prompt.size());
  EXPECT_EQ(s.Of(query).find("ModelNew"), std::string_view::npos);
}

TEST(SplitQuery, QwenTemplateWithThePrompt) {
  const std::string prompt = QwenRepairPrompt();
  const std::string query = Padded("<|endoftext|>", prompt, kAnswer, "<|im_end|>");
  Span s = SplitQuery(query, prompt);
  ASSERT_EQ(s.method, Span::Method::kAfterPrompt) << s.why;
  // The answer ends at the end of the turn: the fence closed right before <|im_end|> closes.
  EXPECT_EQ(s.Of(query), kAnswer);
  EXPECT_EQ(s.end_marker, "<|im_end|>");
}

TEST(SplitQuery, QwenTemplateWithoutThePromptUsesTheLastAssistantTurn) {
  const std::string query = Padded("<|endoftext|>", QwenRepairPrompt(), kAnswer, "<|im_end|>");
  for (const std::string& prompt : {std::string(), std::string("not in the query")}) {
    Span s = SplitQuery(query, prompt);
    ASSERT_EQ(s.method, Span::Method::kAfterMarker) << s.why;
    EXPECT_EQ(s.marker, "<|im_start|>assistant");
    EXPECT_EQ(s.Of(query), "\n" + kAnswer);
  }
}

TEST(SplitQuery, LlamaTemplateWithAndWithoutThePrompt) {
  const std::string prompt = LlamaRepairPrompt();
  const std::string query = prompt + "I give up, sorry.<|eot_id|><|finetune_right_pad_id|>";
  Span a = SplitQuery(query, prompt);
  ASSERT_EQ(a.method, Span::Method::kAfterPrompt);
  EXPECT_EQ(a.Of(query), "I give up, sorry.");
  EXPECT_EQ(a.end_marker, "<|eot_id|>");
  // The trainer sent the prompt without <|begin_of_text|>: still found inside the query.
  Span b = SplitQuery(query, prompt.substr(std::string("<|begin_of_text|>").size()));
  EXPECT_EQ(b.method, Span::Method::kAfterPrompt);
  EXPECT_EQ(b.Of(query), a.Of(query));
  Span c = SplitQuery(query, "");
  ASSERT_EQ(c.method, Span::Method::kAfterMarker) << c.why;
  EXPECT_EQ(c.marker, "<|start_header_id|>assistant<|end_header_id|>");
  EXPECT_EQ(c.Of(query), "\n\nI give up, sorry.");
}

TEST(SplitQuery, OtherTemplatesFamilies) {
  struct Case {
    std::string name, prompt;
  } cases[] = {
      {"mistral",
       "<s>[INST] " + kProblem + " [/INST]" + kEarlierProgram + "</s>[INST] " + kFix + " [/INST]"},
      {"deepseek",
       "<\xEF\xBD\x9C"
       "begin\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C><\xEF\xBD\x9C"
       "User\xEF\xBD\x9C>" +
           kProblem +
           "<\xEF\xBD\x9C"
           "Assistant\xEF\xBD\x9C>" +
           kEarlierProgram +
           "<\xEF\xBD\x9C"
           "end\xE2\x96\x81of\xE2\x96\x81sentence"
           "\xEF\xBD\x9C><\xEF\xBD\x9C"
           "User\xEF\xBD\x9C>" +
           kFix +
           "<\xEF\xBD\x9C"
           "Assistant\xEF\xBD\x9C>"},
      {"gemma", "<bos><start_of_turn>user\n" + kProblem + "<end_of_turn>\n<start_of_turn>model\n" +
                    kEarlierProgram + "<end_of_turn>\n<start_of_turn>user\n" + kFix +
                    "<end_of_turn>\n<start_of_turn>model\n"},
      {"phi3", "<|user|>\n" + kProblem + "<|end|>\n<|assistant|>\n" + kEarlierProgram +
                   "<|end|>\n<|user|>\n" + kFix + "<|end|>\n<|assistant|>\n"},
  };
  for (const auto& c : cases) {
    const std::string query = c.prompt + "I give up.";
    Span s = SplitQuery(query, "");
    ASSERT_EQ(s.method, Span::Method::kAfterMarker) << c.name << ": " << s.why;
    EXPECT_EQ(s.offset_bytes + s.length_bytes, query.size()) << c.name;
    EXPECT_EQ(s.Of(query).find("ModelNew"), std::string_view::npos) << c.name;
    EXPECT_NE(s.Of(query).find("I give up."), std::string_view::npos) << c.name;
  }
}

TEST(SplitQuery, TheAnswerEndsAtTheFirstEndOfTurn) {
  // Padding and turns the model was not asked for are not the answer.
  const std::string prompt = "<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n";
  const std::string query = prompt + "done</s>" + kEarlierProgram;
  Span s = SplitQuery(query, prompt);
  EXPECT_EQ(s.Of(query), "done");
  EXPECT_EQ(s.end_marker, "</s>");
  const std::string deepseek_end =
      "<\xEF\xBD\x9C"
      "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>";
  Span d = SplitResponse("ok" + deepseek_end + kEarlierProgram, "");
  EXPECT_EQ(d.Of("ok" + deepseek_end + kEarlierProgram), "ok");
}

TEST(SplitQuery, AResponseThatEchoesThePromptGainsNothingFromTheEcho) {
  // A policy could learn to repeat the repair prompt (and with it the earlier program): the
  // last occurrence of the prompt is taken, so the echo is cut off with the prompt.
  const std::string prompt = QwenRepairPrompt();
  const std::string query = "<|endoftext|>" + prompt + "Repeating: " + prompt + "done";
  Span s = SplitQuery(query, prompt);
  ASSERT_EQ(s.method, Span::Method::kAfterPrompt);
  EXPECT_EQ(s.Of(query), "done");
}

TEST(SplitQuery, AnAssistantMarkerInsideTheResponseMovesTheStartPastIt) {
  const std::string prompt = "Write ModelNew.\n";
  const std::string query = prompt + kEarlierProgram + "<|im_start|>assistant\nI give up.";
  Span s = SplitQuery(query, prompt);
  EXPECT_EQ(s.method, Span::Method::kAfterPrompt);
  EXPECT_EQ(s.marker, "<|im_start|>assistant");
  EXPECT_EQ(s.Of(query), "\nI give up.");
}

TEST(SplitQuery, NothingIsEvaluatedWhenTheResponseCannotBeTold) {
  // No template, and the prompt is not in the query (or not sent): the whole query could be
  // prompt.
  const std::string plain = kProblem + "\n" + kEarlierProgram + "\n" + kFix + "\nI give up.";
  for (const std::string& prompt : {std::string(), std::string("another prompt")}) {
    Span s = SplitQuery(plain, prompt);
    EXPECT_EQ(s.method, Span::Method::kNone);
    EXPECT_EQ(s.length_bytes, 0u);
    EXPECT_NE(s.why.find("no assistant-turn marker"), std::string::npos) << s.why;
  }
  // The template was applied without the generation prompt: the last assistant turn is the
  // earlier program, followed by a user turn.
  const std::string no_gen = "<|im_start|>user\n" + kProblem +
                             "<|im_end|>\n<|im_start|>assistant\n" + kEarlierProgram +
                             "<|im_end|>\n<|im_start|>user\n" + kFix + "<|im_end|>\nI give up.";
  Span s = SplitQuery(no_gen, "");
  EXPECT_EQ(s.method, Span::Method::kNone);
  EXPECT_NE(s.why.find("'<|im_start|>' turn follows"), std::string::npos) << s.why;
}

TEST(SplitQuery, ReasoningIsSkipped) {
  // DeepSeek-R1 / Qwen3 style: the template opens <think> for the model.
  const std::string prompt = "<|im_start|>user\n" + kProblem +
                             "<|im_end|>\n<|im_start|>assistant\n"
                             "<think>\n";
  const std::string draft = "Maybe this: " + kEarlierProgram;
  const std::string query = prompt + draft + "\n</think>\n\nI give up.";
  Span s = SplitQuery(query, prompt);
  ASSERT_EQ(s.method, Span::Method::kAfterPrompt);
  EXPECT_EQ(s.Of(query), "\n\nI give up.");
  EXPECT_EQ(s.reasoning_bytes, draft.size() + std::string("\n</think>").size());
  // The same without the prompt (after the marker; the response opens its own block).
  const std::string q2 = "<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n<think>" + draft +
                         "</think>" + kAnswer;
  Span t = SplitQuery(q2, "");
  ASSERT_EQ(t.method, Span::Method::kAfterMarker);
  EXPECT_EQ(t.Of(q2), kAnswer);
  // Reasoning that never ended (the length limit): the draft is no answer.
  Span u = SplitQuery(prompt + draft, prompt);
  EXPECT_EQ(u.method, Span::Method::kNone);
  EXPECT_NE(u.why.find("never ended"), std::string::npos);
  Span v = SplitQuery("<|im_start|>assistant\n  <think>" + draft, "");
  EXPECT_EQ(v.method, Span::Method::kNone);
  // A prompt that only mentions <think> in prose does not open a block.
  const std::string prose = "Reason inside <think> tags if you like.\n";
  Span w = SplitQuery(prose + kAnswer, prose);
  EXPECT_EQ(w.method, Span::Method::kAfterPrompt);
  EXPECT_EQ(w.Of(prose + kAnswer), kAnswer);
}

TEST(SplitResponse, SlimeResponseIsTheAnswerUnlessItEchoesThePrompt) {
  const std::string prompt = QwenRepairPrompt();
  Span a = SplitResponse(kAnswer, prompt);
  EXPECT_EQ(a.method, Span::Method::kWholeResponse);
  EXPECT_EQ(a.Of(kAnswer), kAnswer);
  const std::string echo = prompt + "I give up.";
  Span b = SplitResponse(echo, prompt);
  EXPECT_EQ(b.method, Span::Method::kAfterPrompt);
  EXPECT_EQ(b.Of(echo), "I give up.");
  // A whole conversation sent as the response: the last assistant turn.
  const std::string conv = QwenRepairPrompt() + "I give up.";
  Span c = SplitResponse(conv, "");
  EXPECT_EQ(c.method, Span::Method::kAfterMarker);
  EXPECT_EQ(c.Of(conv), "\nI give up.");
  // The prompt opened a think block: the answer follows its end.
  const std::string think_prompt = "<|im_start|>assistant\n<think>\n";
  const std::string r = "draft " + kEarlierProgram + "</think>done";
  Span d = SplitResponse(r, think_prompt);
  EXPECT_EQ(d.Of(r), "done");
  EXPECT_EQ(SplitResponse("still thinking " + kEarlierProgram, think_prompt).method,
            Span::Method::kNone);
}

TEST(SpanJson, SaysHowAndWhere) {
  const std::string prompt = "P";
  Span s = SplitQuery("xxP<think>a</think>ans", prompt);
  auto j = SpanJson(s);
  EXPECT_EQ(j["method"], "after_prompt");
  EXPECT_EQ(j["offset_bytes"], 19);
  EXPECT_EQ(j["length_bytes"], 3);
  EXPECT_EQ(j["reasoning_bytes"], 16);
  EXPECT_FALSE(j.contains("why"));
  auto n = SpanJson(SplitQuery("plain", ""));
  EXPECT_EQ(n["method"], "none");
  EXPECT_TRUE(n.contains("why"));
}

}  // namespace
}  // namespace kf::serve
