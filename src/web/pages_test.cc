// The pages' content: what a reader of each page relies on, and that no stored text becomes
// markup.
#include "web/pages.h"

#include "common/rules.h"
#include "web/testing.h"

namespace kf::web {
namespace {

using testing::kHostile;

class PagesTest : public testing::WebTest {
 protected:
  // Two runs of two models over level1/relu: the hostile cheat, and honest kernels.
  void Fill() {
    const std::string honest = "class ModelNew: pass  # honest\n";
    const std::string faster = "class ModelNew: pass  # faster\n";
    cheat_key_ = std::string(64, 'a');
    ok_key_ = std::string(64, 'b');
    ASSERT_TRUE(store_->PutVerdict(cheat_key_, testing::CheatVerdict(kHostile)).ok());
    ASSERT_TRUE(store_->PutVerdict(ok_key_, testing::OkVerdict(honest, 1.5)).ok());
    ASSERT_TRUE(store_
                    ->PutTexts({{Sha256Hex(kHostile), kHostile},
                                {Sha256Hex(honest), honest},
                                {Sha256Hex(faster), faster},
                                {Sha256Hex("problem text"), "class Model: # <ref>\n"}})
                    .ok());
    auto row = [](const std::string& key, const std::string& text, const std::string& status,
                  std::optional<double> speedup, int index) {
      store::RunSampleRow r;
      r.level = "level1";
      r.problem = "relu";
      r.problem_id = "level1/relu";
      r.index = index;
      r.sample_path = "s/level1/relu/sample_" + std::to_string(index) + "<i>.py";
      r.verdict_key = key;
      r.problem_hash = Sha256Hex("problem text");
      r.candidate_hash = Sha256Hex(text);
      r.status = status;
      r.speedup_vs_eager = speedup;
      return r;
    };
    store::RunRow a;
    a.model = "model<a>";
    a.started_at = "2026-12-01T10:00:00Z";
    a.overall = {{"pass_at_1", 0.5}};
    ASSERT_TRUE(store_
                    ->RecordRun(a, {row(cheat_key_, kHostile, "cheat", std::nullopt, 0),
                                    row(ok_key_, honest, "ok", 1.5, 1)})
                    .ok());
    store::RunRow b = a;
    b.model = "model-b";
    ASSERT_TRUE(store_->RecordRun(b, {row("", faster, "ok", 3.0, 0)}).ok());
  }

  Response Page(const std::string& path, const std::string& query = "") {
    Site site(SiteOptions{}, store_.get(), nullptr, nullptr);
    return site.Handle(Get(path, query));
  }

  std::string cheat_key_, ok_key_;
};

TEST_F(PagesTest, EmptyStoreSaysHowToRecordARun) {
  Response r = Page("/");
  EXPECT_EQ(r.code, 200);
  EXPECT_NE(r.body.find("No runs in this store yet"), std::string::npos);
  EXPECT_NE(r.body.find("kforge bench"), std::string::npos);
}

TEST_F(PagesTest, RunsListAndRunPage) {
  Fill();
  Response list = Page("/ui/runs");
  ASSERT_EQ(list.code, 200);
  EXPECT_NE(list.body.find("model&lt;a&gt;"), std::string::npos);
  EXPECT_EQ(list.body.find("model<a>"), std::string::npos);
  EXPECT_NE(list.body.find("href=\"/ui/runs/2\""), std::string::npos);
  EXPECT_NE(list.body.find("action=\"/ui/compare\""), std::string::npos);

  Response run = Page("/ui/runs/1");
  ASSERT_EQ(run.code, 200);
  EXPECT_NE(run.body.find("pass@1"), std::string::npos);
  EXPECT_NE(run.body.find("50.0%"), std::string::npos);  // one of two samples ok
  EXPECT_NE(run.body.find("/ui/verdicts/" + cheat_key_), std::string::npos);
  EXPECT_NE(run.body.find("sample_0&lt;i&gt;.py"), std::string::npos);
  EXPECT_NE(run.body.find("<svg"), std::string::npos);
  EXPECT_EQ(Page("/ui/runs/9").code, 404);
  EXPECT_EQ(Page("/ui/runs/x").code, 404);
}

TEST_F(PagesTest, ABigRunsSamplesComeAPageAtATime) {
  std::vector<store::RunSampleRow> rows;
  for (int i = 0; i < 501; ++i) {
    store::RunSampleRow r;
    r.level = "level1";
    r.problem = "relu";
    r.problem_id = "level1/relu";
    r.index = i;
    r.sample_path = "s/sample_" + std::to_string(i) + ".py";
    r.status = "ok";
    rows.push_back(r);
  }
  ASSERT_TRUE(store_->RecordRun(store::RunRow{}, rows).ok());
  Response one = Page("/ui/runs/1");
  EXPECT_NE(one.body.find("samples 1–500 of 501"), std::string::npos);
  EXPECT_NE(one.body.find("href=\"/ui/runs/1?page=2#samples\""), std::string::npos);
  EXPECT_NE(one.body.find("s/sample_499.py"), std::string::npos);
  EXPECT_EQ(one.body.find("s/sample_500.py"), std::string::npos);
  Response two = Page("/ui/runs/1", "page=2");
  EXPECT_NE(two.body.find("s/sample_500.py"), std::string::npos);
  EXPECT_EQ(two.body.find("s/sample_499.py"), std::string::npos);
  EXPECT_EQ(Page("/ui/runs/1", "page=x").code, 200);
  EXPECT_EQ(Page("/ui/runs/1", "page=99").code, 200);
}

TEST_F(PagesTest, CompareShowsBothRunsAndWhatChanged) {
  Fill();
  Response r = Page("/ui/compare", "a=1&b=2");
  ASSERT_EQ(r.code, 200);
  EXPECT_NE(r.body.find("#1 model&lt;a&gt;"), std::string::npos);
  EXPECT_NE(r.body.find("#2 model-b"), std::string::npos);
  EXPECT_NE(r.body.find("more correct"), std::string::npos);  // 1 of 2 ok, then 1 of 1
  EXPECT_EQ(Page("/ui/compare", "a=1").code, 400);
  EXPECT_EQ(Page("/ui/compare", "a=1&b=7").code, 404);
}

TEST_F(PagesTest, ProblemLeaderboardAndReference) {
  Fill();
  Response list = Page("/ui/problems");
  ASSERT_EQ(list.code, 200);
  EXPECT_NE(list.body.find("level1/relu"), std::string::npos);
  Response p = Page("/ui/problem", "id=level1%2Frelu");
  ASSERT_EQ(p.code, 200);
  const size_t fast = p.body.find("model-b"), slow = p.body.find("model&lt;a&gt;");
  ASSERT_NE(fast, std::string::npos);
  ASSERT_NE(slow, std::string::npos);
  EXPECT_LT(fast, slow);  // 3.00x ranks above 1.50x
  EXPECT_NE(p.body.find("3.00x"), std::string::npos);
  EXPECT_NE(p.body.find("class Model: # &lt;ref&gt;"), std::string::npos);
  EXPECT_EQ(Page("/ui/problem", "id=level9/none").code, 404);
}

TEST_F(PagesTest, VerdictPageEscapesTheKernelAndShowsTheRuleAtItsLine) {
  Fill();
  Response r = Page("/ui/verdicts/" + cheat_key_);
  ASSERT_EQ(r.code, 200);
  // Nothing of the candidate became markup.
  EXPECT_EQ(r.body.find("<img"), std::string::npos);
  EXPECT_EQ(r.body.find("</script><img"), std::string::npos);
  EXPECT_EQ(r.body.find("<b>bold"), std::string::npos);
  EXPECT_EQ(r.body.find("</textarea>"), std::string::npos);
  EXPECT_NE(r.body.find("&lt;/script&gt;&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"),
            std::string::npos);
  EXPECT_NE(r.body.find("&#39;&quot;&amp;amp;"), std::string::npos);
  // The rule, its name, its line, and the diagnostic right under that line of the source.
  EXPECT_NE(r.body.find("Rule H08 · timer-patch"), std::string::npos);
  // What the rule catches and its hint come from the catalog; the hint this verdict was
  // stored with differs from the catalog's, so it is shown too.
  const Rule* h08 = FindRule("H08");
  ASSERT_NE(h08, nullptr);
  EXPECT_NE(r.body.find("Catches: " + H(h08->catches)), std::string::npos);
  EXPECT_NE(r.body.find("<p class=\"hint\">" + H(h08->hint) + "</p>"), std::string::npos);
  EXPECT_NE(r.body.find("given with this verdict: never patch the clock"), std::string::npos);
  EXPECT_NE(r.body.find("href=\"#L2\""), std::string::npos);
  const size_t line2 = r.body.find("<tr id=\"L2\" class=\"hit\">");
  const size_t line3 = r.body.find("<tr id=\"L3\"");
  const size_t note = r.body.find("class=\"diag sev-error\"");
  ASSERT_NE(line2, std::string::npos);
  EXPECT_GT(note, line2);
  EXPECT_LT(note, line3);
  // Other candidates of the problem to diff against.
  EXPECT_NE(r.body.find("name=\"diff\""), std::string::npos);
  EXPECT_EQ(Page("/ui/verdicts/" + std::string(64, 'c')).code, 404);
  EXPECT_EQ(Page("/ui/verdicts/../../etc/passwd").code, 404);
}

TEST_F(PagesTest, VerdictPageTimingAndDiff) {
  Fill();
  const std::string other = Sha256Hex("class ModelNew: pass  # faster\n");
  Response r = Page("/ui/verdicts/" + ok_key_, "diff=" + other);
  ASSERT_EQ(r.code, 200);
  EXPECT_NE(r.body.find("aria-label=\"timing in ms\""), std::string::npos);
  EXPECT_NE(r.body.find("1.50x"), std::string::npos);
  EXPECT_NE(r.body.find("1 lines removed, 1 added"), std::string::npos);
  EXPECT_NE(r.body.find("<tr class=\"add\">"), std::string::npos);
  EXPECT_NE(r.body.find("# honest"), std::string::npos);
}

TEST_F(PagesTest, EveryAnswerCarriesTheSecurityHeaders) {
  Fill();
  for (const char* path : {"/", "/ui/runs/1", "/ui/problems", "/ui/nothing", "/ui/assets/app.js"}) {
    Response r = Page(path);
    EXPECT_NE(Header(r, "Content-Security-Policy").find("script-src 'self'"), std::string::npos)
        << path;
    EXPECT_EQ(Header(r, "X-Content-Type-Options"), "nosniff") << path;
    EXPECT_EQ(Header(r, "X-Frame-Options"), "DENY") << path;
  }
  Response css = Page("/ui/assets/app.css");
  EXPECT_EQ(css.code, 200);
  EXPECT_EQ(css.content_type, "text/css; charset=utf-8");
  EXPECT_NE(css.body.find(".st-cheat"), std::string::npos);
  EXPECT_EQ(Page("/ui/assets/../../etc/passwd").code, 404);
}

TEST_F(PagesTest, ReadOnlyWithoutAServiceHasNoSubmissions) {
  Fill();
  Response r = Page("/ui/submit");
  EXPECT_EQ(r.code, 404);
  EXPECT_NE(r.body.find("Read-only"), std::string::npos);
  EXPECT_EQ(Page("/ui/live").code, 404);
  EXPECT_EQ(Page("/").body.find("href=\"/ui/submit\""), std::string::npos);
}

// Rule names are the catalog's; a note (an info diagnostic that ends nothing) and a code
// outside the catalog get no rule box.
TEST(RuleNameTest, TheCatalogsNamesAndNoneForNotes) {
  for (const Rule& r : Rules()) EXPECT_EQ(RuleName(r.code), r.note ? "" : r.name) << r.code;
  EXPECT_EQ(RuleName("H20"), "escape");
  EXPECT_EQ(RuleName("H03_guard"), "");
  EXPECT_EQ(RuleName("E_BUILD"), "");
  EXPECT_EQ(RuleName(""), "");
}

}  // namespace
}  // namespace kf::web
