// One candidate's run: spawn, load, the correctness trials, the ablation call (timing and the
// wall-clock bound: timed_run.cc).
#include <unistd.h>

#include "common/rules.h"
#include "execute/candidate_run.h"
#include "execute/requests.h"
#include "execute/runtime_rules.h"
#include "execute/trial_plan.h"

namespace kf::execute {
namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

namespace {

const backend::Device& DeviceOf(const std::string& backend) {
  const backend::Device* d = backend::FindDevice(backend);
  return d ? *d : *backend::FindDevice("cpu");
}

}  // namespace

CandidateRun::CandidateRun(Lane::Impl& lane, const LoadInlineFn& load_inline,
                           const ExecOptions& opt)
    : lane_(lane),
      proc_(lane.zygote, load_inline),
      opt_(opt),
      path_(backend::PathFor(DeviceOf(lane.opt.backend), opt.family)) {}

ExecResult CandidateRun::Run(const std::string& problem_id, const ProblemInfo& problem,
                             const std::string& code) {
  problem_ = problem_id;
  code_ = code;
  if (Stages(problem)) {
    Stop();
    out_.outcome = Outcome::kOk;
  }
  out_.jit_compiles = jit_.compiles;
  out_.jit_compile_ms = jit_.compile_ms;
  out_.jit_launches = jit_.launches;
  return out_;
}

bool CandidateRun::Stages(const ProblemInfo& problem) {
  auto t0 = Clock::now();
  if (!Spawn()) return false;
  out_.spawn_ms = MsSince(t0);
  t0 = Clock::now();
  bool loaded = Load(problem, code_);
  out_.load_ms = MsSince(t0);
  if (!loaded) return false;
  t0 = Clock::now();
  memory_ = problem.memory;
  bool correct = Trials(problem);
  out_.correctness_ms = MsSince(t0);
  if (!correct) return false;
  if (opt_.time_candidate) {
    t0 = Clock::now();
    bool timed = Time();
    out_.timing_ms = MsSince(t0);
    if (!timed) return false;
  }
  if (opt_.runtime_rules && !Ablate()) return false;
  if (auto m = Ask(requests::Bare("memory"), milliseconds(30000)); m.ok()) {
    out_.candidate_peak_bytes = m->value("peak_bytes", int64_t{0});
  }
  return true;
}

bool CandidateRun::Spawn() {
  bool prestarted = false;
  auto host = lane_.TakeHost(lane_.DeviceName(), opt_.jit_cache, &prestarted);
  if (!host.ok()) return Infra(host.status().message());
  proc_.Adopt(std::move(host.value()));
  out_.host_prestarted = prestarted;
  return true;
}

Result<json> CandidateRun::Ask(const json& msg, milliseconds timeout) {
  auto r = proc_.Ask(msg, timeout);
  if (proc_.build_failed()) out_.build_failed = true;
  if (r.ok()) AddJitReport(*r, &jit_);
  return r;
}

bool CandidateRun::Failed(const std::string& stage, const std::string& what, const Result<json>& r,
                          milliseconds timeout) {
  if (!r.ok() && r.status().code() == Code::kTimeout) return End(TimedOut(stage, what, timeout));
  // kforge's own request broke the protocol: not the candidate's doing.
  if (!r.ok() && r.status().code() == Code::kInvalidArgument) return Infra(r.status().message());
  if (!r.ok()) {  // it died: how, and its output's last lines
    const std::string how = proc_.Reap();
    return End(Crashed(stage, what, how, ReadTail(proc_.workdir() / "output.log", 3000)));
  }
  if (r->value("kind", "") == "jit_compile_error") {
    // Triton's compiler, inside the candidate's process: located in the candidate's code.
    out_.build_failed = true;
    return End({Outcome::kCompileError, JitCompileDiagnostic(*r, code_)});
  }
  return End(Refusal(stage, what, *r, out_.build_failed));
}

bool CandidateRun::End(const Failure& f) {
  out_.outcome = f.outcome;
  out_.diagnostics.push_back(f.diagnostic);
  if (f.outcome != Outcome::kInfraError) Stop();  // else the destructor does, as for Infra
  return false;
}

Result<json> CandidateRun::CheckSlot(const std::string& slot, const json& perturb) {
  return lane_.JudgeRequest(problem_, requests::Check(problem_, slot, opt_.tolerances, perturb),
                            milliseconds(300000));
}

bool CandidateRun::Infra(const std::string& message) {
  out_.outcome = Outcome::kInfraError;
  out_.diagnostics.push_back(Diag("execute", "infra", message));
  return false;
}

bool CandidateRun::Load(const ProblemInfo& problem, const std::string& code) {
  // The host watches the lines of every except/finally block during calls (H03 by evidence).
  if (opt_.runtime_rules) guards_ = extract::FallbackGuards(code);
  json watch = json::array();
  for (const auto& g : guards_) watch.push_back({g.header_line, g.last_line});
  // The hooks the host installs before the candidate's code runs (launch counts, ghost replay).
  const std::string family =
      opt_.family != backend::Family::kLoadInline ? backend::FamilyName(opt_.family) : "";
  auto r = Ask(requests::Load(code, problem.source, problem.init_inputs, init_seed_,
                              problem.outputs, watch, family, !problem.stateful.empty()),
               opt_.load_timeout);
  if (!r.ok() || !r->value("ok", false)) return Failed("load", "loading", r, opt_.load_timeout);
  if (!problem.stateful.empty()) out_.diagnostics.push_back(StatefulNote(problem.stateful));
  if (r->contains("phases_ms")) out_.load_phases_ms = (*r)["phases_ms"];
  if (opt_.family == backend::Family::kTriton) {
    if (auto why = MissingLaunchHooks(*r)) return Infra(*why);
  }
  return true;
}

bool CandidateRun::ReleaseSlots(const std::vector<std::string>& keep, const std::string& stage) {
  if (!ReleaseBetweenPhases(memory_)) return true;
  const milliseconds timeout(60000);
  auto r = Ask(requests::Release(keep), timeout);
  if (!r.ok() || !r->value("ok", false))
    return Failed(stage, "letting go of its buffers", r, timeout);
  if (Status s = lane_.ReleaseSlots(problem_, keep); !s.ok())
    return Infra("the judge failed to release trial buffers: " + s.message());
  return true;
}

bool CandidateRun::Trials(const ProblemInfo& problem) {
  const std::vector<Trial> order = PlanTrials(opt_.trials, seed_, problem.shape_variants.size());
  bool first_failure = true;
  std::string last_slot;
  for (size_t i = 0; i < order.size(); ++i) {
    const Trial& t = order[i];
    const std::string label = t.variant >= 0
                                  ? "shape " + VariantSizes(problem.shape_variants[t.variant])
                                  : TrialLabel(order, i);
    const std::string slot = t.variant < 0 ? "main" : "shape" + std::to_string(t.variant);
    // A big problem's trial set alone: the last run's timing rotation, or this run's main
    // slot before a shape variant's, goes first.
    if (slot != last_slot && !ReleaseSlots({slot}, "correctness")) return false;
    last_slot = slot;
    const json prep =
        requests::Prepare(problem_, slot, t.seed, t.signed_inputs, t.swap_seed, t.variant);
    auto tp = Clock::now();
    auto p = lane_.JudgeRequest(problem_, prep, milliseconds(300000));
    out_.prepare_ms += MsSince(tp);
    if (!p.ok()) return Infra("the judge failed to prepare a trial: " + p.status().message());
    if (p->contains("skip")) {
      // Not run, and not counted: the record says why (the signed trial of a problem whose
      // inputs may not be signed, or whose reference is not finite on signed inputs).
      out_.trials.push_back({{"label", label}, {"skipped", p->value("skip", "")}});
      continue;
    }
    ++out_.trials_total;
    const bool profiled = opt_.runtime_rules && i == 0;
    const json call = requests::Call(slot, (*p)["slot"], /*ablate=*/false, profiled);
    auto tc = Clock::now();
    auto r = Ask(call, profiled ? opt_.call_timeout + milliseconds(10000) : opt_.call_timeout);
    (profiled ? out_.profiled_call_ms : out_.call_ms) += MsSince(tc);
    if (t.variant >= 0 && r.ok() && !r->value("ok", false) && r->value("kind", "") != "internal" &&
        r->value("kind", "") != "cheat" && r->value("rule", "") != "H14") {
      // Raising or answering the wrong shape on sizes the problem allows fails the trial.
      out_.trials.push_back({{"label", label}, {"pass", false}, {"message", r->value("message", "")}});
      if (first_failure) {
        out_.diagnostics.push_back(
            ShapeDiag(problem.shape_variants[t.variant], r->value("message", "")));
        first_failure = false;
      }
      continue;
    }
    if (!r.ok() || !r->value("ok", false)) {
      if (r.ok() && r->value("kind", "") == "wrong_output" && r->value("rule", "") != "H14") {
        // A wrong shape or dtype fails this trial; the candidate may still be asked again.
        out_.trials.push_back(
            {{"label", label}, {"pass", false}, {"message", r->value("message", "")}});
        if (first_failure) {
          out_.diagnostics.push_back(Diag("correctness", "wrong_output", r->value("message", "")));
          first_failure = false;
        }
        continue;
      }
      return Failed("correctness", "correctness trial " + std::to_string(i + 1), r,
                    opt_.call_timeout);
    }
    const std::string during = t.variant >= 0    ? std::string("the trial with another shape")
                               : t.signed_inputs ? std::string("the signed-input trial")
                                                 : "trial " + std::to_string(i + 1);
    if (FellBack(*r, during)) return false;
    if (profiled) {
      auto found = CheckProfile(r->value("profile", json::object()),
                                r->value(path_.EvidenceField(), 0),
                                {opt_.policy, &opt_.allowed_aten, opt_.allow_libraries, &path_});
      out_.pytorch_ops = found.pytorch_ops;
      if (!found.cheats.empty()) {
        for (auto& d : found.cheats) out_.diagnostics.push_back(d);
        out_.outcome = Outcome::kCheat;
        Stop();
        return false;
      }
    }
    auto tk = Clock::now();
    auto c = CheckSlot(slot);
    out_.check_ms += MsSince(tk);
    if (!c.ok()) return Infra("the judge failed to check a trial: " + c.status().message());
    out_.trials.push_back(TrialRecord(label, *c));
    if (c->value("pass", false)) {
      ++out_.trials_passed;
      continue;
    }
    if (c->contains("rule")) {  // inputs written in place (H09), or a replayed answer (H06)
      const std::string rule = (*c)["rule"].get<std::string>();
      Diagnostic d = Diag("correctness", rule, c->value("message", ""), 0, RuleHint(rule));
      out_.diagnostics.push_back(d);
      out_.outcome = Outcome::kCheat;
      return false;
    }
    if (first_failure) {
      if (t.variant >= 0) {
        std::string detail;
        for (const auto& o : (*c)["outputs"]) {
          if (!o.value("pass", true)) {
            detail = DescribeMismatch(o);
            break;
          }
        }
        out_.diagnostics.push_back(ShapeDiag(problem.shape_variants[t.variant], detail));
      } else {
        std::string which =
            t.signed_inputs ? "the signed-input trial" : "trial " + std::to_string(i + 1);
        for (const auto& o : (*c)["outputs"]) {
          if (o.value("pass", true)) continue;
          out_.diagnostics.push_back(Diag("correctness", "mismatch",
                                          which + ", " + DescribeMismatch(o), 0,
                                          "Compare your indexing and formula with Model.forward."));
        }
      }
      first_failure = false;
    }
  }
  if (out_.trials_passed < out_.trials_total) {
    out_.outcome = Outcome::kIncorrect;
    Stop();
    return false;
  }
  return true;
}

bool CandidateRun::Ablate() {
  if (!ReleaseSlots({"main"}, "runtime")) return false;  // a big problem's timing rotation
  auto p = lane_.JudgeRequest(problem_, requests::Prepare(problem_, "main", seed_ ^ 0xab1a7e, false),
                              milliseconds(300000));
  if (!p.ok())
    return Infra("the judge failed to prepare the ablation call: " + p.status().message());
  auto r = Ask(requests::Call("main", (*p)["slot"], /*ablate=*/true), opt_.call_timeout);
  if (!r.ok() || !r->value("ok", false)) return true;   // it broke without its kernels: fine
  if (FellBack(*r, "the ablation call")) return false;  // it answered without them
  auto c = CheckSlot("main");
  if (!c.ok()) return Infra("the judge failed to check the ablation call: " + c.status().message());
  if (auto d = CheckAblation(c->value("pass", false), path_)) {
    out_.outcome = Outcome::kCheat;
    out_.diagnostics.push_back(*d);
    Stop();
    return false;
  }
  return true;
}

bool CandidateRun::FellBack(const json& reply, const std::string& during) {
  if (guards_.empty()) return false;
  auto d = CheckGuards(reply.value("guards", json()), guards_, during);
  if (!d) return false;
  out_.diagnostics.push_back(*d);
  out_.outcome = Outcome::kCheat;
  Stop();
  return true;
}

bool CandidateRun::Cheat(const std::string& rule, const std::string& message) {
  out_.outcome = Outcome::kCheat;
  out_.diagnostics.push_back(Diag("timing", rule, message, 0, RuleHint(rule)));
  Stop();
  return false;
}

ExecResult Lane::Impl::RunCandidate(const std::string& problem_id, const ProblemInfo& problem,
                                    const std::string& code, const LoadInlineFn& load_inline,
                                    const ExecOptions& opt) {
  CandidateRun run(*this, load_inline, opt);
  run.seed_ = opt.seed ? opt.seed : DrawSeed();
  run.init_seed_ = problem.init_seed;
  return run.Run(problem_id, problem, code);
}

}  // namespace kf::execute
