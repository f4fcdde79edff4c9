#include "score/verdict.h"

#include <array>
#include <utility>

namespace kf {
namespace {

using nlohmann::json;

constexpr std::array<std::pair<VerdictStatus, const char*>, 8> kStatusNames = {{
    {VerdictStatus::kOk, "ok"},
    {VerdictStatus::kFormatError, "format_error"},
    {VerdictStatus::kCompileError, "compile_error"},
    {VerdictStatus::kRuntimeError, "runtime_error"},
    {VerdictStatus::kTimeout, "timeout"},
    {VerdictStatus::kIncorrect, "incorrect"},
    {VerdictStatus::kCheat, "cheat"},
    {VerdictStatus::kInfraError, "infra_error"},
}};

// The fixed keys of a stage object; anything else in it is the stage's detail.
bool IsStageKey(const std::string& key) { return key == "name" || key == "ok" || key == "ms"; }

json OptionalNumber(const std::optional<double>& x) { return x ? json(*x) : json(nullptr); }

// Reading helpers: each checks the type so that a malformed document becomes an error
// string rather than a nlohmann exception escaping to the caller.
class Reader {
 public:
  explicit Reader(std::string* error) : error_(error) {}

  bool ok() const { return failed_.empty(); }

  const json* Object(const json& parent, const char* key) {
    const json* j = Find(parent, key);
    if (j && !j->is_object()) {
      Fail(key, "an object");
    }
    return ok() ? j : nullptr;
  }
  void String(const json& parent, const char* key, std::string* out) {
    const json* j = Find(parent, key);
    if (!j) {
      return;
    }
    if (!j->is_string()) {
      return Fail(key, "a string");
    }
    *out = j->get<std::string>();
  }
  void Int(const json& parent, const char* key, int* out) {
    const json* j = Find(parent, key);
    if (!j) {
      return;
    }
    if (!j->is_number_integer()) {
      return Fail(key, "an integer");
    }
    *out = j->get<int>();
  }
  void Double(const json& parent, const char* key, double* out) {
    const json* j = Find(parent, key);
    if (!j) {
      return;
    }
    if (!j->is_number()) {
      return Fail(key, "a number");
    }
    *out = j->get<double>();
  }
  // Absent and null both mean "unknown".
  void OptDouble(const json& parent, const char* key, std::optional<double>* out) {
    auto it = parent.find(key);
    if (it == parent.end() || it->is_null()) {
      return out->reset();
    }
    if (!it->is_number()) {
      return Fail(key, "a number or null");
    }
    *out = it->get<double>();
  }
  void Bool(const json& parent, const char* key, bool* out) {
    const json* j = Find(parent, key);
    if (!j) {
      return;
    }
    if (!j->is_boolean()) {
      return Fail(key, "a boolean");
    }
    *out = j->get<bool>();
  }

  // Records the first failure only: later ones are usually consequences of it.
  void Fail(const std::string& key, const std::string& what) {
    if (!ok()) {
      return;
    }
    failed_ = "\"" + key + "\" must be " + what;
    if (error_) {
      *error_ = failed_;
    }
  }

 private:
  const json* Find(const json& parent, const char* key) {
    if (!ok()) {
      return nullptr;
    }
    auto it = parent.find(key);
    if (it == parent.end()) {
      Fail(key, "present");
      return nullptr;
    }
    return &*it;
  }

  std::string* error_;
  std::string failed_;
};

json StageToJson(const StageRecord& s) {
  json j = json::object();
  if (s.detail.is_object()) {
    j = s.detail;
  }
  // The fixed keys win over a detail key of the same name.
  j["name"] = s.name;
  j["ok"] = s.ok;
  j["ms"] = s.ms;
  return j;
}

}  // namespace

const char* StatusName(VerdictStatus s) {
  for (const auto& [status, name] : kStatusNames) {
    if (status == s) {
      return name;
    }
  }
  return "infra_error";
}

bool StatusFromName(const std::string& name, VerdictStatus* out) {
  for (const auto& [status, n] : kStatusNames) {
    if (name == n) {
      *out = status;
      return true;
    }
  }
  return false;
}

static json IntervalJson(const std::optional<SpeedupInterval>& i) {
  if (!i) return nullptr;
  return json::array({i->lo, i->hi});
}

// [lo, hi] or null (verdicts stored before format 8 have neither).
static std::optional<SpeedupInterval> IntervalFrom(const json& parent, const char* key) {
  auto it = parent.find(key);
  if (it == parent.end() || !it->is_array() || it->size() != 2 || !(*it)[0].is_number() ||
      !(*it)[1].is_number())
    return std::nullopt;
  return SpeedupInterval{(*it)[0].get<double>(), (*it)[1].get<double>()};
}

json ToJson(const Verdict& v) {
  json stages = json::array();
  for (const StageRecord& s : v.stages) {
    stages.push_back(StageToJson(s));
  }

  json timing = json::object();
  if (v.candidate_ms) {
    const TimingSummary& t = *v.candidate_ms;
    timing["candidate_ms"] = {
        {"median", t.median_ms}, {"p10", t.p10_ms}, {"p90", t.p90_ms}, {"n", t.n}};
  } else {
    timing["candidate_ms"] = nullptr;
  }
  timing["eager_ms"] = OptionalNumber(v.eager_ms);
  timing["compile_ms"] = OptionalNumber(v.compile_ms);
  if (!v.compile_ms) {
    timing["compile_unavailable"] = v.compile_unavailable;
  }

  json diagnostics = json::array();
  for (const Diagnostic& d : v.diagnostics) {
    diagnostics.push_back(ToJson(d));
  }

  return json{
      {"schema", kVerdictSchema},
      {"problem", {{"id", v.problem_id}, {"hash", v.problem_hash}}},
      {"candidate", {{"hash", v.candidate_hash}, {"format", v.candidate_format}}},
      {"backend", v.backend},
      {"device", v.device},
      {"policy", v.policy},
      {"pytorch_ops", v.pytorch_ops},
      {"status", StatusName(v.status)},
      {"stages", std::move(stages)},
      {"correct_trials", {{"passed", v.trials_passed}, {"total", v.trials_total}}},
      {"timing", std::move(timing)},
      {"speedup",
       {{"vs_eager", OptionalNumber(v.speedup_vs_eager)},
        {"vs_compile", OptionalNumber(v.speedup_vs_compile)},
        {"vs_eager_ci", IntervalJson(v.speedup_vs_eager_ci)},
        {"vs_compile_ci", IntervalJson(v.speedup_vs_compile_ci)}}},
      {"reward", OptionalNumber(v.reward)},
      {"diagnostics", std::move(diagnostics)},
      {"feedback", v.feedback},
  };
}

bool VerdictFromJson(const json& j, Verdict* v, std::string* error) {
  Reader r(error);
  if (!j.is_object()) {
    r.Fail("verdict", "an object");
    return false;
  }
  int schema = 0;
  r.Int(j, "schema", &schema);
  if (r.ok() && schema != kVerdictSchema) {
    r.Fail("schema", std::to_string(kVerdictSchema) + " (got " + std::to_string(schema) + ")");
  }

  Verdict out;
  if (const json* p = r.Object(j, "problem")) {
    r.String(*p, "id", &out.problem_id);
    r.String(*p, "hash", &out.problem_hash);
  }
  if (const json* c = r.Object(j, "candidate")) {
    r.String(*c, "hash", &out.candidate_hash);
    r.String(*c, "format", &out.candidate_format);
  }
  r.String(j, "backend", &out.backend);
  r.String(j, "device", &out.device);
  // Added within schema 1: verdicts stored before have neither (they were strict, with none).
  out.policy = j.value("policy", std::string("strict"));
  if (auto it = j.find("pytorch_ops"); it != j.end() && it->is_array()) {
    for (const auto& op : *it) {
      if (op.is_string()) out.pytorch_ops.push_back(op.get<std::string>());
    }
  }
  std::string status;
  r.String(j, "status", &status);
  if (r.ok() && !StatusFromName(status, &out.status)) {
    r.Fail("status", "a known status");
  }

  if (r.ok()) {
    auto it = j.find("stages");
    if (it == j.end() || !it->is_array()) {
      r.Fail("stages", "an array");
    }
    for (size_t i = 0; r.ok() && i < it->size(); ++i) {
      const json& sj = (*it)[i];
      if (!sj.is_object()) {
        r.Fail("stages[" + std::to_string(i) + "]", "an object");
        break;
      }
      StageRecord s;
      r.String(sj, "name", &s.name);
      r.Bool(sj, "ok", &s.ok);
      r.Double(sj, "ms", &s.ms);
      for (auto kv = sj.begin(); kv != sj.end(); ++kv) {
        if (!IsStageKey(kv.key())) {
          s.detail[kv.key()] = kv.value();
        }
      }
      out.stages.push_back(std::move(s));
    }
  }

  if (const json* t = r.Object(j, "correct_trials")) {
    r.Int(*t, "passed", &out.trials_passed);
    r.Int(*t, "total", &out.trials_total);
  }

  if (const json* t = r.Object(j, "timing")) {
    auto c = t->find("candidate_ms");
    if (c != t->end() && !c->is_null()) {
      if (!c->is_object()) {
        r.Fail("candidate_ms", "an object or null");
      }
      TimingSummary ts;
      if (r.ok()) {
        r.Double(*c, "median", &ts.median_ms);
        r.Double(*c, "p10", &ts.p10_ms);
        r.Double(*c, "p90", &ts.p90_ms);
        r.Int(*c, "n", &ts.n);
      }
      out.candidate_ms = ts;
    }
    r.OptDouble(*t, "eager_ms", &out.eager_ms);
    r.OptDouble(*t, "compile_ms", &out.compile_ms);
    auto why = t->find("compile_unavailable");
    if (r.ok() && why != t->end()) {
      r.String(*t, "compile_unavailable", &out.compile_unavailable);
    }
  }

  if (const json* s = r.Object(j, "speedup")) {
    r.OptDouble(*s, "vs_eager", &out.speedup_vs_eager);
    r.OptDouble(*s, "vs_compile", &out.speedup_vs_compile);
    out.speedup_vs_eager_ci = IntervalFrom(*s, "vs_eager_ci");
    out.speedup_vs_compile_ci = IntervalFrom(*s, "vs_compile_ci");
  }
  if (r.ok()) {
    r.OptDouble(j, "reward", &out.reward);
  }

  if (r.ok()) {
    auto it = j.find("diagnostics");
    if (it == j.end() || !it->is_array()) {
      r.Fail("diagnostics", "an array");
    }
    for (size_t i = 0; r.ok() && i < it->size(); ++i) {
      if (!(*it)[i].is_object()) {
        r.Fail("diagnostics[" + std::to_string(i) + "]", "an object");
        break;
      }
      // DiagnosticFromJson uses value(), which throws on a present key of the wrong type.
      try {
        out.diagnostics.push_back(DiagnosticFromJson((*it)[i]));
      } catch (const json::exception& e) {
        r.Fail("diagnostics[" + std::to_string(i) + "]", std::string("valid (") + e.what() + ")");
      }
    }
  }
  r.String(j, "feedback", &out.feedback);

  if (!r.ok()) {
    return false;
  }
  *v = std::move(out);
  return true;
}

}  // namespace kf
