#include "execute/timing.h"

#include <gtest/gtest.h>

namespace kf::execute {
namespace {

TEST(Summarize, QuantilesInterpolate) {
  Summary s = Summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(s.n, 5);
  EXPECT_DOUBLE_EQ(s.median_ms, 3);
  EXPECT_DOUBLE_EQ(s.p25_ms, 2);
  EXPECT_DOUBLE_EQ(s.p75_ms, 4);
  EXPECT_NEAR(s.p10_ms, 1.4, 1e-12);
  EXPECT_NEAR(s.p90_ms, 4.6, 1e-12);
}

TEST(Summarize, QuantilesSpanMinToMax) {
  std::vector<double> q = Quantiles({5, 1, 3, 2, 4}, 4);
  ASSERT_EQ(q.size(), 5u);
  EXPECT_DOUBLE_EQ(q[0], 1);
  EXPECT_DOUBLE_EQ(q[2], 3);
  EXPECT_DOUBLE_EQ(q[4], 5);
  EXPECT_TRUE(Quantiles({}, 20).empty());
}

TEST(Summarize, EmptyIsZero) {
  Summary s = Summarize({});
  EXPECT_EQ(s.n, 0);
  EXPECT_EQ(s.median_ms, 0);
}

TEST(StoppingRule, StopsWhenStable) {
  TimingOptions o;
  StoppingRule rule(o);
  std::vector<double> samples;
  int guard = 0;
  while (int k = rule.Next(samples)) {
    for (int i = 0; i < k; ++i) samples.push_back(1.0 + 0.001 * (i % 3));
    ASSERT_LT(++guard, 100);
  }
  EXPECT_EQ(rule.reason(), "stable");
  EXPECT_GE(static_cast<int>(samples.size()), o.min_samples);
}

TEST(StoppingRule, NoisySamplesStopOnBudget) {
  TimingOptions o;
  o.budget_ms = 100;
  StoppingRule rule(o);
  std::vector<double> samples;
  int i = 0;
  while (int k = rule.Next(samples)) {
    for (int j = 0; j < k; ++j, ++i) samples.push_back(i % 2 ? 1.0 : 3.0);  // 100% spread
  }
  EXPECT_EQ(rule.reason(), "budget");
  double spent = 0;
  for (double s : samples) spent += s;
  EXPECT_GE(spent, o.budget_ms);
  EXPECT_LT(spent, o.budget_ms + 3.0 + 1e-9);  // at most one call past the budget
}

TEST(StoppingRule, NeverExceedsMaxSamples) {
  TimingOptions o;
  o.max_samples = 37;
  o.budget_ms = 1e9;
  StoppingRule rule(o);
  std::vector<double> samples;
  int i = 0;
  while (int k = rule.Next(samples)) {
    for (int j = 0; j < k; ++j, ++i) samples.push_back(i % 2 ? 0.01 : 0.05);
  }
  EXPECT_EQ(rule.reason(), "max_samples");
  EXPECT_EQ(samples.size(), 37u);
}

TEST(StoppingRule, SlowCallsStillGetMinSamples) {
  TimingOptions o;
  o.budget_ms = 10;  // a single call costs more than the whole budget
  StoppingRule rule(o);
  std::vector<double> samples;
  int i = 0;
  while (int k = rule.Next(samples)) {
    for (int j = 0; j < k; ++j, ++i) samples.push_back(i % 2 ? 50.0 : 80.0);
  }
  EXPECT_EQ(static_cast<int>(samples.size()), o.min_samples);
}

TEST(StoppingRule, BatchesAreSizedFromCallCost) {
  TimingOptions o;
  StoppingRule rule(o);
  std::vector<double> samples;
  for (int i = 0; i < 10; ++i) samples.push_back(i % 2 ? 0.05 : 0.15);  // noisy: no stop
  int k = rule.Next(samples);
  EXPECT_GT(k, 100);  // ~0.1 ms per call, 50 ms batches
}

}  // namespace
}  // namespace kf::execute
