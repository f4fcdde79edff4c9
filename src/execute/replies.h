// What the judge's and the candidate host's replies mean for the verdict: trial records,
// mismatch sentences, and the outcome and diagnostic of a request the candidate failed. Pure
// functions of the replies (JSON), tested on synthetic ones (replies_test.cc); CandidateRun
// (run.cc) acts on them. Internal to execute.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "execute/execute.h"

namespace kf::execute {

Diagnostic Diag(const std::string& stage, const std::string& code, const std::string& message,
                int line = 0, const std::string& hint = "");
// The last `File "candidate.py", line N` in a traceback or faulthandler dump; 0 if none.
int LastCandidateLine(const std::string& text);
std::string FormatNumber(double v);  // 4 significant digits
// One output's mismatch, as the judge described it, in a sentence.
std::string DescribeMismatch(const nlohmann::json& o);
// "batch_size=300, dim=20000": a shape variant's sizes.
std::string VariantSizes(const nlohmann::json& variant);
// One correctness trial for the verdict, from the judge's check reply: the largest errors over
// the outputs and, for a wrong answer, where its first wrong output first differs.
nlohmann::json TrialRecord(const std::string& label, const nlohmann::json& check);
// A trial on another size the problem allows went wrong (H19); `detail` may be empty.
Diagnostic ShapeDiag(const nlohmann::json& variant, const std::string& detail);
// An info note: the problem's model keeps state in `names` between calls, so every call of the
// reference and of ModelNew started from the state it was built with.
Diagnostic StatefulNote(const std::vector<std::string>& names);

// How a request the candidate failed ends its run.
struct Failure {
  Outcome outcome = Outcome::kInfraError;
  Diagnostic diagnostic;
};
// The candidate answered a request during `what` ("loading", "correctness trial 2") with
// {"ok": false, "kind": ...}: a build that failed (also when `build_failed`, one of its
// load_inline builds failed before), a format error, a cheat the host caught, outputs of the
// wrong kind (H14 when they are not plain tensors), an exception; kind "internal" is the
// runner's own failure (infra_error, execute stage).
Failure Refusal(const std::string& stage, const std::string& what, const nlohmann::json& reply,
                bool build_failed);
// The candidate did not answer within `timeout` and was killed.
Failure TimedOut(const std::string& stage, const std::string& what,
                 std::chrono::milliseconds timeout);
// The candidate's process died during `what`: `how` it ended (CandidateProcess::Reap) and the
// tail of its output, which gives the line. (The Evaluator adds to the hint what the
// candidate's sources show: eval::HintStreamedCheck.)
Failure Crashed(const std::string& stage, const std::string& what, const std::string& how,
                const std::string& output_tail);

}  // namespace kf::execute
