// Eager and torch.compile timed in batches interleaved with a candidate's (A/B/A): after each
// of the candidate's timed batches, the judge times a batch of each mode of the same size on
// the same input sets, so drift in the machine (clocks, heat, load) meets both sides of each
// speedup alike. Internal to execute.
#pragma once

#include <string>
#include <vector>

#include "execute/host_times.h"
#include "execute/lane_impl.h"

namespace kf::execute {

class InterleavedBaselines {
 public:
  InterleavedBaselines(Lane::Impl& lane, std::string problem, std::vector<std::string> slots);

  // Each mode's warm-up calls (torch.compile compiles on its first: minutes on a cold cache)
  // and its delay (ChooseDelayUs from their host times). torch.compile failing or missing
  // leaves that mode out, with the reason; eager failing is an error (the judge's).
  Status Warm(int iters);
  // One batch of each mode after the candidate's batch `q` (the same calls of the rotation).
  Status After(const BatchRequest& q);
  // What was measured; `disturbed` says why it must not be stored (BaselineDisturbed of eager).
  BaselineResult Result() const;

 private:
  struct Mode {
    std::string name;
    double delay_us = 25;
    std::vector<double> samples_ms, host_ms;
    int hidden = 0;
    double wall_ms = 0;
    HostTimes waited{true};
  };
  Status Time(Mode& m, const BatchRequest& q, BatchReply* reply,
              std::chrono::milliseconds timeout);

  Lane::Impl& lane_;
  std::string problem_;
  std::vector<std::string> slots_;
  std::vector<Mode> modes_;
  std::string compile_unavailable_;
};

}  // namespace kf::execute
