// mirrorpop: which sampled sequences an RL trainer keeps when its own log-probabilities and the
// rollout engine's disagree (training-inference mismatch). MirrorPop keeps sequence b when
//
//   mean over the tokens t of b that count (mask[b][t]) of |log rho_t| <= delta,
//   log rho_t = logp_trainer[b][t] - logp_rollout[b][t]
//
// so a sequence is dropped whole when, per token on average, the engine that sampled it and the
// trainer that learns from it saw different distributions. The geometric mean keeps the test
// independent of the sequence's length (a sum would drop every long sequence).
//
// The same computation, with the same test vectors (tests/rl/mirrorpop_vectors.json), is
// examples/rl/mirrorpop.py for trainers.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"

namespace kf::score {

// Inputs, all [B][T] with equal shapes: the log-probability of each sampled token under the
// trainer's policy and as the rollout engine reported it, and 1 where the token is part of the
// response (0 for padding and prompt tokens, whose values are never read).
struct MirrorPopInput {
  std::vector<std::vector<double>> logp_trainer;
  std::vector<std::vector<double>> logp_rollout;
  std::vector<std::vector<uint8_t>> mask;
  double delta = 0;  // >= 0, finite; the bound is inclusive
};

struct MirrorPopResult {
  // Per sequence: the mean of |log rho_t| over its counted tokens; 0 for a sequence with none
  // (which is then kept: it adds nothing to a loss anyway). Infinite or NaN when a counted
  // token's log-probability is (a token the trainer gives probability 0): never kept.
  std::vector<double> mean_abs_log_ratio;
  std::vector<bool> keep;  // mean_abs_log_ratio <= delta (false when it is not finite)
};

// kInvalidArgument when the shapes differ, a mask value is not 0 or 1, or delta is negative or
// not finite.
Result<MirrorPopResult> MirrorPop(const MirrorPopInput& in);

}  // namespace kf::score
