#include <gtest/gtest.h>

#include "mcp/mcp.h"

namespace kf::mcp {
namespace {

using nlohmann::json;

const json kSchema = {{"type", "object"},
                      {"properties",
                       {{"problem", {{"type", "string"}}},
                        {"samples", {{"type", "integer"}, {"minimum", 1}, {"maximum", 64}}},
                        {"target", {{"type", "number"}, {"minimum", 0}}},
                        {"best", {{"type", {"object", "null"}}}}}},
                      {"required", {"problem"}},
                      {"additionalProperties", false}};

TEST(CheckArguments, ConformingArgumentsPass) {
  EXPECT_EQ(CheckArguments(kSchema, {{"problem", "level1/relu"}}), "");
  EXPECT_EQ(CheckArguments(kSchema, {{"problem", "p"}, {"samples", 64}, {"target", 1.5}}), "");
  EXPECT_EQ(CheckArguments(kSchema, {{"problem", "p"}, {"samples", 2.0}}), "");  // integral
  EXPECT_EQ(CheckArguments(kSchema, {{"problem", "p"}, {"best", nullptr}}), "");
}

TEST(CheckArguments, EachFailureNamesTheArgument) {
  EXPECT_EQ(CheckArguments(kSchema, json::object()), "argument 'problem' is required");
  EXPECT_EQ(CheckArguments(kSchema, {{"problem", 3}}),
            "argument 'problem' must be a string (got an integer)");
  EXPECT_EQ(CheckArguments(kSchema, {{"problem", "p"}, {"samples", "4"}}),
            "argument 'samples' must be an integer (got a string)");
  EXPECT_EQ(CheckArguments(kSchema, {{"problem", "p"}, {"samples", 2.5}}),
            "argument 'samples' must be an integer (got a number)");
  EXPECT_EQ(CheckArguments(kSchema, {{"problem", "p"}, {"samples", 0}}),
            "argument 'samples' must be at least 1 (got 0)");
  EXPECT_EQ(CheckArguments(kSchema, {{"problem", "p"}, {"samples", 100}}),
            "argument 'samples' must be at most 64 (got 100)");
  EXPECT_EQ(CheckArguments(kSchema, {{"problem", "p"}, {"target", -1}}),
            "argument 'target' must be at least 0 (got -1)");
  EXPECT_EQ(CheckArguments(kSchema, {{"problem", "p"}, {"best", 1}}),
            "argument 'best' must be an object or null (got an integer)");
  EXPECT_EQ(CheckArguments(kSchema, {{"problem", "p"}, {"x", 1}}),
            "unknown argument 'x' (arguments: best, problem, samples, target)");
  EXPECT_EQ(CheckArguments(kSchema, json::array()), "the arguments must be an object");
}

}  // namespace
}  // namespace kf::mcp
