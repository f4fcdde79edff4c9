// What every page shares: the context's helpers and the common answers.
#include "web/pages.h"

namespace kf::web {

Shell Ctx::ShellFor(const std::string& title, const std::string& active) const {
  Shell s;
  s.title = title;
  s.active = active;
  s.live = live != nullptr;
  s.logged_in = !session.empty();
  s.csrf = Csrf();
  return s;
}

std::string Ctx::Param(const std::string& name) const {
  auto it = query.find(name);
  return it == query.end() ? "" : it->second;
}

double JNum(const nlohmann::json& j, const char* key, double def) {
  const nlohmann::json v = JGet(j, key);
  return v.is_number() ? v.get<double>() : def;
}
std::string JStr(const nlohmann::json& j, const char* key) {
  const nlohmann::json v = JGet(j, key);
  return v.is_string() ? v.get<std::string>() : "";
}
bool JBool(const nlohmann::json& j, const char* key) {
  const nlohmann::json v = JGet(j, key);
  return v.is_boolean() && v.get<bool>();
}
nlohmann::json JGet(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nlohmann::json() : *it;
}

Response Html(const Ctx& c, int code, const std::string& title, const std::string& active,
              const std::string& main_html) {
  Response r;
  r.code = code;
  r.body = Page(c.ShellFor(title, active), main_html);
  return r;
}

Response NotFound(const Ctx& c, const std::string& what) {
  return Html(c, 404, "Not found", "", "<h1>Not found</h1><p>" + H(what) + "</p>");
}

Response Failure(const Ctx& c, const Status& s) {
  const int code = s.code() == Code::kUnavailable || s.code() == Code::kTimeout ? 503 : 500;
  return Html(
      c, code, "Error", "",
      "<h1>Error</h1><p>The page could not be made: <code>" + H(s.message()) + "</code></p>");
}

Response Redirect(const std::string& location) {
  Response r;
  r.code = 303;
  r.headers.emplace_back("Location", location);
  r.body = "<!DOCTYPE html><title>See other</title><a href=\"" + H(location) + "\">continue</a>\n";
  return r;
}

Response Json(int code, const std::string& body) {
  Response r;
  r.code = code;
  r.content_type = "application/json";
  r.body = body;
  return r;
}

void RateHistory::Add(int64_t now_s, long long total) {
  std::lock_guard<std::mutex> g(mu_);
  if (!samples_.empty() && samples_.back().first >= now_s) {
    samples_.back().second = total;  // one sample per second: the newest total wins
  } else {
    samples_.emplace_back(now_s, total);
  }
  while (!samples_.empty() && samples_.front().first < now_s - 15 * 60) samples_.pop_front();
}

std::optional<double> RateHistory::PerMinute(int64_t now_s, int64_t window_s) const {
  std::lock_guard<std::mutex> g(mu_);
  if (samples_.size() < 2) return std::nullopt;
  const auto& last = samples_.back();
  for (const auto& s : samples_) {
    if (s.first >= now_s - window_s && s.first < last.first) {
      const double minutes = static_cast<double>(last.first - s.first) / 60.0;
      return static_cast<double>(last.second - s.second) / minutes;
    }
  }
  return std::nullopt;
}

std::vector<std::pair<int64_t, long long>> RateHistory::Samples() const {
  std::lock_guard<std::mutex> g(mu_);
  return {samples_.begin(), samples_.end()};
}

}  // namespace kf::web
