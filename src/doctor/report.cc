// Printers: they only format the checks Decide made.
#include <algorithm>
#include <sstream>

#include "doctor/doctor.h"

namespace kf::doctor {

nlohmann::json ToJson(const Facts& facts, const std::vector<Check>& checks) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& c : checks) {
    list.push_back({{"name", c.name}, {"state", StateName(c.state)}, {"detail", c.detail},
                    {"fix", c.fix}});
  }
  return {{"backend", facts.backend}, {"python", facts.python}, {"ok", !AnyFailed(checks)},
          {"checks", list}};
}

std::string Render(const Facts& facts, const std::vector<Check>& checks) {
  size_t width = 0;
  for (const auto& c : checks) width = std::max(width, c.name.size());
  std::ostringstream out;
  out << "kforge doctor: --backend " << facts.backend << ", --python " << facts.python << "\n";
  int counts[4] = {0, 0, 0, 0};
  for (const auto& c : checks) {
    ++counts[static_cast<int>(c.state)];
    std::string state = c.state == State::kFail ? "FAIL" : StateName(c.state);
    out << "  " << state << std::string(6 - state.size(), ' ') << c.name
        << std::string(width + 2 - c.name.size(), ' ') << c.detail << "\n";
    if (!c.fix.empty() && c.state != State::kOk && c.state != State::kSkip) {
      out << "        " << std::string(width + 2, ' ') << "fix: " << c.fix << "\n";
    }
  }
  out << counts[static_cast<int>(State::kOk)] << " ok, "
      << counts[static_cast<int>(State::kWarn)] << " warnings, "
      << counts[static_cast<int>(State::kFail)] << " failed, "
      << counts[static_cast<int>(State::kSkip)] << " skipped\n";
  return out.str();
}

}  // namespace kf::doctor
