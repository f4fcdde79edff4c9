#include "serve/problems.h"

#include <gtest/gtest.h>

namespace kf::serve {
namespace {

// An unknown problem's error advises only what this service takes: sending the problem's text
// is advice only where inline problems are allowed (issue 31: a server that refuses them said
// to send problem_source).
TEST(ProblemRegistry, AnUnknownIdAdvisesOnlyWhatTheServiceTakes) {
  ProblemRegistry registry;
  ItemRequest item;
  item.problem = "level9/nope";
  item.field = "labels[2]";
  auto refused = registry.MakeJob(item, "cpu", "s");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kNotFound);
  EXPECT_NE(refused.status().message().find("unknown problem 'level9/nope' in 'labels[2]'"),
            std::string::npos);
  EXPECT_NE(refused.status().message().find("GET /v1/problems"), std::string::npos);
  EXPECT_EQ(refused.status().message().find("problem_source"), std::string::npos)
      << refused.status().message();
  registry.AllowInline(true);
  auto allowed = registry.MakeJob(item, "cpu", "s");
  ASSERT_FALSE(allowed.ok());
  EXPECT_NE(allowed.status().message().find("problem_source"), std::string::npos);
}

}  // namespace
}  // namespace kf::serve
