// Who may see and do what: the host check, the login and its cookie, forms' origin and csrf,
// and the live service's pages (submit, job, live view) over a fake service.
#include "web/site.h"

#include "web/session.h"
#include "web/testing.h"

namespace kf::web {
namespace {

const std::string kToken = "0123456789abcdef-token";

class SiteTest : public testing::WebTest {
 protected:
  void SetUp() override {
    WebTest::SetUp();
    ASSERT_TRUE(registry_.AddFolder(std::string(KFORGE_SOURCE_DIR) + "/problems").ok());
  }
  std::unique_ptr<Site> Make(bool with_token) {
    SiteOptions o;
    if (with_token) {
      o.bearer_ok = [](const std::string& h) { return h == "Bearer " + kToken; };
    }
    o.now_s = [this] { return now_s_; };
    return std::make_unique<Site>(o, store_.get(), &registry_, &live_);
  }
  // The csrf field of the form on `path`'s page.
  static std::string CsrfOf(const Response& page) {
    const std::string mark = "name=\"csrf\" value=\"";
    size_t at = page.body.find(mark);
    if (at == std::string::npos) return "";
    at += mark.size();
    return page.body.substr(at, page.body.find('"', at) - at);
  }
  // Logs in through the form; returns the session cookie ("name=value").
  std::string LogIn(Site& site) {
    Response form = site.Handle(Get("/ui/login"));
    Response r = site.Handle(
        Post("/ui/login", "csrf=" + CsrfOf(form) + "&token=" + kToken + "&next=%2Fui%2Fproblems"));
    EXPECT_EQ(r.code, 303);
    EXPECT_EQ(Header(r, "Location"), "/ui/problems");
    const std::string set = Header(r, "Set-Cookie");
    EXPECT_NE(set.find("HttpOnly"), std::string::npos);
    EXPECT_NE(set.find("SameSite=Strict"), std::string::npos);
    EXPECT_EQ(set.find(kToken), std::string::npos);  // the cookie is not the token
    return set.substr(0, set.find(';'));
  }

  problems::Registry registry_;
  testing::FakeLive live_;
  int64_t now_s_ = 1'800'000'000;
};

TEST_F(SiteTest, WithoutATokenOnlyThisMachinesNamesAreServed) {
  auto site = Make(false);
  EXPECT_EQ(site->Handle(Get("/")).code, 200);
  for (const char* host : {"localhost:8000", "[::1]:8000", "127.0.0.7"}) {
    Request r = Get("/");
    r.host = host;
    EXPECT_EQ(site->Handle(r).code, 200) << host;
  }
  for (const char* host : {"evil.example:8000", "127.0.0.1.evil.example", "10.0.0.2", ""}) {
    Request r = Get("/");
    r.host = host;
    EXPECT_EQ(site->Handle(r).code, 403) << host;
  }
}

TEST_F(SiteTest, WithATokenPagesNeedALogin) {
  auto site = Make(true);
  Response r = site->Handle(Get("/ui/runs", "x=1"));
  EXPECT_EQ(r.code, 303);
  EXPECT_EQ(Header(r, "Location"), "/ui/login?next=%2Fui%2Fruns%3Fx%3D1");
  EXPECT_EQ(site->Handle(Get("/ui/jobs/" + std::string(64, 'a') + "/state")).code, 401);
  EXPECT_EQ(site->Handle(Get("/ui/assets/app.css")).code, 200);  // no secrets there
  // A bearer header is as good as a session (scripts).
  Request bearer = Get("/ui/runs");
  bearer.authorization = "Bearer " + kToken;
  EXPECT_EQ(site->Handle(bearer).code, 200);
  bearer.authorization = "Bearer wrong";
  EXPECT_EQ(site->Handle(bearer).code, 303);
  // Another host name is fine once a token guards the pages.
  Request far = Get("/ui/login");
  far.host = "kforge.example:8000";
  EXPECT_EQ(site->Handle(far).code, 200);
}

TEST_F(SiteTest, LoginSetsACookieThatExpires) {
  auto site = Make(true);
  Response form = site->Handle(Get("/ui/login"));
  Response wrong = site->Handle(Post("/ui/login", "csrf=" + CsrfOf(form) + "&token=nope"));
  EXPECT_EQ(wrong.code, 401);
  EXPECT_TRUE(Header(wrong, "Set-Cookie").empty());
  EXPECT_NE(wrong.body.find("not the service&#39;s token"), std::string::npos);
  EXPECT_EQ(site->Handle(Post("/ui/login", "csrf=bad&token=" + kToken)).code, 403);

  const std::string cookie = LogIn(*site);
  Request r = Get("/ui/problems");
  r.cookie = "other=1; " + cookie;
  Response page = site->Handle(r);
  EXPECT_EQ(page.code, 200);
  EXPECT_NE(page.body.find("Log out"), std::string::npos);
  now_s_ += 13 * 3600;  // past the 12 h of a session
  EXPECT_EQ(site->Handle(r).code, 303);
  // A forged cookie (another expiry with the old signature) is no session.
  const std::string value = cookie.substr(cookie.find('=') + 1);
  r.cookie = std::string(kSessionCookie) + "=9" + value.substr(value.find('.'));
  EXPECT_EQ(site->Handle(r).code, 303);
}

TEST_F(SiteTest, LoginNeverRedirectsElsewhere) {
  auto site = Make(true);
  Response form = site->Handle(Get("/ui/login"));
  for (const char* next : {"%2F%2Fevil.example%2F", "https%3A%2F%2Fevil.example", "%2F%5Cevil"}) {
    Response r = site->Handle(
        Post("/ui/login", "csrf=" + CsrfOf(form) + "&token=" + kToken + "&next=" + next));
    EXPECT_EQ(Header(r, "Location"), "/") << next;
  }
}

TEST_F(SiteTest, SubmitNeedsCsrfAndOurOrigin) {
  auto site = Make(false);
  Response form = site->Handle(Get("/ui/submit", "problem=level1%2Frelu"));
  ASSERT_EQ(form.code, 200);
  EXPECT_NE(form.body.find("<option value=\"level1/relu\" selected>"), std::string::npos);
  const std::string csrf = CsrfOf(form);
  const std::string body = "problem=level1%2Frelu&candidate=class+ModelNew%3A+pass";
  EXPECT_EQ(site->Handle(Post("/ui/submit", body)).code, 403);  // no csrf
  Request foreign = Post("/ui/submit", body + "&csrf=" + csrf);
  foreign.origin = "http://evil.example";
  EXPECT_EQ(site->Handle(foreign).code, 403);
  Request opaque = Post("/ui/submit", body + "&csrf=" + csrf);
  opaque.origin = "null";  // a sandboxed frame or a data: page
  EXPECT_EQ(site->Handle(opaque).code, 403);
  Request cross = Post("/ui/submit", body + "&csrf=" + csrf);
  cross.sec_fetch_site = "cross-site";
  EXPECT_EQ(site->Handle(cross).code, 403);
  EXPECT_TRUE(live_.submitted.empty());

  Response ok = site->Handle(Post("/ui/submit", body + "&csrf=" + csrf));
  ASSERT_EQ(ok.code, 303);
  EXPECT_EQ(live_.submitted["level1/relu"], "class ModelNew: pass");
  EXPECT_EQ(Header(ok, "Location").rfind("/ui/jobs/", 0), 0u);
  auto text = store_->GetText(Sha256Hex("class ModelNew: pass"));
  ASSERT_TRUE(text.ok() && text->has_value());  // the verdict page can show it later

  Response unknown =
      site->Handle(Post("/ui/submit", "problem=level9%2Fx&candidate=c&csrf=" + csrf));
  EXPECT_EQ(unknown.code, 404);
  EXPECT_NE(unknown.body.find("unknown problem"), std::string::npos);
  EXPECT_EQ(site->Handle(Post("/ui/submit", "problem=level1%2Frelu&candidate=&csrf=" + csrf)).code,
            400);
}

TEST_F(SiteTest, AJobPagePollsUntilTheVerdictThenShowsIt) {
  auto site = Make(false);
  const std::string csrf = CsrfOf(site->Handle(Get("/ui/submit")));
  Response sent = site->Handle(
      Post("/ui/submit",
           "problem=level1%2Frelu&candidate=" + std::string("x%3C%2Fscript%3E") + "&csrf=" + csrf));
  const std::string path = Header(sent, "Location");
  const std::string id = path.substr(9);
  Response waiting = site->Handle(Get(path));
  ASSERT_EQ(waiting.code, 200);
  EXPECT_NE(waiting.body.find("data-poll=\"/ui/jobs/" + id + "/state\""), std::string::npos);
  EXPECT_NE(waiting.body.find("x&lt;/script&gt;"), std::string::npos);
  Response state = site->Handle(Get(path + "/state"));
  EXPECT_EQ(state.content_type, "application/json");
  EXPECT_NE(state.body.find("\"state\":\"queued\""), std::string::npos);

  JobPage& j = live_.jobs[id];
  j.view.state = queue::JobView::State::kDone;
  j.view.result = queue::JobResult{testing::OkVerdict("x</script>", 2.0), "embedded", 1};
  Response done = site->Handle(Get(path));
  EXPECT_EQ(done.body.find("data-poll"), std::string::npos);
  EXPECT_NE(done.body.find("st-ok"), std::string::npos);
  EXPECT_NE(done.body.find("2.00x"), std::string::npos);
  EXPECT_NE(site->Handle(Get(path + "/state")).body.find("\"status\":\"ok\""), std::string::npos);
  EXPECT_EQ(site->Handle(Get("/ui/jobs/" + std::string(64, 'f'))).code, 404);
}

TEST_F(SiteTest, LiveViewShowsTheServicesNumbers) {
  auto site = Make(false);
  live_.stats.engine = "embedded";
  live_.stats.stats.verdicts = {{"ok", 3}, {"cheat", 1}};
  live_.stats.stats.queue_depth = {{"build", 2}};
  live_.stats.routes = {{"reward", 10, 1, 0.2, 0.1, 0.5}};
  RecentJob j;
  j.id = std::string(64, 'e');
  j.problem_id = "level1/<relu>";
  j.route = "reward";
  j.state = queue::JobView::State::kDone;
  j.status = "cheat";
  live_.stats.recent = {j};
  Response r = site->Handle(Get("/ui/live"));
  ASSERT_EQ(r.code, 200);
  EXPECT_NE(r.body.find("data-refresh=\"/ui/live/panel\""), std::string::npos);
  EXPECT_NE(r.body.find("queue build"), std::string::npos);
  EXPECT_NE(r.body.find("level1/&lt;relu&gt;"), std::string::npos);
  EXPECT_NE(r.body.find("href=\"/ui/jobs/" + j.id + "\""), std::string::npos);
  // A rate once two samples a minute apart exist: 6 more verdicts in 60 s.
  now_s_ += 60;
  live_.stats.stats.verdicts["ok"] = 9;
  Response panel = site->Handle(Get("/ui/live/panel"));
  EXPECT_EQ(panel.body.find("<html"), std::string::npos);
  EXPECT_NE(panel.body.find("6 / min"), std::string::npos);
}

}  // namespace
}  // namespace kf::web
