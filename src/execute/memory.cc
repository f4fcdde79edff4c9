#include "execute/memory.h"

#include <algorithm>

namespace kf::execute {

MemoryFacts MemoryFactsFromJson(const nlohmann::json& j) {
  MemoryFacts m;
  if (!j.is_object()) return m;
  m.input_bytes = j.value("input_bytes", int64_t{0});
  m.output_bytes = j.value("output_bytes", int64_t{0});
  m.free_bytes = j.value("free_bytes", int64_t{0});
  m.plan_bytes = j.value("plan_bytes", int64_t{0});
  return m;
}

int FitTimingPool(int requested, const MemoryFacts& m) {
  requested = std::max(requested, 1);
  const int64_t per_set = 2 * (m.input_bytes + m.output_bytes);
  if (m.free_bytes <= 0 || per_set <= 0) return requested;
  const int64_t fits = (m.free_bytes / 3) / per_set;
  return static_cast<int>(std::clamp<int64_t>(fits, 1, requested));
}

bool ReleaseBetweenPhases(const MemoryFacts& m) {
  return m.plan_bytes > 0 && (m.input_bytes + m.output_bytes) * 64 > m.plan_bytes;
}

}  // namespace kf::execute
