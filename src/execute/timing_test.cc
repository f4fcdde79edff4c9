#include "execute/timing.h"

#include <gtest/gtest.h>

#include <random>

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

// The delay covers the warm-up's host time with room, in steps of 25 us x 2^k, capped.
TEST(ChooseDelayUs, CoversTheHostTime) {
  EXPECT_DOUBLE_EQ(ChooseDelayUs({}), 25);
  EXPECT_DOUBLE_EQ(ChooseDelayUs({0.005, 0.006, 0.004}), 25);   // 5 us: 17.5 -> 25
  EXPECT_DOUBLE_EQ(ChooseDelayUs({0.012, 0.013, 0.014}), 50);   // 13 us: 29.5 -> 50
  EXPECT_DOUBLE_EQ(ChooseDelayUs({0.1, 0.2, 0.08}), 200);       // 100 us: 160 -> 200
  EXPECT_DOUBLE_EQ(ChooseDelayUs({500, 600, 700}), kMaxDelayUs);  // a synchronising forward
  // The median, not the slowest call: one preempted call does not set it.
  EXPECT_DOUBLE_EQ(ChooseDelayUs({0.02, 0.02, 5.0}), 50);
  // Warm-up: the first call (lazy initialisation) does not count, unless it is the only one.
  EXPECT_DOUBLE_EQ(WarmupDelayUs({9.0, 0.005, 0.005}), 25);
  EXPECT_DOUBLE_EQ(WarmupDelayUs({0.1}), 200);
}

// Samples drawn around known medians: the interval holds the true ratio, is narrow when the
// samples are, wide when they are noisy, and the same for the same samples.
TEST(RatioInterval, CoversTheRatioAndWidensWithNoise) {
  std::mt19937_64 rng(7);
  auto draw = [&](double median, double spread, int n) {
    std::vector<double> v;
    std::normal_distribution<double> d(median, median * spread);
    for (int i = 0; i < n; ++i) v.push_back(std::max(1e-6, d(rng)));
    return v;
  };
  auto eager = draw(2.0, 0.02, 300), cand = draw(1.0, 0.02, 300);
  auto tight = RatioInterval(eager, cand);
  ASSERT_TRUE(tight.has_value());
  EXPECT_LT(tight->lo, 2.0);
  EXPECT_GT(tight->hi, 2.0);
  EXPECT_LT(tight->hi - tight->lo, 0.05);
  EXPECT_GT(tight->lo, 1.9);
  auto again = RatioInterval(eager, cand);
  EXPECT_DOUBLE_EQ(again->lo, tight->lo);
  EXPECT_DOUBLE_EQ(again->hi, tight->hi);
  auto noisy = RatioInterval(draw(2.0, 0.5, 20), draw(1.0, 0.5, 20));
  ASSERT_TRUE(noisy.has_value());
  EXPECT_GT(noisy->hi - noisy->lo, 0.5);
  EXPECT_FALSE(RatioInterval({1, 2, 3}, cand).has_value());  // too few to say anything
}

// A busy host or a spread the stopping rule could not tame: not stored; a stable quiet one is.
TEST(BaselineDisturbed, LoadAndNoiseAreNotStored) {
  BaselineFacts quiet{Summarize({1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.0, 1.01, 0.99}), "stable",
                      0.5, 100, 0.97, true};
  EXPECT_EQ(BaselineDisturbed(quiet), "");
  BaselineFacts waited = quiet;
  waited.wait_ms = 60;  // the judge waited for a CPU 60% of the time
  EXPECT_NE(BaselineDisturbed(waited).find("waited for a CPU"), std::string::npos);
  BaselineFacts noisy = quiet;
  noisy.summary = Summarize({1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 2, 2});
  noisy.stop_reason = "budget";
  EXPECT_NE(BaselineDisturbed(noisy).find("spread"), std::string::npos);
  BaselineFacts exposed = quiet;
  exposed.hidden_fraction = 0.2;
  EXPECT_NE(BaselineDisturbed(exposed).find("latency"), std::string::npos);
  exposed.gpu = false;  // the CPU backend has no start event to hide behind
  EXPECT_EQ(BaselineDisturbed(exposed), "");
}

}  // namespace
}  // namespace kf::execute
