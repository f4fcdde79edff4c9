#include "execute/replies.h"

#include <algorithm>
#include <cstdio>
#include <regex>

#include "common/rules.h"

namespace kf::execute {
using nlohmann::json;

Diagnostic Diag(const std::string& stage, const std::string& code, const std::string& message,
                int line, const std::string& hint) {
  Diagnostic d;
  d.stage = stage;
  d.code = code;
  d.message = message;
  d.line = line;
  d.hint = hint;
  return d;
}

int LastCandidateLine(const std::string& text) {
  static const std::regex kLine(R"re(File "candidate\.py", line (\d+))re");
  int line = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), kLine), end; it != end; ++it) {
    line = std::stoi((*it)[1]);
  }
  return line;
}

std::string FormatNumber(double v) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

json TrialRecord(const std::string& label, const json& check) {
  json t = {{"label", label}, {"pass", check.value("pass", false)}};
  if (check.contains("rule")) t["rule"] = check["rule"];
  double max_abs = -1, max_rel = -1;
  long long bad = 0, elements = 0;
  for (const auto& o : check.value("outputs", json::array())) {
    if (o.contains("max_abs_err") && o["max_abs_err"].is_number())
      max_abs = std::max(max_abs, o["max_abs_err"].get<double>());
    if (o.contains("max_rel_err") && o["max_rel_err"].is_number())
      max_rel = std::max(max_rel, o["max_rel_err"].get<double>());
    bad += o.value("bad_elements", 0LL);
    elements += o.value("elements", 0LL);
    if (!o.value("pass", true) && !t.contains("output")) {
      t["output"] = o.value("output", 0);
      for (const char* k : {"first_bad_index", "first_bad_got", "first_bad_expected"}) {
        if (o.contains(k)) t[k] = o[k];
      }
    }
  }
  if (max_abs >= 0) t["max_abs_err"] = max_abs;
  if (max_rel >= 0) t["max_rel_err"] = max_rel;
  if (check.contains("outputs")) {
    t["bad_elements"] = bad;
    t["elements"] = elements;
  }
  return t;
}

std::string VariantSizes(const json& variant) {
  std::string sizes;
  for (const auto& [k, v] : variant.items()) {
    sizes +=
        (sizes.empty() ? "" : ", ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return sizes;
}

std::string DescribeMismatch(const json& o) {
  std::string s = "output " + std::to_string(o.value("output", 0)) + ": " +
                  std::to_string(o.value("bad_elements", 0)) + " of " +
                  std::to_string(o.value("elements", 0)) + " elements differ";
  if (o.contains("max_abs_err") && o["max_abs_err"].is_number()) {
    s += "; max abs error " + FormatNumber(o["max_abs_err"].get<double>());
  }
  if (o.contains("max_rel_err") && o["max_rel_err"].is_number()) {
    s += ", max rel error " + FormatNumber(o["max_rel_err"].get<double>());
  }
  if (o.contains("first_bad_index")) {
    s += "; first at " + o["first_bad_index"].dump();
    auto num = [](const json& v) {
      return v.is_number() ? FormatNumber(v.get<double>()) : v.dump();
    };
    if (o.contains("first_bad_got")) s += ": got " + num(o["first_bad_got"]);
    if (o.contains("first_bad_expected")) s += ", expected " + num(o["first_bad_expected"]);
  }
  if (o.value("nonfinite_where_ref_finite", 0) > 0) {
    s += "; " + std::to_string(o["nonfinite_where_ref_finite"].get<int>()) +
         " NaN/Inf values where the reference is finite";
  }
  s += " (atol " + FormatNumber(o.value("atol", 0.0)) + ", rtol " +
       FormatNumber(o.value("rtol", 0.0)) + ")";
  return s;
}

Diagnostic ShapeDiag(const json& variant, const std::string& detail) {
  const std::string sizes = VariantSizes(variant);
  return Diag("correctness", "H19",
              "wrong on inputs of another size the problem allows (" + sizes + ")" +
                  (detail.empty() ? "" : ": " + detail),
              0, RuleHint("H19"));
}

Diagnostic StatefulNote(const std::vector<std::string>& names) {
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "self." : ", self.") + n;
  Diagnostic d = Diag("execute", "stateful_problem",
                      "the problem's Model keeps state between calls (" + list +
                          "): every call of the reference and of ModelNew started from the "
                          "state it was built with",
                      0,
                      "keep ModelNew's state in tensors its modules hold (attributes or "
                      "buffers), built in the problem's order: kforge puts those back before "
                      "each call (docs/PROTOCOL.md, step 3)");
  d.severity = Severity::kInfo;
  return d;
}

Failure Refusal(const std::string& stage, const std::string& what, const json& r,
                bool build_failed) {
  std::string kind = r.value("kind", "exception");
  std::string message = r.value("message", "failed");
  Failure f;
  Diagnostic& d = f.diagnostic;
  d = Diag(stage, kind, message, r.value("line", 0));
  if (r.contains("traceback")) d.excerpt = r["traceback"].get<std::string>();
  if (kind == "build_failed" || build_failed) {
    f.outcome = Outcome::kCompileError;
    d.code = "compile_error";
  } else if (kind == "syntax_error" || kind == "no_model_new") {
    f.outcome = Outcome::kFormatError;
    d.col = r.value("col", 0);
  } else if (kind == "cheat") {
    f.outcome = Outcome::kCheat;
    d.code = r.value("rule", "cheat");
    d.hint = RuleHint(d.code);
  } else if (kind == "wrong_output") {
    const bool h14 = r.value("rule", "") == "H14";
    f.outcome = h14 ? Outcome::kCheat : Outcome::kIncorrect;
    d.code = h14 ? "H14" : "wrong_output";
    d.hint = h14 ? RuleHint("H14")
                 : "Return outputs with the reference's count, shape, dtype and device.";
  } else if (kind == "internal") {  // the runner's own failure, not the candidate's
    f.outcome = Outcome::kInfraError;
    d = Diag("execute", "infra", message);
  } else {
    f.outcome = Outcome::kRuntimeError;
    d.message = what + " raised " + message;
    d.hint = kind == "cuda_error" ? "A CUDA error: check indices, launch bounds and sizes."
                                  : "Fix the exception; the traceback shows where it was raised.";
  }
  return f;
}

Failure TimedOut(const std::string& stage, const std::string& what,
                 std::chrono::milliseconds timeout) {
  return {Outcome::kTimeout, Diag(stage, "timeout",
                                  "the candidate did not finish " + what + " within " +
                                      std::to_string(timeout.count() / 1000) + " s and was killed",
                                  0, "Look for an infinite loop or a kernel that never ends.")};
}

Failure Crashed(const std::string& stage, const std::string& what, const std::string& how,
                const std::string& output_tail) {
  const std::string hint = "Check memory accesses: indices, sizes and pointers passed to kernels.";
  Failure f{Outcome::kRuntimeError,
            Diag(stage, "crash", "the candidate process died during " + what + ": " + how,
                 LastCandidateLine(output_tail), hint)};
  f.diagnostic.excerpt = output_tail;
  return f;
}

}  // namespace kf::execute
