// score: turns stage results into the verdict's reward and feedback text.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "score/verdict.h"

namespace kf::score {

// MooreEval's hierarchical reward (DESIGN.md "Verdict, reward and metrics").
struct RewardOptions {
  double lambda = 0.5;           // weight of the speedup bonus
  double nu_max = 4.0;           // the bonus is capped at lambda * nu_max
  bool against_compile = false;  // false: speedup vs eager (the default), true: vs torch.compile
  // The bonus counts only when the speedup's 95% interval lies above 1 (a verdict without an
  // interval earns none); false: the point estimate alone, as before verdict format 8.
  bool significance = true;
};

// The reward for a verdict whose status, trials and speedups are filled in; nullopt for
// infra_error (no reward may be produced when the system, not the candidate, failed).
std::optional<double> Reward(const Verdict& v, const RewardOptions& opt = {});

// PrimeEcho trajectory reward: R = alpha*s_first + (1-alpha)*max_t s_t + b_early.
struct PrimeEchoOptions {
  double alpha = 0.75;
  double bonus_turn1 = 0.2;  // passing at turn 1
  double bonus_turn2 = 0.1;  // passing at turn 2
};
double PrimeEcho(const std::vector<double>& turn_rewards, int first_pass_turn /*1-based, 0 none*/,
                 const PrimeEchoOptions& opt = {});

// Natural-language feedback a model can act on, built from the verdict's status,
// diagnostics and timing. Deterministic.
std::string Feedback(const Verdict& v);

// Fills v->reward and v->feedback.
void Finish(Verdict* v, const RewardOptions& opt = {});

// A terminal rendering of the verdict (what `kforge eval` prints without --json).
std::string Render(const Verdict& v, bool color);

}  // namespace kf::score
