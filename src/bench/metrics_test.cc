#include "bench/metrics.h"

#include <gtest/gtest.h>

#include <cmath>

#include "bench/report.h"

namespace kf::bench {
namespace {

// C(n-c,k)/C(n,k) written as prod_{i<c} (n-k-i)/(n-i): a different route to the same number.
double ExactFail(int n, int c, int k) {
  double r = 1;
  for (int i = 0; i < c; ++i) r *= static_cast<double>(n - k - i) / (n - i);
  return r;
}

TEST(PassAtK, SmallCasesByHand) {
  EXPECT_DOUBLE_EQ(PassAtK(5, 0, 1), 0.0);
  EXPECT_DOUBLE_EQ(PassAtK(5, 5, 3), 1.0);
  EXPECT_NEAR(PassAtK(5, 2, 1), 0.4, 1e-12);
  EXPECT_NEAR(PassAtK(5, 2, 2), 0.7, 1e-12);              // 1 - 3/10
  EXPECT_NEAR(PassAtK(10, 3, 5), 1 - 21.0 / 252, 1e-12);  // C(7,5)=21, C(10,5)=252
  EXPECT_DOUBLE_EQ(PassAtK(5, 3, 3), 1.0);                // only 2 failures: any 3 hold a pass
  EXPECT_DOUBLE_EQ(PassAtK(1, 1, 1), 1.0);
}

TEST(PassAtK, StableWhereBinomialsOverflow) {
  // C(1000, 500) is about 1e299; the product form never builds it.
  for (auto [n, c, k] : {std::tuple{1000, 1, 1}, {1000, 7, 500}, {200, 10, 100}, {1000, 999, 1}}) {
    double got = PassAtK(n, c, k);
    EXPECT_TRUE(std::isfinite(got));
    EXPECT_NEAR(got, 1 - ExactFail(n, c, k), 1e-12) << n << " " << c << " " << k;
  }
  EXPECT_NEAR(PassAtK(1000, 1, 1), 0.001, 1e-15);
}

Sample S(std::string level, std::string problem, VerdictStatus st,
         std::optional<double> eager = std::nullopt, std::optional<double> compile = std::nullopt) {
  return {std::move(level), std::move(problem), st, eager, compile, ""};
}

// Faster Rate and fast_p count a speedup only where its interval clears the threshold; a
// verdict without an interval (before format 8) counts by its point estimate; the option off
// counts every point estimate.
TEST(Metrics, SignificanceUsesTheIntervalsLowerEnd) {
  using VS = VerdictStatus;
  std::vector<Sample> s = {S("level1", "a", VS::kOk, 1.5), S("level1", "a", VS::kOk, 1.5),
                           S("level1", "a", VS::kOk, 1.5)};
  s[0].speedup_vs_eager_lo = 1.4;   // shown faster than 1.1x
  s[1].speedup_vs_eager_lo = 0.95;  // not shown faster than anything
  Metrics m = Compute(s, {.k = 1});
  EXPECT_NEAR(m.overall.faster_rate_vs_eager, 2.0 / 3, 1e-12);  // s[0] and s[2] (no interval)
  bool fast_1 = false;
  for (auto [p, v] : m.overall.fast_p) {
    if (p == 1.0) {
      fast_1 = true;
      EXPECT_NEAR(v, 2.0 / 3, 1e-12);
    }
  }
  EXPECT_TRUE(fast_1) << "fast_1 is one of the fast_p thresholds";
  Metrics old = Compute(s, {.k = 1, .significance = false});
  EXPECT_NEAR(old.overall.faster_rate_vs_eager, 1.0, 1e-12);
}

TEST(Metrics, EveryNumberOfAMixedRun) {
  using VS = VerdictStatus;
  std::vector<Sample> s = {
      S("level1", "a", VS::kOk, 2.0),      S("level1", "a", VS::kOk, 0.5),
      S("level1", "a", VS::kIncorrect),    S("level1", "a", VS::kCompileError),
      S("level1", "b", VS::kOk, 1.2, 0.9), S("level1", "b", VS::kInfraError),
      S("level1", "b", VS::kRuntimeError), S("level2", "c", VS::kCheat),
      S("level2", "c", VS::kTimeout),      S("level2", "d", VS::kInfraError),
  };
  Metrics m = Compute(s, {.k = 2});

  ASSERT_EQ(m.problems.size(), 4u);
  const ProblemMetrics& a = m.problems[0];
  EXPECT_EQ(a.problem, "a");
  EXPECT_EQ(a.n, 4);
  EXPECT_EQ(a.c, 2);
  EXPECT_NEAR(a.pass_at_k, 5.0 / 6, 1e-12);  // 1 - C(2,2)/C(4,2)
  EXPECT_NEAR(a.pass_at_1, 0.5, 1e-12);
  EXPECT_NEAR(a.avg_at_k, 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(*a.best_speedup_vs_eager, 2.0);
  EXPECT_NEAR(*a.geomean_speedup_vs_eager, 1.0, 1e-12);  // sqrt(2 * 0.5)
  const ProblemMetrics& b = m.problems[1];
  EXPECT_EQ(b.n, 2);  // the infra_error is not counted
  EXPECT_EQ(b.k_used, 2);
  EXPECT_DOUBLE_EQ(b.pass_at_k, 1.0);
  EXPECT_EQ(b.status_counts.at("infra_error"), 1);
  const ProblemMetrics& d = m.problems[3];
  EXPECT_EQ(d.n, 0);
  EXPECT_EQ(d.k_used, 0);

  const Aggregate& o = m.overall;
  EXPECT_EQ(o.problems, 3);
  EXPECT_EQ(o.samples, 8);
  EXPECT_EQ(o.correct, 3);
  EXPECT_EQ(o.infra_errors, 2);
  EXPECT_NEAR(o.pass_at_k, (5.0 / 6 + 1 + 0) / 3, 1e-12);
  EXPECT_NEAR(o.pass_at_1, (0.5 + 0.5 + 0) / 3, 1e-12);
  EXPECT_NEAR(o.avg_at_k, (0.5 + 0.5 + 0) / 3, 1e-12);
  EXPECT_NEAR(o.faster_rate_vs_eager, 2.0 / 8, 1e-12);  // 2.0 and 1.2
  ASSERT_TRUE(o.faster_rate_vs_compile.has_value());
  EXPECT_NEAR(*o.faster_rate_vs_compile, 0.0, 1e-12);
  std::vector<std::pair<double, double>> fast = {{0, 3.0 / 8}, {0.5, 2.0 / 8}, {0.8, 2.0 / 8},
                                                 {1, 2.0 / 8}, {1.5, 1.0 / 8}, {2, 0.0}};
  ASSERT_EQ(o.fast_p.size(), fast.size());
  for (size_t i = 0; i < fast.size(); ++i) {
    EXPECT_EQ(o.fast_p[i].first, fast[i].first);
    EXPECT_NEAR(o.fast_p[i].second, fast[i].second, 1e-12) << "p=" << fast[i].first;
  }
  EXPECT_NEAR(*o.geomean_speedup_vs_eager, std::cbrt(2.0 * 0.5 * 1.2), 1e-12);
  EXPECT_NEAR(*o.geomean_speedup_vs_compile, 0.9, 1e-12);
  EXPECT_EQ(o.status_counts.at("ok"), 3);
  EXPECT_EQ(o.status_counts.at("infra_error"), 2);
  EXPECT_EQ(o.status_counts.at("cheat"), 1);

  const Aggregate& l1 = m.per_level.at("level1");
  EXPECT_EQ(l1.problems, 2);
  EXPECT_EQ(l1.samples, 6);
  EXPECT_NEAR(l1.pass_at_k, (5.0 / 6 + 1) / 2, 1e-12);
  EXPECT_NEAR(l1.faster_rate_vs_eager, 2.0 / 6, 1e-12);
  const Aggregate& l2 = m.per_level.at("level2");
  EXPECT_EQ(l2.problems, 1);  // d has no counted sample
  EXPECT_EQ(l2.samples, 2);
  EXPECT_DOUBLE_EQ(l2.pass_at_k, 0.0);
  EXPECT_FALSE(l2.faster_rate_vs_compile.has_value());  // no torch.compile time at all
  EXPECT_FALSE(l2.geomean_speedup_vs_eager.has_value());
}

TEST(Metrics, FewerSamplesThanKUsesAllOfThem) {
  std::vector<Sample> s = {S("l", "p", VerdictStatus::kOk), S("l", "p", VerdictStatus::kIncorrect)};
  Metrics m = Compute(s, {.k = 8});
  EXPECT_EQ(m.problems[0].k_used, 2);
  EXPECT_DOUBLE_EQ(m.problems[0].pass_at_k, 1.0);
  EXPECT_NEAR(m.overall.fast_p[0].second, 0.5, 1e-12);  // ok without a speedup counts for p = 0
  EXPECT_NEAR(m.overall.fast_p[1].second, 0.0, 1e-12);
  EXPECT_FALSE(m.overall.geomean_speedup_vs_eager.has_value());
}

TEST(Metrics, NoSamplesGivesZeros) {
  Metrics m = Compute({}, {.k = 1});
  EXPECT_EQ(m.overall.samples, 0);
  EXPECT_EQ(m.overall.pass_at_k, 0.0);
  EXPECT_TRUE(m.problems.empty());
}

// A mixed run: each family is measured as if it were the whole run.
TEST(Metrics, PerFamily) {
  auto S = [](const char* problem, VerdictStatus st, std::optional<double> sp, const char* fam) {
    Sample s{"level1", problem, st, sp, std::nullopt, ""};
    s.family = fam;
    return s;
  };
  const auto ok = VerdictStatus::kOk;
  std::vector<Sample> samples = {S("relu", ok, 2.0, "load_inline"),
                                 S("relu", VerdictStatus::kCheat, {}, "load_inline"),
                                 S("relu", ok, 1.5, "triton"),
                                 S("softmax", ok, 4.0, "triton"),
                                 S("softmax", VerdictStatus::kInfraError, {}, "triton")};
  Metrics m = Compute(samples, {});
  ASSERT_EQ(m.per_family.size(), 2u);
  const Aggregate& li = m.per_family.at("load_inline");
  const Aggregate& tr = m.per_family.at("triton");
  EXPECT_EQ(li.problems, 1);
  EXPECT_EQ(li.samples, 2);
  EXPECT_DOUBLE_EQ(li.pass_at_1, 0.5);
  EXPECT_EQ(tr.problems, 2);
  EXPECT_EQ(tr.samples, 2);
  EXPECT_EQ(tr.infra_errors, 1);
  EXPECT_DOUBLE_EQ(tr.pass_at_1, 1.0);
  EXPECT_NEAR(*tr.geomean_speedup_vs_eager, std::sqrt(6.0), 1e-12);
  EXPECT_EQ(m.overall.samples, 4);
  // The summary shows a column per family only when there are two or more.
  Table t = SummaryTable(m);
  EXPECT_EQ(t.columns, (std::vector<std::string>{"overall", "level1", "load_inline", "triton"}));
  samples.resize(2);
  EXPECT_EQ(SummaryTable(Compute(samples, {})).columns,
            (std::vector<std::string>{"overall", "level1"}));
  // Samples of no known family are left out of per_family.
  for (auto& s : samples) s.family.clear();
  EXPECT_TRUE(Compute(samples, {}).per_family.empty());
}

}  // namespace
}  // namespace kf::bench
