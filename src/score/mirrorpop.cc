#include "score/mirrorpop.h"

#include <cmath>
#include <string>

namespace kf::score {

Result<MirrorPopResult> MirrorPop(const MirrorPopInput& in) {
  if (!std::isfinite(in.delta) || in.delta < 0) {
    return Status::Invalid("delta must be a finite number >= 0");
  }
  const size_t b = in.logp_trainer.size();
  if (in.logp_rollout.size() != b || in.mask.size() != b) {
    return Status::Invalid("logp_trainer, logp_rollout and mask must have the same number of rows");
  }
  MirrorPopResult out;
  out.mean_abs_log_ratio.reserve(b);
  out.keep.reserve(b);
  for (size_t i = 0; i < b; ++i) {
    const auto& lt = in.logp_trainer[i];
    const auto& lr = in.logp_rollout[i];
    const auto& m = in.mask[i];
    if (lr.size() != lt.size() || m.size() != lt.size() ||
        (i > 0 && lt.size() != in.logp_trainer[0].size())) {
      return Status::Invalid("row " + std::to_string(i) +
                             ": logp_trainer, logp_rollout and mask must all be [B, T]");
    }
    double sum = 0;
    size_t n = 0;
    for (size_t t = 0; t < lt.size(); ++t) {
      if (m[t] > 1) {
        return Status::Invalid("mask[" + std::to_string(i) + "][" + std::to_string(t) +
                               "] must be 0 or 1");
      }
      if (m[t] == 0) continue;  // padding: its values may be anything, even -inf
      sum += std::fabs(lt[t] - lr[t]);
      ++n;
    }
    const double mean = n == 0 ? 0.0 : sum / static_cast<double>(n);
    out.mean_abs_log_ratio.push_back(mean);
    out.keep.push_back(std::isfinite(mean) && mean <= in.delta);
  }
  return out;
}

}  // namespace kf::score
