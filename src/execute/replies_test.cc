// What replies mean, on synthetic replies: no judge, no candidate process.
#include "execute/replies.h"

#include <gtest/gtest.h>

#include "common/rules.h"

namespace kf::execute {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

TEST(Replies, EachKindOfRefusalHasItsOutcome) {
  struct Case {
    json reply;
    bool build_failed;
    Outcome outcome;
    std::string code;
  };
  const Case cases[] = {
      {{{"kind", "build_failed"}, {"message", "nvcc said no"}},
       false,
       Outcome::kCompileError,
       "compile_error"},
      // A load_inline build that failed before makes any later refusal a compile error.
      {{{"kind", "exception"}, {"message", "no module"}},
       true,
       Outcome::kCompileError,
       "compile_error"},
      {{{"kind", "internal"}, {"message", "x"}}, true, Outcome::kCompileError, "compile_error"},
      {{{"kind", "syntax_error"}, {"line", 3}, {"col", 7}},
       false,
       Outcome::kFormatError,
       "syntax_error"},
      {{{"kind", "no_model_new"}}, false, Outcome::kFormatError, "no_model_new"},
      {{{"kind", "cheat"}, {"rule", "H05"}}, false, Outcome::kCheat, "H05"},
      {{{"kind", "cheat"}}, false, Outcome::kCheat, "cheat"},
      {{{"kind", "wrong_output"}, {"rule", "H14"}}, false, Outcome::kCheat, "H14"},
      {{{"kind", "wrong_output"}}, false, Outcome::kIncorrect, "wrong_output"},
      {{{"kind", "internal"}, {"message", "judge lost"}}, false, Outcome::kInfraError, "infra"},
      {{{"kind", "cuda_error"}, {"message", "illegal address"}},
       false,
       Outcome::kRuntimeError,
       "cuda_error"},
      {json::object(), false, Outcome::kRuntimeError, "exception"},
  };
  for (const auto& c : cases) {
    Failure f = Refusal("load", "loading", c.reply, c.build_failed);
    EXPECT_EQ(f.outcome, c.outcome) << c.reply.dump();
    EXPECT_EQ(f.diagnostic.code, c.code) << c.reply.dump();
  }
}

TEST(Replies, ARefusalKeepsWhereAndWhy) {
  Failure f = Refusal("correctness", "correctness trial 2",
                      {{"kind", "exception"},
                       {"message", "ValueError: bad"},
                       {"line", 12},
                       {"traceback", "Traceback ..."}},
                      false);
  EXPECT_EQ(f.diagnostic.stage, "correctness");
  EXPECT_EQ(f.diagnostic.message, "correctness trial 2 raised ValueError: bad");
  EXPECT_EQ(f.diagnostic.line, 12);
  EXPECT_EQ(f.diagnostic.excerpt, "Traceback ...");
  EXPECT_NE(f.diagnostic.hint.find("traceback"), std::string::npos);

  f = Refusal("load", "loading", {{"kind", "syntax_error"}, {"line", 3}, {"col", 7}}, false);
  EXPECT_EQ(f.diagnostic.line, 3);
  EXPECT_EQ(f.diagnostic.col, 7);

  f = Refusal("load", "loading", {{"kind", "cheat"}, {"rule", "H05"}, {"message", "m"}}, false);
  EXPECT_EQ(f.diagnostic.hint, RuleHint("H05"));  // the catalog's hint, not a copy
  EXPECT_EQ(f.diagnostic.message, "m");

  f = Refusal("load", "loading", {{"kind", "internal"}, {"message", "judge lost"}}, false);
  EXPECT_EQ(f.diagnostic.stage, "execute");  // the runner's failure, not the candidate's
  EXPECT_EQ(f.diagnostic.message, "judge lost");
}

TEST(Replies, TimeoutsAndCrashesSayWhatHappened) {
  Failure t = TimedOut("timing", "the timed calls", milliseconds(120000));
  EXPECT_EQ(t.outcome, Outcome::kTimeout);
  EXPECT_EQ(t.diagnostic.code, "timeout");
  EXPECT_EQ(t.diagnostic.message,
            "the candidate did not finish the timed calls within 120 s and was killed");

  const std::string tail =
      "Traceback:\n  File \"candidate.py\", line 4, in f\n  File \"candidate.py\", line 9, in "
      "g\nFatal Python error: Segmentation fault\n";
  Failure c = Crashed("correctness", "correctness trial 1",
                      "it was killed by signal 11 (Segmentation fault)", tail);
  EXPECT_EQ(c.outcome, Outcome::kRuntimeError);
  EXPECT_EQ(c.diagnostic.code, "crash");
  EXPECT_EQ(c.diagnostic.line, 9);  // the last candidate line: where it was
  EXPECT_EQ(c.diagnostic.excerpt, tail);
  EXPECT_EQ(c.diagnostic.message,
            "the candidate process died during correctness trial 1: it was killed by signal 11 "
            "(Segmentation fault)");
}

TEST(Replies, CandidateLineIsTheLastOne) {
  EXPECT_EQ(LastCandidateLine(""), 0);
  EXPECT_EQ(LastCandidateLine("File \"other.py\", line 3"), 0);
  EXPECT_EQ(LastCandidateLine("File \"candidate.py\", line 3\nFile \"candidate.py\", line 17"), 17);
}

TEST(Replies, TrialRecordSumsTheOutputs) {
  json check = {{"pass", false},
                {"outputs",
                 {{{"output", 0}, {"pass", true}, {"max_abs_err", 1e-6}, {"elements", 10}},
                  {{"output", 1},
                   {"pass", false},
                   {"max_abs_err", 0.5},
                   {"max_rel_err", 2.0},
                   {"bad_elements", 3},
                   {"elements", 20},
                   {"first_bad_index", {1, 2}},
                   {"first_bad_got", 1.5},
                   {"first_bad_expected", 1.0}}}}};
  json t = TrialRecord("seed 1", check);
  EXPECT_EQ(t["label"], "seed 1");
  EXPECT_EQ(t["pass"], false);
  EXPECT_EQ(t["output"], 1);  // the first wrong output
  EXPECT_EQ(t["max_abs_err"], 0.5);
  EXPECT_EQ(t["max_rel_err"], 2.0);
  EXPECT_EQ(t["bad_elements"], 3);
  EXPECT_EQ(t["elements"], 30);
  EXPECT_EQ(t["first_bad_index"], json({1, 2}));
  // A check that names a rule (H09, H06) keeps it; no outputs, no sums.
  json r = TrialRecord("seed 1 again", {{"pass", false}, {"rule", "H06"}});
  EXPECT_EQ(r["rule"], "H06");
  EXPECT_FALSE(r.contains("elements"));
  EXPECT_FALSE(r.contains("max_abs_err"));
}

TEST(Replies, MismatchAndShapeSentences) {
  json o = {{"output", 0},          {"bad_elements", 2},          {"elements", 8},
            {"max_abs_err", 0.25},  {"max_rel_err", 0.5},         {"first_bad_index", {3}},
            {"first_bad_got", 1.0}, {"first_bad_expected", 0.75}, {"atol", 1e-4},
            {"rtol", 1e-4}};
  EXPECT_EQ(DescribeMismatch(o),
            "output 0: 2 of 8 elements differ; max abs error 0.25, max rel error 0.5; first at "
            "[3]: got 1, expected 0.75 (atol 0.0001, rtol 0.0001)");
  o["nonfinite_where_ref_finite"] = 4;
  EXPECT_NE(DescribeMismatch(o).find("; 4 NaN/Inf values where the reference is finite"),
            std::string::npos);

  json variant = {{"batch_size", 300}, {"dim", 20000}};
  EXPECT_EQ(VariantSizes(variant), "batch_size=300, dim=20000");
  Diagnostic d = ShapeDiag(variant, "");
  EXPECT_EQ(d.code, "H19");
  EXPECT_EQ(d.message,
            "wrong on inputs of another size the problem allows (batch_size=300, dim=20000)");
  EXPECT_EQ(ShapeDiag(variant, "raised").message.substr(d.message.size()), ": raised");
}

TEST(Replies, AStatefulProblemIsANoteNamingItsState) {
  Diagnostic d = StatefulNote({"c0", "hidden"});
  EXPECT_EQ(d.code, "stateful_problem");
  EXPECT_EQ(d.severity, Severity::kInfo);
  EXPECT_NE(d.message.find("(self.c0, self.hidden)"), std::string::npos) << d.message;
  EXPECT_FALSE(d.hint.empty());
}

}  // namespace
}  // namespace kf::execute
