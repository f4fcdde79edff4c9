// What a candidate's run says: its diagnostics, the record of each correctness trial, a
// mismatch in a sentence (run.cc and timed_run.cc use them).
#include <algorithm>
#include <regex>

#include "execute/candidate_run.h"

namespace kf::execute {
using Clock = std::chrono::steady_clock;
using nlohmann::json;

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

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

// One correctness trial for the verdict, from the judge's check reply: the largest errors over
// the outputs and, for a wrong answer, where its first wrong output first differs.
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

// "batch_size=300, dim=20000": a shape variant's sizes.
std::string VariantSizes(const json& variant) {
  std::string sizes;
  for (const auto& [k, v] : variant.items()) {
    sizes += (sizes.empty() ? "" : ", ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
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

}  // namespace kf::execute
