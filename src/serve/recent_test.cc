#include "serve/recent.h"

#include <gtest/gtest.h>

namespace kf::serve {
namespace {

queue::JobSpec Job(const std::string& id, size_t bytes) {
  queue::JobSpec j;
  j.id = id;
  j.problem_id = "level1/relu";
  j.candidate = std::string(bytes, 'x');
  return j;
}

TEST(RecentJobs, NewestFirstBoundedAndResubmissionsMoveUp) {
  RecentJobs r(3, 1000);
  r.Add(Job("a", 10), "reward", 1);
  r.Add(Job("b", 10), "evaluations", 2);
  r.Add(Job("c", 10), "ui", 3);
  r.Add(Job("a", 10), "ui", 4);
  auto n = r.Newest(10);
  ASSERT_EQ(n.size(), 3u);
  EXPECT_EQ(n[0].id, "a");
  EXPECT_EQ(n[0].route, "ui");
  EXPECT_EQ(n[0].submitted_at_ms, 4);
  EXPECT_TRUE(n[0].candidate.empty());  // Newest leaves texts out
  r.Add(Job("d", 10), "ui", 5);
  EXPECT_FALSE(r.Find("b").has_value());  // the oldest went
  ASSERT_TRUE(r.Find("c").has_value());
  EXPECT_EQ(r.Find("c")->candidate.size(), 10u);
  EXPECT_EQ(r.Newest(1).size(), 1u);
}

TEST(RecentJobs, TextsStayWithinTheirBudgetNewestKept) {
  RecentJobs r(10, 100);
  r.Add(Job("a", 60), "ui", 1);
  r.Add(Job("b", 60), "ui", 2);
  EXPECT_TRUE(r.Find("a")->candidate.empty());
  EXPECT_EQ(r.Find("b")->candidate.size(), 60u);
  r.Add(Job("big", 500), "ui", 3);  // larger than the whole budget: its id is kept, not its text
  EXPECT_TRUE(r.Find("big")->candidate.empty());
  EXPECT_EQ(r.Find("b")->candidate.size(), 60u);
}

}  // namespace
}  // namespace kf::serve
