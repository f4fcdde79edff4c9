#include "serve/api.h"

#include <gtest/gtest.h>

namespace kf::serve {
namespace {
using nlohmann::json;

TEST(ParseItems, OneItemByProblemId) {
  auto r = ParseItems(json{{"problem", "level1/relu"}, {"candidate", "x"}}, ApiLimits{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].problem, "level1/relu");
  EXPECT_EQ((*r)[0].candidate, "x");
}

// The message of an item's fault; "" when it has none.
std::string FaultOf(const ItemRequest& item) { return item.fault ? item.fault->why.message() : ""; }

TEST(ParseItems, ABadItemIsRefusedAloneAndNamed) {
  json body = {{"items", {{{"problem", "a"}, {"candidate", "x"}}, {{"problem", "a"}}}}};
  auto r = ParseItems(body, ApiLimits{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_TRUE(Evaluates((*r)[0]));
  EXPECT_FALSE(Evaluates((*r)[1]));
  ASSERT_TRUE((*r)[1].fault);
  EXPECT_EQ((*r)[1].fault->kind, SampleFault::Kind::kRefused);
  EXPECT_EQ((*r)[1].fault->why.code(), Code::kInvalidArgument);
  EXPECT_NE(FaultOf((*r)[1]).find("items[1].candidate"), std::string::npos);
  // /v1/reward answers the good item; /v1/evaluations refuses the request for the bad one.
  EXPECT_TRUE(AllRefused(*r).ok());
  EXPECT_NE(AnyFault(*r).message().find("items[1].candidate"), std::string::npos);
}

TEST(ParseItems, WrongTypesAndBothProblemsAreRefused) {
  auto a = ParseItems(json{{"problem", 3}, {"candidate", "x"}}, ApiLimits{});
  ASSERT_TRUE(a.ok());
  EXPECT_NE(FaultOf((*a)[0]).find("'problem' must be a string"), std::string::npos);
  // The one item of a request refused: the request is (a 400 naming the field).
  EXPECT_NE(AllRefused(*a).message().find("'problem' must be a string"), std::string::npos);
  auto b =
      ParseItems(json{{"problem", "p"}, {"problem_source", "s"}, {"candidate", "x"}}, ApiLimits{});
  ASSERT_TRUE(b.ok());
  EXPECT_NE(FaultOf((*b)[0]).find("exactly one of"), std::string::npos);
  auto c = ParseItems(json{{"items", {5}}}, ApiLimits{});
  ASSERT_TRUE(c.ok());
  EXPECT_NE(FaultOf((*c)[0]).find("'items[0]' must be a JSON object"), std::string::npos);
  // The envelope stays the request's: not an object, `items` not a non-empty list.
  EXPECT_FALSE(ParseItems(json::array(), ApiLimits{}).ok());
  EXPECT_FALSE(ParseItems(json{{"items", json::array()}}, ApiLimits{}).ok());
  auto d = ParseItems(json{{"items", "x"}}, ApiLimits{});
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("'items' must be an array"), std::string::npos);
}

TEST(ParseItems, Limits) {
  ApiLimits lim;
  lim.max_items = 2;
  lim.max_candidate_bytes = 4;
  json item = {{"problem", "p"}, {"candidate", "x"}};
  EXPECT_FALSE(ParseItems(json{{"items", {item, item, item}}}, lim).ok());
  // A candidate over the limit is the model's fault: a format_error for that item alone.
  auto big = ParseItems(json{{"problem", "p"}, {"candidate", "12345"}}, lim);
  ASSERT_TRUE(big.ok());
  ASSERT_TRUE((*big)[0].fault);
  EXPECT_EQ((*big)[0].fault->kind, SampleFault::Kind::kTooLong);
  EXPECT_NE(FaultOf((*big)[0]).find("longer than 4 bytes"), std::string::npos);
  EXPECT_TRUE((*big)[0].candidate.empty());
  EXPECT_TRUE(AllRefused(*big).ok());
}

TEST(ItemResult, AnItemNotEvaluatedSaysWhyWithNoId) {
  ApiLimits lim;
  lim.max_candidate_bytes = 4;
  auto r = ParseItems(
      json{{"items", {{{"problem", "p"}, {"candidate", "12345"}}, {{"problem", "p"}}}}}, lim);
  ASSERT_TRUE(r.ok());
  queue::JobSpec job = queue::MakeJob("level1/relu", "class Model: pass", "", "cpu", "s");
  json too_long = ItemResultJson(job.id, Unevaluated(job, (*r)[0]), (*r)[0]);
  EXPECT_TRUE(too_long["id"].is_null());
  EXPECT_EQ(too_long["status"], "format_error");
  EXPECT_EQ(too_long["reward"], -1.0);
  EXPECT_EQ(too_long["verdict"]["diagnostics"][0]["code"], "answer_too_long");
  EXPECT_NE(too_long["error"].get<std::string>().find("items[0].candidate"), std::string::npos);
  json refused = ItemResultJson("", Unevaluated(queue::JobSpec{}, (*r)[1]), (*r)[1]);
  EXPECT_TRUE(refused["id"].is_null());
  EXPECT_EQ(refused["state"], "refused");
  EXPECT_TRUE(refused["reward"].is_null());
  EXPECT_FALSE(refused.contains("verdict"));
  EXPECT_NE(refused["error"].get<std::string>().find("items[1].candidate"), std::string::npos);
}

TEST(Labels, IdSourceOrObject) {
  ItemRequest a, b, c;
  ASSERT_TRUE(ItemFromLabel("level1/relu", "label", &a).ok());
  EXPECT_EQ(a.problem, "level1/relu");
  ASSERT_TRUE(ItemFromLabel("import torch\nclass Model(nn.Module): pass\n", "label", &b).ok());
  EXPECT_TRUE(b.problem.empty());
  EXPECT_FALSE(b.problem_source.empty());
  ASSERT_TRUE(ItemFromLabel(json{{"problem", "p"}}, "label", &c).ok());
  EXPECT_EQ(c.problem, "p");
  ItemRequest d;
  EXPECT_FALSE(ItemFromLabel(json(5), "labels[0]", &d).ok());
  EXPECT_FALSE(ItemFromLabel(json(""), "labels[0]", &d).ok());
}

TEST(OpenRlhf, StripsThePromptFromTheQuery) {
  json body = {{"query", {"PROMPT```python\ncode\n```"}},
               {"prompts", {"PROMPT"}},
               {"labels", {"level1/relu"}}};
  auto r = ParseOpenRlhf(body, ApiLimits{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)[0].candidate, "```python\ncode\n```");
  EXPECT_EQ((*r)[0].problem, "level1/relu");
  ASSERT_TRUE((*r)[0].span);
  EXPECT_EQ((*r)[0].span->offset_bytes, 6u);
}

// The case: a leading <|endoftext|> (OpenRLHF keeps special tokens) before a repair
// prompt that carries the earlier program; only the response may become the candidate.
TEST(OpenRlhf, ARepairPromptsProgramIsNeverTheCandidate) {
  const std::string earlier = "```python\nclass ModelNew(torch.nn.Module):\n    pass\n```";
  const std::string prompt =
      "<|im_start|>user\nWrite ModelNew.<|im_end|>\n<|im_start|>assistant\n" + earlier +
      "<|im_end|>\n<|im_start|>user\nFix it.<|im_end|>\n"
      "<|im_start|>assistant\n";
  json body = {{"query",
                {"<|endoftext|>" + prompt + "I give up, sorry.",
                 "<|endoftext|>" + prompt + "I give up, sorry."}},
               {"prompts", {prompt, ""}},
               {"labels", {"level1/relu", "level1/relu"}}};
  auto r = ParseOpenRlhf(body, ApiLimits{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const auto& item : *r) {
    EXPECT_EQ(item.candidate.find("ModelNew"), std::string::npos) << item.candidate;
    EXPECT_NE(item.candidate.find("I give up, sorry."), std::string::npos);
  }
  EXPECT_EQ((*r)[0].span->method, Span::Method::kAfterPrompt);
  EXPECT_EQ((*r)[1].span->method, Span::Method::kAfterMarker);
}

TEST(OpenRlhf, AnUnsplittableQueryIsAFormatErrorThatSaysWhy) {
  json body = {{"query", {"Write ModelNew.\n```python\nclass ModelNew: pass\n```"}},
               {"labels", {"level1/relu"}}};
  auto r = ParseOpenRlhf(body, ApiLimits{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const ItemRequest& item = (*r)[0];
  ASSERT_TRUE(item.span);
  EXPECT_FALSE(item.span->found());
  EXPECT_TRUE(item.candidate.empty());
  queue::JobSpec job =
      queue::MakeJob("level1/relu", "class Model: pass", item.candidate, "cpu", "s");
  queue::JobView v = NoAnswer(job, *item.span);
  ASSERT_EQ(v.state, queue::JobView::State::kDone);
  EXPECT_EQ(v.result->verdict.status, VerdictStatus::kFormatError);
  ASSERT_TRUE(RewardOf(v));
  EXPECT_EQ(*RewardOf(v), -1.0);
  ASSERT_EQ(v.result->verdict.diagnostics.size(), 1u);
  EXPECT_EQ(v.result->verdict.diagnostics[0].code, "no_answer");
  EXPECT_NE(v.result->verdict.diagnostics[0].message.find("no prompt was sent"), std::string::npos);
  json out = OpenRlhfResponse({v}, *r, 0.0);
  EXPECT_EQ(out["rewards"], json({-1.0}));
  EXPECT_EQ(out["extra_logs"]["split_failed"], json({1.0}));
  EXPECT_EQ(out["spans"][0]["method"], "none");
}

// The case: one 5 MB answer in a batch cost every reward of it (a 400). Now that sample
// alone is a format_error, a sample whose label or query is wrong is refused alone (no reward),
// and the others are evaluated.
TEST(OpenRlhf, OneBadSampleFailsOneSample) {
  const std::string prompt = "Write ModelNew.\n";
  const std::string good = prompt + "```python\nclass ModelNew: pass\n```";
  json body = {
      {"query", {good, prompt + std::string(5 << 20, 'x'), good, 7, good}},
      {"prompts", {prompt, prompt, prompt, prompt, 8}},
      {"labels", {"level1/relu", "level1/relu", json{{"id", 3}}, "level1/relu", "level1/relu"}}};
  auto r = ParseOpenRlhf(body, ApiLimits{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 5u);
  const auto& items = *r;
  EXPECT_TRUE(Evaluates(items[0]));
  EXPECT_NE(items[0].candidate.find("ModelNew"), std::string::npos);
  ASSERT_TRUE(items[1].fault);
  EXPECT_EQ(items[1].fault->kind, SampleFault::Kind::kTooLong);
  EXPECT_NE(FaultOf(items[1]).find("the answer in field 'query[1]' is 5242880 bytes"),
            std::string::npos);
  EXPECT_TRUE(items[1].candidate.empty());
  EXPECT_EQ(items[1].problem, "level1/relu");
  for (auto [i, field] : {std::pair{2, "labels[2]"}, {3, "query[3]"}, {4, "prompts[4]"}}) {
    ASSERT_TRUE(items[i].fault) << i;
    EXPECT_EQ(items[i].fault->kind, SampleFault::Kind::kRefused) << i;
    EXPECT_NE(FaultOf(items[i]).find(field), std::string::npos) << FaultOf(items[i]);
  }
  EXPECT_TRUE(AllRefused(items).ok());

  queue::JobView done;
  done.state = queue::JobView::State::kDone;
  done.result = queue::JobResult{};
  done.result->verdict.status = VerdictStatus::kOk;
  done.result->verdict.reward = 1.25;
  queue::JobSpec job = queue::MakeJob("level1/relu", "class Model: pass", "", "cpu", "s");
  queue::JobView too_long = Unevaluated(job, items[1]);
  ASSERT_TRUE(too_long.result);
  EXPECT_EQ(too_long.result->verdict.status, VerdictStatus::kFormatError);
  EXPECT_EQ(too_long.result->verdict.diagnostics[0].code, "answer_too_long");
  std::vector<queue::JobView> views = {done, too_long};
  for (size_t i = 2; i < items.size(); ++i)
    views.push_back(Unevaluated(queue::JobSpec{}, items[i]));
  json out = OpenRlhfResponse(views, items, -0.5);
  EXPECT_EQ(out["rewards"], json({1.25, -1.0, -0.5, -0.5, -0.5}));
  EXPECT_EQ(out["extra_logs"]["no_reward"], json({0.0, 0.0, 1.0, 1.0, 1.0}));
  EXPECT_EQ(out["extra_logs"]["refused"], json({0.0, 0.0, 1.0, 1.0, 1.0}));
  EXPECT_EQ(out["extra_logs"]["answer_too_long"], json({0.0, 1.0, 0.0, 0.0, 0.0}));
  EXPECT_EQ(out["extra_logs"]["split_failed"], json({0.0, 0.0, 0.0, 0.0, 0.0}));
  ASSERT_EQ(out["errors"].size(), 5u);
  EXPECT_TRUE(out["errors"][0].is_null());
  EXPECT_NE(out["errors"][1].get<std::string>().find("query[1]"), std::string::npos);
  EXPECT_NE(out["errors"][2].get<std::string>().find("labels[2]"), std::string::npos);
}

TEST(OpenRlhf, ABatchWithNothingToEvaluateIsRefusedWhole) {
  json body = {{"query", {5, 6}}, {"labels", {"level1/relu", "level1/relu"}}};
  auto r = ParseOpenRlhf(body, ApiLimits{});
  ASSERT_TRUE(r.ok());
  Status s = AllRefused(*r);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("field 'query[0]' must be a string"), std::string::npos);
  // An over-long answer is evaluated (as a format_error), so its batch is answered.
  ApiLimits lim;
  lim.max_candidate_bytes = 2;
  auto t =
      ParseOpenRlhf(json{{"query", {"P long answer"}}, {"prompts", {"P"}}, {"labels", {"p"}}}, lim);
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(AllRefused(*t).ok());
  EXPECT_FALSE(Evaluates((*t)[0]));
}

TEST(OpenRlhf, LengthsMustAgree) {
  auto r = ParseOpenRlhf(json{{"query", {"a", "b"}}, {"labels", {"p"}}}, ApiLimits{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'labels'"), std::string::npos);
  EXPECT_FALSE(ParseOpenRlhf(json{{"labels", {"p"}}}, ApiLimits{}).ok());
}

TEST(OpenRlhf, ResponseUsesMissingRewardWhereThereIsNone) {
  queue::JobView done;
  done.state = queue::JobView::State::kDone;
  done.result = queue::JobResult{};
  done.result->verdict.status = VerdictStatus::kOk;
  done.result->verdict.reward = 1.25;
  done.result->verdict.speedup_vs_eager = 1.5;
  queue::JobView pending;
  pending.state = queue::JobView::State::kQueued;
  std::vector<ItemRequest> items(2);
  items[0].span = SplitQuery("P answer", "P");
  items[1].span = SplitQuery("<|im_start|>assistant\nanswer", "");
  json out = OpenRlhfResponse({done, pending}, items, -0.5);
  EXPECT_EQ(out["rewards"], json({1.25, -0.5}));
  EXPECT_EQ(out["scores"], out["rewards"]);
  EXPECT_EQ(out["extra_logs"]["correct"], json({1.0, 0.0}));
  EXPECT_EQ(out["extra_logs"]["no_reward"], json({0.0, 1.0}));
  EXPECT_EQ(out["extra_logs"]["split_after_prompt"], json({1.0, 0.0}));
  EXPECT_EQ(out["extra_logs"]["split_after_marker"], json({0.0, 1.0}));
  EXPECT_EQ(out["extra_logs"]["split_failed"], json({0.0, 0.0}));
  EXPECT_EQ(out["extra_logs"]["answer_offset_bytes"], json({1.0, 21.0}));
  EXPECT_EQ(out["extra_logs"]["answer_bytes"], json({7.0, 7.0}));
  EXPECT_EQ(out["spans"][1]["marker"], "<|im_start|>assistant");
}

TEST(View, OneStateVocabularyAndALostJobCarriesItsInfraError) {
  using State = queue::JobView::State;
  for (auto [st, name] : {std::pair{State::kQueued, "queued"},
                          {State::kRunning, "running"},
                          {State::kDone, "done"},
                          {State::kLost, "lost"}}) {
    queue::JobView v;
    v.state = st;
    EXPECT_EQ(ViewJson("abc", v)["state"], name);
  }
  queue::JobView lost;
  lost.state = State::kLost;
  lost.result = queue::InfraResult(queue::JobIdentity{"level1/relu", "ph", "ch", "cpu"},
                                   "the job's record vanished", "kforge serve", 0);
  json j = RewardJson("abc", lost);
  EXPECT_EQ(j["state"], "lost");
  EXPECT_EQ(j["status"], "infra_error");
  EXPECT_TRUE(j["reward"].is_null());
  EXPECT_EQ(OpenRlhfResponse({lost}, {ItemRequest{}}, -0.5)["extra_logs"]["no_reward"],
            json({1.0}));
}

TEST(Slime, NeedsLabelAndResponse) {
  auto ok =
      ParseSlime(json{{"prompt", "p"}, {"response", "r"}, {"label", "level1/relu"}}, ApiLimits{});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->candidate, "r");
  ASSERT_TRUE(ok->span);
  EXPECT_EQ(ok->span->method, Span::Method::kWholeResponse);
  // A response that echoes its prompt: the echo is not the answer.
  auto echo =
      ParseSlime(json{{"prompt", "Fix ModelNew"}, {"response", "Fix ModelNew ok"}, {"label", "p"}},
                 ApiLimits{});
  ASSERT_TRUE(echo.ok());
  EXPECT_EQ(echo->candidate, " ok");
  EXPECT_FALSE(
      ParseSlime(json{{"prompt", 3}, {"response", "r"}, {"label", "p"}}, ApiLimits{}).ok());
  auto no_label = ParseSlime(json{{"response", "r"}}, ApiLimits{});
  ASSERT_FALSE(no_label.ok());
  EXPECT_NE(no_label.status().message().find("'label'"), std::string::npos);
  EXPECT_FALSE(ParseSlime(json{{"label", "x"}}, ApiLimits{}).ok());
}

TEST(Seconds, OnlyFiniteNonNegativeNumbers) {
  auto ok = ParseSeconds("2.5", "wait");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 2.5);
  for (const char* bad : {"nan", "inf", "-inf", "infinity", "abc", "", "-1", "1e999", "5s"}) {
    auto r = ParseSeconds(bad, "timeout_s");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("'timeout_s'"), std::string::npos) << bad;
  }
  auto none = SecondsField(json{{"x", 1}}, "timeout_s");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(*none);
  auto b = SecondsField(json{{"timeout_s", 3}}, "timeout_s");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(**b, 3.0);
  for (const json& bad : {json("abc"), json(-2), json(true), json::array()}) {
    auto r = SecondsField(json{{"timeout_s", bad}}, "timeout_s");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("field 'timeout_s'"), std::string::npos);
  }
}

TEST(Dump, SurvivesInvalidUtf8) {
  json j = {{"x", std::string("\xff\xfe ok")}};
  EXPECT_NE(Dump(j).find("ok"), std::string::npos);
}

}  // namespace
}  // namespace kf::serve
