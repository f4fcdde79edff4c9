#include "common/tolerance.h"

#include <gtest/gtest.h>

namespace kf {
namespace {

using Map = std::map<std::string, double>;

TEST(Tolerances, DefaultsNameEveryFloatingDtypeTheJudgeCompares) {
  const Map expected = {
      {"float32", 1e-4}, {"float64", 1e-7}, {"float16", 1e-2}, {"bfloat16", 1e-2}};
  Tolerances t = DefaultTolerances();
  EXPECT_EQ(t.atol, expected);
  EXPECT_EQ(t.rtol, expected);
}

TEST(Tolerances, NegativeOverridesKeepTheDefaults) {
  Tolerances t = DefaultTolerances(-1, -1);
  EXPECT_EQ(t.atol, DefaultTolerances().atol);
  EXPECT_EQ(t.rtol, DefaultTolerances().rtol);
}

// --atol and --rtol change float32 only, each its own map; the other dtypes keep theirs.
TEST(Tolerances, OverridesChangeFloat32Only) {
  Tolerances t = DefaultTolerances(1e-2, 5e-3);
  Map atol = DefaultTolerances().atol, rtol = DefaultTolerances().rtol;
  atol["float32"] = 1e-2;
  rtol["float32"] = 5e-3;
  EXPECT_EQ(t.atol, atol);
  EXPECT_EQ(t.rtol, rtol);
  Tolerances only_atol = DefaultTolerances(1e-2);
  EXPECT_EQ(only_atol.atol, atol);
  EXPECT_EQ(only_atol.rtol, DefaultTolerances().rtol);
}

// Zero is an override (exact comparison), not "the default".
TEST(Tolerances, ZeroIsAnOverride) {
  Tolerances t = DefaultTolerances(0, 0);
  EXPECT_EQ(t.atol.at("float32"), 0.0);
  EXPECT_EQ(t.rtol.at("float32"), 0.0);
  EXPECT_EQ(t.atol.at("float16"), 1e-2);
}

}  // namespace
}  // namespace kf
