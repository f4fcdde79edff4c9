// html: the UI's escaping, URL and form coding, number formats and page frame. Everything a
// page shows that did not come from a literal in our code goes through H (element text and
// double-quoted attribute values) or U (a URL component, then H).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace kf::web {

// & < > " ' as entities; other bytes unchanged (kernel text may hold any UTF-8).
std::string H(std::string_view s);
// Percent-encodes all but A-Z a-z 0-9 - _ . ~ (and '/' when keep_slash: problem ids).
std::string U(std::string_view s, bool keep_slash = false);
// %XX decoded; '+' is a space in forms and queries. Malformed escapes are kept as they are.
std::string UrlDecode(std::string_view s);
// "a=1&b=x%20y" -> {a: 1, b: "x y"}; a name given twice keeps its first value.
std::map<std::string, std::string> ParseForm(std::string_view s);

std::string Num(double v);                   // 4 significant digits
std::string Ms(std::optional<double> ms);    // "0.0250 ms", "n/a"
std::string Times(std::optional<double> x);  // "1.91x", "n/a"
std::string Pct(double fraction);            // "42.5%"
std::string Short(std::string_view hash);    // the first 12 characters
// <span class="st st-ok">ok</span>; unknown names get the infra_error colour.
std::string Badge(const std::string& status);
// When, from milliseconds since the epoch: "2026-12-01 10:00:00Z".
std::string When(int64_t ms);
bool IsHex64(std::string_view s);
// A positive decimal integer, all of `s` (run ids).
bool ParseId(std::string_view s,
             int64_t* id);  // a SHA-256 hex digest (verdict keys, job ids, hashes)

// The frame around a page: head (our style sheet and script only), menu, main.
struct Shell {
  std::string title;
  std::string active;      // the menu entry to mark: "runs", "problems", "live", "submit"
  bool live = false;       // a reward service is there: Live and Submit in the menu
  bool logged_in = false;  // a session cookie: a log-out button (a form, with csrf)
  std::string csrf;
};
std::string Page(const Shell& s, const std::string& main_html);

}  // namespace kf::web
