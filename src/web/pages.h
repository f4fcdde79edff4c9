// pages: the UI's pages, each a function of the request's context (internal to web). site.cc
// routes to them after the checks every request passes (host, login, csrf).
#pragma once

#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "score/verdict.h"
#include "web/html.h"
#include "web/session.h"
#include "web/site.h"

namespace kf::web {

// Verdict totals seen by the live view over time, for its rates. Thread-safe.
class RateHistory {
 public:
  // At most one sample per second is kept, and none older than 15 minutes.
  void Add(int64_t now_s, long long total);
  // Verdicts per minute between the oldest sample within `window_s` and the newest; nullopt
  // until two samples a second apart exist.
  std::optional<double> PerMinute(int64_t now_s, int64_t window_s) const;
  std::vector<std::pair<int64_t, long long>> Samples() const;

 private:
  mutable std::mutex mu_;
  std::deque<std::pair<int64_t, long long>> samples_;  // guarded by mu_: (time, total)
};

struct Ctx {
  const Request& req;
  std::map<std::string, std::string> query;  // the parsed query string
  std::map<std::string, std::string> form;   // the parsed POST body
  store::Store* store = nullptr;
  const problems::Registry* problems = nullptr;
  LiveService* live = nullptr;
  const SiteOptions& opt;
  const Sessions& sessions;
  RateHistory& rates;
  std::string session;  // the request's valid session cookie, or ""
  int64_t now_s = 0;

  Shell ShellFor(const std::string& title, const std::string& active) const;
  std::string Csrf() const { return sessions.Csrf(session); }
  std::string Param(const std::string& name) const;  // the query's value, or ""
};

// Fields of stored JSON, read without trusting its shape: the default when `j` is no object,
// the key is absent, or its value is of another type.
double JNum(const nlohmann::json& j, const char* key, double def = 0);
std::string JStr(const nlohmann::json& j, const char* key);
bool JBool(const nlohmann::json& j, const char* key);
nlohmann::json JGet(const nlohmann::json& j, const char* key);  // null when absent

Response Html(const Ctx& c, int code, const std::string& title, const std::string& active,
              const std::string& main_html);
Response NotFound(const Ctx& c, const std::string& what);
Response Failure(const Ctx& c, const Status& s);  // the store or the service failed: 500/503
Response Redirect(const std::string& location);   // 303
Response Json(int code, const std::string& body);

Response RunsPage(const Ctx& c);
Response RunPage(const Ctx& c, int64_t id);
Response ComparePage(const Ctx& c);
Response ProblemsPage(const Ctx& c);
Response ProblemPage(const Ctx& c);
Response StoredVerdictPage(const Ctx& c, const std::string& key);
Response LivePage(const Ctx& c, bool panel_only);
Response SubmitPage(const Ctx& c);
Response SubmitPost(const Ctx& c);
Response JobScreen(const Ctx& c, const std::string& id);
Response JobState(const Ctx& c, const std::string& id);

// The body of a verdict page (verdict_page.cc): facts, the rule of a cheat, timing, trials,
// feedback, the source with its diagnostics, the diff picker and diff, stages, the JSON.
// `source`: the candidate as submitted, when known. `self` is the page's own path (the diff
// picker's form posts back to it).
std::string VerdictBody(const Ctx& c, const Verdict& v, const std::optional<std::string>& source,
                        const std::string& self);

// The kernel source with every diagnostic under the line it names (source_view.cc).
std::string SourceView(const std::string& source, const std::vector<Diagnostic>& diags);
// A unified view of DiffLines(a, b), or a note when too large.
std::string DiffView(const std::string& a, const std::string& b, const std::string& a_name,
                     const std::string& b_name);
// The name of a rule in kforge's catalog (common/rules.h: "H08" -> "timer-patch"); "" for
// other codes and for notes.
std::string RuleName(const std::string& code);

}  // namespace kf::web
