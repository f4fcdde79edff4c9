// A candidate's timing: batches driven by the stopping rule on a rotation of fresh input sets,
// the reported times checked against the wall clock (JudgeWallClock: H07, or a busy machine),
// the outputs of timed calls checked (H15).
#include <optional>

#include "common/rules.h"
#include "execute/candidate_run.h"
#include "execute/host_times.h"
#include "execute/interleave.h"
#include "execute/requests.h"
#include "execute/trial_plan.h"

namespace kf::execute {
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

bool CandidateRun::Time() {
  // Big problems time with fewer input sets in rotation rather than run out of memory.
  const int pool_size = FitTimingPool(opt_.timing.pool, memory_);
  const auto names = PoolNames(pool_size);
  out_.input_sets = pool_size;
  if (!ReleaseSlots(names, "timing")) return false;  // a big problem's correctness slot
  auto pool = lane_.PreparePool(problem_, pool_size, seed_ ^ 0x5bd1e995);
  if (!pool.ok())
    return Infra("the judge failed to prepare timing inputs: " + pool.status().message());
  // Fresh inputs for every timed call (H06): the candidate host rewrites them from this
  // seed, and the judge checks the last call of each slot against its own rewrite.
  const uint64_t perturb_seed = ((seed_ ^ 0x7e57ab1e5eedULL) >> 2) | 1;
  std::vector<int64_t> last_index(names.size(), -1);
  const json gpu_start = lane_.GpuState(problem_);
  std::optional<InterleavedBaselines> baselines;
  if (opt_.interleave_baselines) {
    baselines.emplace(lane_, problem_, names);
    if (Status s = baselines->Warm(opt_.timing.warmup_iters); !s.ok())
      return Infra("the judge failed to time the reference: " + s.message());
  }
  Status baseline_error = Status::Ok();
  Result<json> last_reply = json();
  milliseconds last_timeout(0);
  double wall_sum = 0, reported_sum = 0;
  int calls = 0;
  int next_first = 0, last_iters = 0;
  // What the host's threads did meanwhile, from /proc: the main thread's waits for a CPU in
  // the bounded batches (`waited`), and every thread's CPU over the whole span (`span0`).
  const pid_t host = HostOf(proc_.pid());
  const HostTimes span0 = ReadHostTimes(host);
  const auto timing_start = Clock::now();
  HostTimes waited;
  waited.ok = span0.ok;
  BatchFn batch = [&](const BatchRequest& q, BatchReply* reply) -> Status {
    const int first = q.first, iters = q.iters;
    next_first = first + iters;
    last_iters = iters;
    // Generous: the stopping rule sized the batch at ~50 ms from measured call times.
    last_timeout = opt_.call_timeout + milliseconds(static_cast<int64_t>(iters) * 2000);
    const HostTimes h0 = ReadHostTimes(host);
    auto t0 = Clock::now();
    last_reply =
        Ask(requests::TimeCandidate(names, *pool, first, iters, perturb_seed, q.delay_us),
            last_timeout);
    for (int64_t g = first; g < static_cast<int64_t>(first) + iters; ++g) {
      last_index[static_cast<size_t>(g) % names.size()] = g;
    }
    double wall = MsSince(t0);
    if (!last_reply.ok() || !last_reply->value("ok", false)) return Status::Internal("failed");
    ReadBatchReply(*last_reply, reply);
    double sum = 0;
    for (double v : reply->device_ms) sum += v;
    if (first > 0) {  // warm-up calls are not bounded: they include lazy initialisation
      wall_sum += wall;
      reported_sum += sum;
      calls += iters;
      waited += ReadHostTimes(host) - h0;
    }
    // Reported times can never add up to more than the time that passed.
    if (sum > wall * 1.02 + 1.0)
      return Status::Invalid("reported " + FormatNumber(sum) + " ms of calls in " +
                             FormatNumber(wall) + " ms of wall time");
    // A/B/A: the reference's batches right after each of the candidate's timed ones.
    if (baselines && first > 0 && baseline_error.ok()) {
      baseline_error = baselines->After(q);
      if (!baseline_error.ok()) return Status::Internal("the reference's timing failed");
    }
    return Status::Ok();
  };
  auto t = DriveTiming(opt_.timing, batch);
  if (!baseline_error.ok())
    return Infra("the judge failed to time the reference: " + baseline_error.message());
  if (!t.ok()) {
    if (t.status().code() == Code::kInvalidArgument) {
      return Cheat("H08", "timing was tampered with: " + t.status().message());
    }
    return Failed("timing", "the timed calls", last_reply, last_timeout);
  }
  // The wall-clock bound (JudgeWallClock): what the clock saw per call, less the measured
  // cost of an empty timed call with the same GPU delay, cannot be more than twice what the
  // candidate reports.
  auto noop = lane_.NoopCost(problem_, pool_size, perturb_seed, t->delay_us);
  if (!noop.ok()) return Infra("the judge failed to calibrate timing: " + noop.status().message());
  double net = calls > 0 ? wall_sum / calls - noop->ms : 0;
  // The batches `net` is of: what the host did in them, what it reported, and the empty call's
  // cost subtracted from their wall time.
  struct Measured {
    HostTimes host;
    double reported_sum = 0;
    int calls = 0;
    EmptyCall noop;
    double wall_sum = 0;
    double per_call(double total) const { return calls > 0 ? total / calls : 0; }
  } gap_of{waited, reported_sum, calls, *noop, wall_sum};
  auto escaped = [&] { return BeyondBound(net, t->summary.median_ms); };
  // A gap as it would be had the host's main thread never waited for a CPU in the batch(es)
  // that measured it.
  auto unqueued_of = [&](double gap) {
    return calls > 0 && waited.ok ? gap - waited.thread_wait_ms / calls : gap;
  };
  double unqueued = unqueued_of(net);
  out_.host_cpu_ms = waited.thread_cpu_ms;
  out_.host_wait_ms = waited.thread_wait_ms;
  // Load on the machine (compilers, other lanes) slows the host side of every call and
  // stretches the wall clock past what the kernels took; the empty-call calibration may have
  // been measured under another load. A gap that is the candidate's is there every time, load
  // comes and goes: before calling it a cheat, measure the empty call and a batch of real
  // calls again, up to three times, each with twice the GPU delay before it (host latency
  // the delay did not cover shows as a gap too), and keep the smallest gap.
  for (int round = 0; round < 3 && escaped(); ++round) {
    const double delay = std::min(kMaxDelayUs, t->delay_us * (2 << round));
    auto again = lane_.NoopCost(problem_, pool_size, perturb_seed, delay, /*fresh=*/true);
    if (!again.ok())
      return Infra("the judge failed to calibrate timing: " + again.status().message());
    wall_sum = 0;
    reported_sum = 0;
    calls = 0;
    waited = HostTimes{true};
    BatchReply ms;
    Status s = batch({next_first, std::max(last_iters, 20), delay}, &ms);
    if (s.code() == Code::kInvalidArgument)
      return Cheat("H08", "timing was tampered with: " + s.message());
    if (!s.ok()) return Failed("timing", "the timed calls", last_reply, last_timeout);
    double round_net = wall_sum / calls - again->ms;
    if (round_net < net) gap_of = {waited, reported_sum, calls, *again, wall_sum};
    net = std::min(net, round_net);
    if (waited.ok) unqueued = std::min(unqueued, unqueued_of(round_net));
  }
  const HostTimes span = ReadHostTimes(host) - span0;
  WallClockFacts facts;
  facts.median_ms = t->summary.median_ms;
  facts.mean_ms = gap_of.per_call(gap_of.reported_sum);
  facts.gap_ms = net;
  facts.unqueued_gap_ms = unqueued;
  facts.host_times_ok = span.ok;
  facts.others_cpu_ms = span.others_cpu_ms();
  facts.span_ms = MsSince(timing_start);
  facts.host_has_children = facts.gap_ms > 0.05 && HasChildren(host);
  // Every host thread's CPU per call, read in the same batches as the gap (never a reading of
  // another round's).
  facts.cpu_bounds_work = path_.device().kernels_on_host_cpus && gap_of.host.ok;
  facts.host_cpu_per_call_ms = gap_of.per_call(gap_of.host.process_cpu_ms);
  facts.empty_call_cpu_ms = gap_of.noop.cpu_ms;
  facts.calls = gap_of.calls;
  facts.main_cpu_per_call_ms = gap_of.per_call(gap_of.host.thread_cpu_ms);
  facts.others_cpu_per_call_ms = gap_of.per_call(std::max(0.0, gap_of.host.others_cpu_ms()));
  facts.wall_per_call_ms = gap_of.per_call(gap_of.wall_sum);
  const WallClock bound = JudgeWallClock(facts);
  out_.wall_gap_ms = net;
  out_.noop_ms = gap_of.noop.ms;
  out_.noop_cpu_ms = facts.empty_call_cpu_ms;
  const std::string seen = "reported " + FormatNumber(t->summary.median_ms) +
                           " ms per call but the wall clock saw " + FormatNumber(net) + " ms";
  const std::string escaped_why =
      seen + ": work escaped the timer (another stream or thread?)" +
      (span.ok ? "; its host's main thread waited " + FormatNumber(gap_of.host.thread_wait_ms) +
                     " ms for a CPU, its other threads ran " +
                     FormatNumber(std::max(0.0, span.others_cpu_ms())) + " ms" +
                     (facts.cpu_bounds_work
                          ? ", all its threads used " + FormatNumber(facts.host_cpu_per_call_ms) +
                                " ms of CPU per call (an empty call's flush and input rewrite " +
                                FormatNumber(facts.empty_call_cpu_ms) + " ms of it)"
                          : std::string())
               : std::string());
  // The bound is ruled on with the timed outputs (JudgeTiming), once they are checked.
  const bool gap_escaped = bound == WallClock::kEscaped;
  // The timed calls are not traced (tracing would slow them): one untimed, traced call on
  // the first timing set instead, before emit overwrites its outputs with the timed ones.
  if (!guards_.empty()) {
    auto r = Ask(requests::Call(names[0], (*pool)[0]), opt_.call_timeout);
    if (!r.ok() || !r->value("ok", false)) {
      if (gap_escaped) return Cheat("H07", escaped_why);
      return Failed("timing", "a call on the timing inputs", r, opt_.call_timeout);
    }
    if (FellBack(*r, "a call on the timing inputs")) return false;
  }
  // Every timed slot's last outputs against the judge's own rewrite of its inputs.
  std::vector<size_t> wrong;
  std::optional<size_t> right;
  std::string detail;
  bool ruled = false;
  for (size_t i = 0; i < names.size(); ++i) {
    if (last_index[i] < 0) continue;  // never timed (fewer calls than slots)
    auto e = Ask(requests::Emit(names[i], (*pool)[i]), opt_.call_timeout);
    if (!e.ok() || !e->value("ok", false)) {
      if (gap_escaped) return Cheat("H07", escaped_why);
      return Failed("timing", "returning timed outputs", e, opt_.call_timeout);
    }
    auto c = CheckSlot(names[i], {{"seed", perturb_seed}, {"index", last_index[i]}});
    if (!c.ok()) return Infra("the judge failed to check timed outputs: " + c.status().message());
    if (c->value("pass", false)) {
      if (!right) right = i;
      continue;
    }
    if (wrong.empty()) {
      ruled = c->contains("rule");  // a rule broken (an alias, a changed input), not a mismatch
      detail = ruled ? c->value("message", "") : DescribeMismatch((*c)["outputs"][0]);
    }
    wrong.push_back(i);
  }
  // Right in the correctness trials, wrong when timed. Decide by what runs whether it behaves
  // differently when measured (H15) or is simply wrong on these inputs: call it again, untimed,
  // on the same inputs, and on a timed set it got right.
  std::optional<TimedOutputs> outputs;
  std::string why;
  if (!wrong.empty()) {
    auto untimed_right = [&](size_t i) -> Result<bool> {
      auto r = Ask(requests::Call(names[i], (*pool)[i]), opt_.call_timeout);
      if (!r.ok() || !r->value("ok", false)) return false;  // it fails on them untimed too
      auto c = CheckSlot(names[i], {{"seed", perturb_seed}, {"index", last_index[i]}});
      if (!c.ok()) return c.status();
      return c->value("pass", false);
    };
    TimedOutputFacts facts_after;
    facts_after.some_set_right = right.has_value() && !ruled;
    if (facts_after.some_set_right) {
      auto again = untimed_right(wrong[0]);
      if (!again.ok()) return Infra("the judge failed to check a call: " + again.status().message());
      auto before = untimed_right(*right);
      if (!before.ok())
        return Infra("the judge failed to check a call: " + before.status().message());
      facts_after.wrong_set_right_untimed = *again;
      facts_after.right_set_still_right = *before;
    }
    outputs = JudgeTimedOutputs(facts_after, &why);
  }
  const TimingRuling ruling = JudgeTiming(bound, outputs);
  switch (ruling.end) {
    case TimingEnd::kMeasured:
      out_.timing = *t;
      out_.gpu = {{"start", gpu_start}, {"end", lane_.GpuState(problem_)}};
      out_.lane_cpus = lane_.opt.cpus;
      if (baselines) out_.baselines = baselines->Result();
      return true;
    case TimingEnd::kBusy:
      // The machine, not the candidate, may have made the gap: never `ok` then, and not
      // `cheat` either, but not measured, to be evaluated again (infrastructure results are
      // never stored).
      out_.outcome = Outcome::kInfraError;
      out_.diagnostics.push_back(Diag(
          "timing", kBusyCode,
          "the machine was too busy to time this candidate: it " + seen + ", and its host waited " +
              FormatNumber(gap_of.host.thread_wait_ms) + " ms for a CPU during those calls" +
              (facts.cpu_bounds_work
                   ? "; its main thread was on a CPU " + FormatNumber(facts.main_cpu_per_call_ms) +
                         " ms of each " + FormatNumber(facts.wall_per_call_ms) +
                         " ms call, its other threads " +
                         FormatNumber(facts.others_cpu_per_call_ms) + " ms"
                   : std::string()),
          0, "Evaluate it again on a quieter machine."));
      return false;
    case TimingEnd::kEscaped:
      return Cheat("H07", escaped_why);
    case TimingEnd::kChangesWhenTimed:
      out_.outcome = Outcome::kCheat;
      out_.diagnostics.push_back(Diag("timing", "H15",
                                      "outputs of the timed calls are wrong (" + detail + "); " +
                                          why + ": the kernel behaves differently when timed",
                                      0, RuleHint("H15")));
      if (ruling.also_escaped)
        out_.diagnostics.push_back(Diag("timing", "H07", escaped_why, 0, RuleHint("H07")));
      Stop();
      return false;
    case TimingEnd::kWrongOnTimingSet:
      // Wrong again on those inputs untimed, still right on the others: an honest mistake that
      // the correctness trials happened not to meet (a kernel right on some inputs only). The
      // timing set counts as one more trial, failed.
      out_.outcome = Outcome::kIncorrect;
      out_.trials_total += 1;
      out_.diagnostics.push_back(Diag("timing", "mismatch",
                                      "a timing input set, " + detail + " (" + why +
                                          "; right on the correctness trials)",
                                      0, "Compare your indexing and formula with Model.forward."));
      Stop();
      return false;
  }
  return Infra("the judge reached no ruling on timing");
}

}  // namespace kf::execute
