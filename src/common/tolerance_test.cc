#include "common/tolerance.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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

// lint-problems and synth pass the maps to the runner as flags: each map whole, as a JSON object
// the runner reads back to the same values.
TEST(Tolerances, FlagsCarryBothMapsWhole) {
  const Tolerances t = DefaultTolerances(3e-3, 7e-3);
  const std::vector<std::string> flags = ToleranceFlags(t);
  ASSERT_EQ(flags.size(), 4u);
  EXPECT_EQ(flags[0], "--atol");
  EXPECT_EQ(flags[2], "--rtol");
  EXPECT_EQ(nlohmann::json::parse(flags[1]).get<Map>(), t.atol);
  EXPECT_EQ(nlohmann::json::parse(flags[3]).get<Map>(), t.rtol);
}

}  // namespace
}  // namespace kf
