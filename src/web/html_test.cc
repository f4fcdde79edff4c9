#include "web/html.h"

#include <gtest/gtest.h>

#include "web/diff.h"
#include "web/session.h"

namespace kf::web {
namespace {

TEST(Html, EscapesEveryCharacterThatCouldBecomeMarkup) {
  EXPECT_EQ(H("<a href=\"x\" onclick='y'>&</a>"),
            "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
  EXPECT_EQ(H("plain \xc3\xa9"), "plain \xc3\xa9");
}

TEST(Html, UrlComponentsAndForms) {
  EXPECT_EQ(U("level1/relu x&y"), "level1%2Frelu%20x%26y");
  EXPECT_EQ(U("level1/relu", true), "level1/relu");
  auto f = ParseForm("a=1&b=x+y%3C%2F&c&a=2&bad=%zz%4");
  EXPECT_EQ(f["a"], "1");  // the first value wins
  EXPECT_EQ(f["b"], "x y</");
  EXPECT_EQ(f["c"], "");
  EXPECT_EQ(f["bad"], "%zz%4");
  EXPECT_TRUE(IsHex64(std::string(64, 'a')));
  EXPECT_FALSE(IsHex64(std::string(64, 'A')));
  EXPECT_FALSE(IsHex64("../x"));
  int64_t id = 0;
  EXPECT_TRUE(ParseId("42", &id));
  EXPECT_EQ(id, 42);
  EXPECT_FALSE(ParseId("4x", &id));
  EXPECT_FALSE(ParseId("-1", &id));
  EXPECT_FALSE(ParseId("", &id));
}

TEST(Diff, MarksRemovedAndAddedLines) {
  auto d = DiffLines("a\nb\nc\nd\n", "a\nB\nc\nd\ne\n");
  ASSERT_TRUE(d.has_value());
  std::string ops;
  for (const auto& l : *d) {
    ops += l.op == DiffLine::Op::kSame ? '=' : l.op == DiffLine::Op::kAdded ? '+' : '-';
  }
  EXPECT_EQ(ops, "=-+==+");
  EXPECT_EQ((*d)[1].text, "b");
  EXPECT_EQ((*d)[1].a_line, 2);
  EXPECT_EQ((*d)[5].b_line, 5);
  auto same = DiffLines("x\ny", "x\ny");
  ASSERT_TRUE(same.has_value());
  for (const auto& l : *same) EXPECT_EQ(l.op, DiffLine::Op::kSame);
  std::string big_a, big_b;
  for (int i = 0; i < 300; ++i) {
    big_a += "a" + std::to_string(i) + "\n";
    big_b += "b" + std::to_string(i) + "\n";
  }
  EXPECT_FALSE(DiffLines(big_a, big_b, 1000).has_value());
  EXPECT_TRUE(DiffLines(big_a, big_b).has_value());
}

TEST(Sessions, CookiesAreSignedAndExpire) {
  Sessions s(std::string(32, 'k'));
  const std::string c = s.Issue(1000, 60);
  EXPECT_TRUE(s.Valid(c, 1000));
  EXPECT_TRUE(s.Valid(c, 1059));
  EXPECT_FALSE(s.Valid(c, 1060));
  EXPECT_FALSE(Sessions(std::string(32, 'j')).Valid(c, 1000));  // another process's key
  EXPECT_FALSE(s.Valid("9999999999" + c.substr(c.find('.')), 1000));
  EXPECT_FALSE(s.Valid("", 1000));
  EXPECT_FALSE(s.Valid("abc.def", 1000));
  EXPECT_FALSE(Sessions("").Valid(Sessions("").Issue(1000, 60), 1000));  // no key, no sessions
  EXPECT_TRUE(s.CsrfOk(c, s.Csrf(c)));
  EXPECT_FALSE(s.CsrfOk(c, s.Csrf("")));
  EXPECT_FALSE(s.CsrfOk(c, ""));
  EXPECT_EQ(Sessions::RandomKey().size(), 32u);
  EXPECT_NE(Sessions::RandomKey(), Sessions::RandomKey());
}

TEST(Sessions, CookieHeaderParsing) {
  EXPECT_EQ(CookieValue("a=1; kforge_session=x.y; b=2", "kforge_session"), "x.y");
  EXPECT_EQ(CookieValue("kforge_session_old=1", "kforge_session"), "");
  EXPECT_EQ(CookieValue("", "kforge_session"), "");
}

}  // namespace
}  // namespace kf::web
