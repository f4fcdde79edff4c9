// The UI's front: the checks every request passes (host, login, origin and csrf of forms),
// the security headers of every answer, the login form, and the routes to the pages.
#include "web/site.h"

#include <chrono>

#include "web/assets.h"
#include "web/pages.h"

namespace kf::web {
namespace {

// No inline script or style runs: a kernel text that escaped escaping still could not act.
constexpr const char* kCsp =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

void Secure(Response& r) {
  r.headers.emplace_back("Content-Security-Policy", kCsp);
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("X-Frame-Options", "DENY");
  // No referrer leaves for other sites; same-origin requests keep theirs, and with it a real
  // Origin header on our forms (under no-referrer Chromium sends "Origin: null").
  r.headers.emplace_back("Referrer-Policy", "same-origin");
  r.headers.emplace_back("Cache-Control", "no-store");
}

// The host name of a Host header: "127.0.0.1:8000" -> "127.0.0.1", "[::1]:80" -> "::1".
std::string HostName(const std::string& host) {
  if (!host.empty() && host[0] == '[') {
    size_t close = host.find(']');
    return close == std::string::npos ? host : host.substr(1, close - 1);
  }
  size_t colon = host.find(':');
  return colon == std::string::npos ? host : host.substr(0, colon);
}

bool LoopbackName(const std::string& name) {
  if (name == "localhost" || name == "::1") return true;
  if (name.rfind("127.", 0) != 0) return false;
  for (char c : name) {
    if (!(c == '.' || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

// A form may be posted only from our own pages: an Origin header, when the browser sends one,
// names this host ("null", from a sandboxed or opaque origin, does not); a browser that says
// the request is cross-site is refused.
bool SameOrigin(const Request& r) {
  if (r.sec_fetch_site == "cross-site") return false;
  if (r.origin.empty()) return true;
  return r.origin == "http://" + r.host || r.origin == "https://" + r.host;
}

// A local path to return to after logging in; anything else (another site, "//evil") is "/".
std::string SafeNext(const std::string& next) {
  if (next.empty() || next[0] != '/' || (next.size() > 1 && (next[1] == '/' || next[1] == '\\')))
    return "/";
  return next;
}

Response AssetResponse(const std::string& name) {
  Response r;
  const Asset* a = FindAsset(name);
  if (a == nullptr) {
    r.code = 404;
    r.content_type = "text/plain; charset=utf-8";
    r.body = "no such asset\n";
  } else {
    r.content_type = a->content_type;
    r.body.assign(a->data, a->size);
  }
  Secure(r);
  r.headers.back() = {"Cache-Control", "max-age=3600"};
  return r;
}

}  // namespace

class Site::Impl {
 public:
  Impl(SiteOptions o, store::Store* st, const problems::Registry* p, LiveService* l)
      : opt(std::move(o)),
        store(st),
        problems(p),
        live(opt.mode == "ui" ? nullptr : l),
        sessions(Sessions::RandomKey()) {
    if (!opt.now_s) {
      opt.now_s = [] {
        using namespace std::chrono;
        return static_cast<int64_t>(
            duration_cast<seconds>(system_clock::now().time_since_epoch()).count());
      };
    }
  }

  Response Handle(const Request& req) {
    if (req.path.rfind("/ui/assets/", 0) == 0) return AssetResponse(req.path.substr(11));
    Ctx c{req, ParseForm(req.query), {}, store, problems, live, opt, sessions, rates,
          {},  opt.now_s()};
    if (req.method == "POST") c.form = ParseForm(req.body);
    Response r;
    try {
      r = Route(c);
    } catch (const std::exception& e) {
      // The edge of the component: a malformed stored document (JSON of a surprising shape)
      // makes this page fail, not the server.
      r = Failure(c, Status::Internal(std::string("unexpected: ") + e.what()));
    }
    Secure(r);
    return r;
  }

 private:
  bool LoginRequired() const { return static_cast<bool>(opt.bearer_ok); }

  Response Route(Ctx& c) {
    const Request& req = c.req;
    if (!LoginRequired() && opt.loopback_host_check && !LoopbackName(HostName(req.host))) {
      return Html(c, 403, "Refused", "",
                  "<h1>Refused</h1><p>This service has no token, so its pages are for this "
                  "machine only (Host <code>" +
                      H(req.host) +
                      "</code> is not localhost). Open it as http://127.0.0.1:PORT/, or start "
                      "it with <code>--token-env</code>.</p>");
    }
    const std::string cookie = CookieValue(req.cookie, kSessionCookie);
    if (LoginRequired() && sessions.Valid(cookie, c.now_s)) c.session = cookie;
    if (req.path == "/ui/login") return Login(c);
    const bool authed = !LoginRequired() || !c.session.empty() || opt.bearer_ok(req.authorization);
    if (!authed) {
      const bool data =
          req.path.size() > 6 && (req.path.compare(req.path.size() - 6, 6, "/state") == 0 ||
                                  req.path.compare(req.path.size() - 6, 6, "/panel") == 0);
      if (req.method == "GET" && !data) {
        return Redirect("/ui/login?next=" +
                        U(req.path + (req.query.empty() ? "" : "?" + req.query)));
      }
      return Json(401, "{\"error\": \"log in first: POST /ui/login with the service's token\"}");
    }
    if (req.method == "POST") {
      if (!SameOrigin(req) || !sessions.CsrfOk(c.session, c.form["csrf"])) {
        return Html(c, 403, "Refused", "",
                    "<h1>Refused</h1><p>The form did not come from this page (its origin or "
                    "csrf field is wrong). Reload the page and send it again.</p>");
      }
      if (req.path == "/ui/logout") return Logout();
      if (req.path == "/ui/submit") return c.live ? SubmitPost(c) : ReadOnly(c);
      return NotFound(c, "no form is posted to " + req.path);
    }
    if (req.method != "GET") return NotFound(c, req.method + " " + req.path);
    return RouteGet(c);
  }

  Response RouteGet(const Ctx& c) {
    const std::string& p = c.req.path;
    int64_t id = 0;
    if (p == "/" || p == "/ui" || p == "/ui/" || p == "/ui/runs") return RunsPage(c);
    if (p.rfind("/ui/runs/", 0) == 0 && ParseId(p.substr(9), &id)) return RunPage(c, id);
    if (p == "/ui/compare") return ComparePage(c);
    if (p == "/ui/problems") return ProblemsPage(c);
    if (p == "/ui/problem") return ProblemPage(c);
    if (p.rfind("/ui/verdicts/", 0) == 0) return StoredVerdictPage(c, p.substr(13));
    if (!c.live && (p == "/ui/live" || p == "/ui/submit" || p.rfind("/ui/jobs/", 0) == 0)) {
      return ReadOnly(c);
    }
    if (p == "/ui/live") return LivePage(c, false);
    if (p == "/ui/live/panel") return LivePage(c, true);
    if (p == "/ui/submit") return SubmitPage(c);
    if (p.rfind("/ui/jobs/", 0) == 0) {
      std::string rest = p.substr(9);
      if (rest.size() > 6 && rest.compare(rest.size() - 6, 6, "/state") == 0) {
        return JobState(c, rest.substr(0, rest.size() - 6));
      }
      return JobScreen(c, rest);
    }
    return NotFound(c, "no page at " + p);
  }

  Response ReadOnly(const Ctx& c) {
    return Html(c, 404, "Read-only", "",
                "<h1>Read-only</h1><p>These pages show a store; there is no evaluation engine "
                "behind them, so nothing can be submitted or watched. Run <code>kforge "
                "serve</code> for the live service and submissions.</p>");
  }

  Response Login(Ctx& c) {
    if (!LoginRequired()) return Redirect(SafeNext(c.Param("next")));
    std::string error;
    int code = 200;
    if (c.req.method == "POST") {
      const std::string next = SafeNext(c.form["next"]);
      if (!SameOrigin(c.req) || !sessions.CsrfOk("", c.form["csrf"])) {
        error = "The form did not come from this page; reload it and try again.";
        code = 403;
      } else if (opt.bearer_ok("Bearer " + c.form["token"])) {
        Response r = Redirect(next);
        const bool https = c.req.forwarded_proto == "https";
        r.headers.emplace_back("Set-Cookie", std::string(kSessionCookie) + "=" +
                                                 sessions.Issue(c.now_s, opt.session_ttl.count()) +
                                                 "; Path=/; HttpOnly; SameSite=Strict; Max-Age=" +
                                                 std::to_string(opt.session_ttl.count()) +
                                                 (https ? "; Secure" : ""));
        return r;
      } else {
        error = "That is not the service's token.";
        code = 401;
      }
    }
    const std::string next = c.req.method == "POST" ? c.form["next"] : c.Param("next");
    std::string main =
        "<h1>Log in</h1><p>This service needs its token (the value of the variable named by "
        "<code>--token-env</code>). The browser keeps a session cookie, not the token.</p>";
    if (!error.empty()) main += "<p class=\"error\">" + H(error) + "</p>";
    main +=
        "<form method=\"post\" action=\"/ui/login\" class=\"login\">"
        "<input type=\"hidden\" name=\"csrf\" value=\"" +
        H(sessions.Csrf("")) + "\"><input type=\"hidden\" name=\"next\" value=\"" +
        H(SafeNext(next)) +
        "\"><label>Token <input type=\"password\" name=\"token\" id=\"token\" "
        "autocomplete=\"current-password\" required></label> "
        "<button type=\"submit\" id=\"login\">Log in</button></form>";
    return Html(c, code, "Log in", "", main);
  }

  Response Logout() {
    Response r = Redirect("/ui/login");
    r.headers.emplace_back("Set-Cookie", std::string(kSessionCookie) +
                                             "=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
    return r;
  }

  SiteOptions opt;
  store::Store* store;
  const problems::Registry* problems;
  LiveService* live;
  const Sessions sessions;
  RateHistory rates;
};

Site::Site(SiteOptions opt, store::Store* store, const problems::Registry* problems,
           LiveService* live)
    : impl_(std::make_unique<Impl>(std::move(opt), store, problems, live)) {}
Site::~Site() = default;

Response Site::Handle(const Request& req) { return impl_->Handle(req); }

bool Site::Owns(const std::string& path) {
  return path == "/" || path == "/ui" || path.rfind("/ui/", 0) == 0;
}

}  // namespace kf::web
