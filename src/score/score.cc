#include "score/score.h"

#include <algorithm>
#include <cmath>

namespace kf::score {
namespace {

// The fraction of correctness trials passed; no trials means nothing was shown correct.
double TrialFraction(const Verdict& v) {
  if (v.trials_total <= 0) {
    return 0;
  }
  return std::clamp(static_cast<double>(v.trials_passed) / v.trials_total, 0.0, 1.0);
}

// nu for the bonus. An unknown or non-finite speedup earns no bonus (nu = 1): a candidate
// must not be rewarded for a time we could not measure.
double Nu(const Verdict& v, const RewardOptions& opt) {
  const std::optional<double>& s = opt.against_compile ? v.speedup_vs_compile : v.speedup_vs_eager;
  if (!s || !std::isfinite(*s)) {
    return 1;
  }
  if (opt.significance) {
    const auto& ci = opt.against_compile ? v.speedup_vs_compile_ci : v.speedup_vs_eager_ci;
    if (!ci || !(ci->lo > 1)) return 1;  // not shown faster: no bonus
  }
  return *s;
}

}  // namespace

std::optional<double> Reward(const Verdict& v, const RewardOptions& opt) {
  switch (v.status) {
    case VerdictStatus::kInfraError:
      return std::nullopt;
    case VerdictStatus::kFormatError:
    case VerdictStatus::kCompileError:
    case VerdictStatus::kRuntimeError:
    case VerdictStatus::kTimeout:
    case VerdictStatus::kCheat:
      return -1.0;
    case VerdictStatus::kOk:
    case VerdictStatus::kIncorrect:
      break;
  }
  const double q = TrialFraction(v);
  if (q <= 0) {
    return -1.0;
  }
  // Only a fully correct, legal (status ok) candidate reaches the speedup tier; `incorrect`
  // stays on the partial-credit line even if every trial passed (e.g. a timed-iteration check
  // failed), which gives it at most 0.
  if (q < 1 || v.status != VerdictStatus::kOk) {
    return -0.5 + 0.5 * q;
  }
  const double bonus = std::min(std::max(Nu(v, opt) - 1, 0.0), opt.nu_max);
  return 1 + opt.lambda * bonus;
}

double PrimeEcho(const std::vector<double>& turn_rewards, int first_pass_turn,
                 const PrimeEchoOptions& opt) {
  if (turn_rewards.empty()) {
    return 0;
  }
  const double first = turn_rewards.front();
  const double best = *std::max_element(turn_rewards.begin(), turn_rewards.end());
  double early = 0;
  if (first_pass_turn == 1) {
    early = opt.bonus_turn1;
  }
  if (first_pass_turn == 2) {
    early = opt.bonus_turn2;
  }
  return opt.alpha * first + (1 - opt.alpha) * best + early;
}

void Finish(Verdict* v, const RewardOptions& opt) {
  v->reward = Reward(*v, opt);
  v->feedback = Feedback(*v);
}

}  // namespace kf::score
