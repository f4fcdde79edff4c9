#include "execute/interleave.h"

#include <chrono>

namespace kf::execute {
using std::chrono::milliseconds;

InterleavedBaselines::InterleavedBaselines(Lane::Impl& lane, std::string problem,
                                           std::vector<std::string> slots)
    : lane_(lane), problem_(std::move(problem)), slots_(std::move(slots)) {
  for (const char* name : {"eager", "compile"}) {
    Mode m;
    m.name = name;
    modes_.push_back(std::move(m));
  }
}

Status InterleavedBaselines::Time(Mode& m, const BatchRequest& q, BatchReply* reply,
                                  milliseconds timeout) {
  const auto t0 = std::chrono::steady_clock::now();
  if (Status s = lane_.TimeReference(problem_, m.name, slots_, q, timeout, reply, &m.waited);
      !s.ok())
    return s;
  if (static_cast<int>(reply->device_ms.size()) != q.iters)
    return Status::Internal("the judge timed " + std::to_string(reply->device_ms.size()) +
                            " calls of " + std::to_string(q.iters));
  if (q.first > 0)
    m.wall_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                     .count();
  return Status::Ok();
}

Status InterleavedBaselines::Warm(int iters) {
  for (auto it = modes_.begin(); it != modes_.end();) {
    BatchReply warm;
    // torch.compile compiles on the first call: minutes, not seconds, on a cold cache.
    Status s = Time(*it, {0, std::max(iters, 2), 0}, &warm,
                    it->name == "compile" ? milliseconds(900000) : milliseconds(300000));
    if (!s.ok()) {
      if (it->name != "compile") return s;
      compile_unavailable_ = s.message();
      it = modes_.erase(it);
      continue;
    }
    it->delay_us = WarmupDelayUs(warm.host_ms);
    ++it;
  }
  return Status::Ok();
}

Status InterleavedBaselines::After(const BatchRequest& q) {
  for (Mode& m : modes_) {
    BatchReply got;
    if (Status s = Time(m, {q.first, q.iters, m.delay_us}, &got, milliseconds(300000)); !s.ok())
      return s;
    m.samples_ms.insert(m.samples_ms.end(), got.device_ms.begin(), got.device_ms.end());
    m.host_ms.insert(m.host_ms.end(), got.host_ms.begin(), got.host_ms.end());
    m.hidden += got.hidden;
  }
  return Status::Ok();
}

BaselineResult InterleavedBaselines::Result() const {
  BaselineResult out;
  out.compile_unavailable = compile_unavailable_;
  for (const Mode& m : modes_) {
    if (m.samples_ms.empty()) continue;
    TimingResult t;
    t.samples_ms = m.samples_ms;
    t.summary = Summarize(m.samples_ms);
    t.wall_ms = m.wall_ms;
    t.stop_reason = "interleaved";
    t.delay_us = m.delay_us;
    t.host_ms = m.host_ms.empty() ? 0 : Summarize(m.host_ms).median_ms;
    t.hidden = m.hidden;
    if (m.name == "eager") {
      out.disturbed = lane_.Disturbed(t, m.waited);
      out.judge_wait_ms = m.waited.thread_wait_ms;
      out.eager = std::move(t);
    } else {
      out.compiled = std::move(t);
    }
  }
  return out;
}

}  // namespace kf::execute
