#include "score/mirrorpop.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace kf::score {
namespace {
using nlohmann::json;

// A number, or "inf" / "-inf" / "nan" (JSON has no such numbers).
double Num(const json& j) {
  if (j.is_string()) return std::strtod(j.get<std::string>().c_str(), nullptr);
  return j.get<double>();
}

std::vector<std::vector<double>> Matrix(const json& j) {
  std::vector<std::vector<double>> m;
  for (const auto& row : j) {
    m.emplace_back();
    for (const auto& x : row) m.back().push_back(Num(x));
  }
  return m;
}

// The vectors examples/rl/mirrorpop.py is checked against too (tests/rl/test_mirrorpop.py).
TEST(MirrorPopTest, SharedVectors) {
  std::ifstream f(std::string(KFORGE_SOURCE_DIR) + "/tests/rl/mirrorpop_vectors.json");
  ASSERT_TRUE(f.good());
  json doc = json::parse(f);
  ASSERT_GE(doc["cases"].size(), 8u);
  for (const auto& c : doc["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    MirrorPopInput in;
    in.delta = Num(c["delta"]);
    in.logp_trainer = Matrix(c["logp_trainer"]);
    in.logp_rollout = Matrix(c["logp_rollout"]);
    for (const auto& row : c["mask"]) {
      in.mask.emplace_back();
      for (const auto& x : row) in.mask.back().push_back(static_cast<uint8_t>(x.get<int>()));
    }
    auto r = MirrorPop(in);
    if (c.value("error", false)) {
      EXPECT_FALSE(r.ok());
      EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
      continue;
    }
    ASSERT_TRUE(r.ok()) << r.status().message();
    const json& want_mean = c["mean_abs_log_ratio"];
    ASSERT_EQ(r->mean_abs_log_ratio.size(), want_mean.size());
    ASSERT_EQ(r->keep.size(), c["keep"].size());
    for (size_t i = 0; i < want_mean.size(); ++i) {
      const double want = Num(want_mean[i]);
      const double got = r->mean_abs_log_ratio[i];
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << i;
      } else if (std::isinf(want)) {
        EXPECT_EQ(got, want) << i;
      } else {
        EXPECT_NEAR(got, want, 1e-12) << i;
      }
      EXPECT_EQ(r->keep[i], c["keep"][i].get<bool>()) << i;
    }
  }
}

TEST(MirrorPopTest, NonFiniteDeltaIsRefused) {
  MirrorPopInput in;
  in.delta = std::nan("");
  EXPECT_FALSE(MirrorPop(in).ok());
  in.delta = INFINITY;
  EXPECT_FALSE(MirrorPop(in).ok());
}

TEST(MirrorPopTest, RowsOfDifferentLengthsAreRefused) {
  MirrorPopInput in;
  in.delta = 1;
  in.logp_trainer = {{-1, -1}, {-1}};
  in.logp_rollout = {{-1, -1}, {-1}};
  in.mask = {{1, 1}, {1}};
  EXPECT_FALSE(MirrorPop(in).ok());
}

TEST(MirrorPopTest, EmptyBatch) {
  MirrorPopInput in;
  auto r = MirrorPop(in);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->keep.empty());
}

}  // namespace
}  // namespace kf::score
