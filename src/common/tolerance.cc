#include "common/tolerance.h"

#include <nlohmann/json.hpp>

namespace kf {

Tolerances DefaultTolerances(double float32_atol, double float32_rtol) {
  // float32 at 1e-4 is stricter than KernelBench v0's 1e-2: TF32 or half arithmetic in an fp32
  // problem misses it (H13). float16 and bfloat16 keep 1e-2, about their rounding error over
  // a long reduction.
  const std::map<std::string, double> table = {
      {"float32", 1e-4}, {"float64", 1e-7}, {"float16", 1e-2}, {"bfloat16", 1e-2}};
  Tolerances t{table, table};
  if (float32_atol >= 0) t.atol["float32"] = float32_atol;
  if (float32_rtol >= 0) t.rtol["float32"] = float32_rtol;
  return t;
}

std::vector<std::string> ToleranceFlags(const Tolerances& t) {
  return {"--atol", nlohmann::json(t.atol).dump(), "--rtol", nlohmann::json(t.rtol).dump()};
}

}  // namespace kf
