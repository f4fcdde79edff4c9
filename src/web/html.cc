#include "web/html.h"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <ctime>

#include "bench/charts.h"
#include "common/hash.h"

namespace kf::web {

std::string H(std::string_view s) { return bench::HtmlEscape(s); }

std::string U(std::string_view s, bool keep_slash) {
  static const char* kHex = "0123456789ABCDEF";
  std::string o;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      o += static_cast<char>(c);
    } else {
      o += '%';
      o += kHex[c >> 4];
      o += kHex[c & 15];
    }
  }
  return o;
}

std::string UrlDecode(std::string_view s) {
  std::string o;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      o += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && HexDigit(s[i + 1]) >= 0 &&
               HexDigit(s[i + 2]) >= 0) {
      o += static_cast<char>(HexDigit(s[i + 1]) * 16 + HexDigit(s[i + 2]));
      i += 2;
    } else {
      o += s[i];
    }
  }
  return o;
}

std::map<std::string, std::string> ParseForm(std::string_view s) {
  std::map<std::string, std::string> out;
  size_t at = 0;
  while (at <= s.size()) {
    size_t amp = s.find('&', at);
    if (amp == std::string_view::npos) amp = s.size();
    std::string_view pair = s.substr(at, amp - at);
    if (!pair.empty()) {
      size_t eq = pair.find('=');
      std::string name = UrlDecode(pair.substr(0, eq));
      std::string value = eq == std::string_view::npos ? "" : UrlDecode(pair.substr(eq + 1));
      out.emplace(std::move(name), std::move(value));
    }
    at = amp + 1;
  }
  return out;
}

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string Ms(std::optional<double> ms) { return ms ? Num(*ms) + " ms" : "n/a"; }

std::string Times(std::optional<double> x) {
  if (!x) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2fx", *x);
  return buf;
}

std::string Pct(double fraction) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * fraction);
  return buf;
}

std::string Short(std::string_view hash) { return std::string(hash.substr(0, 12)); }

std::string Badge(const std::string& status) {
  static const char* kKnown[] = {"ok",      "incorrect", "compile_error", "runtime_error",
                                 "timeout", "cheat",     "format_error",  "infra_error",
                                 "queued",  "running",   "lost",          "done"};
  std::string cls = "infra_error";
  for (const char* k : kKnown) {
    if (status == k) cls = k;
  }
  return "<span class=\"st st-" + cls + "\">" + H(status) + "</span>";
}

std::string When(int64_t ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%SZ", &tm);
  return buf;
}

bool IsHex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool ParseId(std::string_view s, int64_t* id) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *id);
  return ec == std::errc() && p == s.data() + s.size() && *id > 0;
}

std::string Page(const Shell& s, const std::string& main_html) {
  auto item = [&](const char* key, const char* href, const char* label) {
    return std::string("<a href=\"") + href + "\"" +
           (s.active == key ? " class=\"on\" aria-current=\"page\"" : "") + ">" + label + "</a>";
  };
  std::string o =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>" +
      H(s.title) +
      " · kforge</title><link rel=\"icon\" href=\"/ui/assets/favicon.svg\" type=\"image/svg+xml\">"
      "<link rel=\"stylesheet\" href=\"/ui/assets/app.css\">"
      "<script src=\"/ui/assets/app.js\" defer></script></head><body><header><nav>"
      "<a class=\"brand\" href=\"/\">kforge</a>" +
      item("runs", "/ui/runs", "Runs") + item("problems", "/ui/problems", "Problems");
  if (s.live) o += item("live", "/ui/live", "Live") + item("submit", "/ui/submit", "Submit");
  if (!s.live) o += "<span class=\"mode\">read-only</span>";
  if (s.logged_in) {
    o += "<form class=\"logout\" method=\"post\" action=\"/ui/logout\"><input type=\"hidden\" "
         "name=\"csrf\" value=\"" +
         H(s.csrf) + "\"><button type=\"submit\">Log out</button></form>";
  }
  o += "</nav></header><main>" + main_html + "</main></body></html>\n";
  return o;
}

}  // namespace kf::web
