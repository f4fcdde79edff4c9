// One candidate's run: spawn from the zygote, load, correctness trials, timing.
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <regex>

#include "common/rules.h"
#include "execute/host_times.h"
#include "execute/lane_impl.h"
#include "execute/runtime_rules.h"
#include "execute/trial_plan.h"

namespace kf::execute {
namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

namespace {

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

Diagnostic Diag(const std::string& stage, const std::string& code, const std::string& message,
                int line = 0, const std::string& hint = "") {
  Diagnostic d;
  d.stage = stage;
  d.code = code;
  d.message = message;
  d.line = line;
  d.hint = hint;
  return d;
}

// The last `File "candidate.py", line N` in a traceback or faulthandler dump.
int LastCandidateLine(const std::string& text) {
  static const std::regex kLine(R"re(File "candidate\.py", line (\d+))re");
  int line = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), kLine), end; it != end; ++it) {
    line = std::stoi((*it)[1]);
  }
  return line;
}

std::string FormatNumber(double v) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string DescribeMismatch(const json& o) {
  std::string s = "output " + std::to_string(o.value("output", 0)) + ": " +
                  std::to_string(o.value("bad_elements", 0)) + " of " +
                  std::to_string(o.value("elements", 0)) + " elements differ";
  if (o.contains("max_abs_err") && o["max_abs_err"].is_number()) {
    s += "; max abs error " + FormatNumber(o["max_abs_err"].get<double>());
  }
  if (o.contains("max_rel_err") && o["max_rel_err"].is_number()) {
    s += ", max rel error " + FormatNumber(o["max_rel_err"].get<double>());
  }
  if (o.contains("first_bad_index")) {
    s += "; first at " + o["first_bad_index"].dump();
    auto num = [](const json& v) { return v.is_number() ? FormatNumber(v.get<double>()) : v.dump(); };
    if (o.contains("first_bad_got")) s += ": got " + num(o["first_bad_got"]);
    if (o.contains("first_bad_expected")) s += ", expected " + num(o["first_bad_expected"]);
  }
  if (o.value("nonfinite_where_ref_finite", 0) > 0) {
    s += "; " + std::to_string(o["nonfinite_where_ref_finite"].get<int>()) +
         " NaN/Inf values where the reference is finite";
  }
  s += " (atol " + FormatNumber(o.value("atol", 0.0)) + ", rtol " +
       FormatNumber(o.value("rtol", 0.0)) + ")";
  return s;
}

class CandidateRun {
 public:
  CandidateRun(Lane::Impl& lane, const LoadInlineFn& load_inline, const ExecOptions& opt)
      : lane_(lane), load_inline_(load_inline), opt_(opt) {}

  ~CandidateRun() { Stop(); }

  ExecResult Run(const std::string& problem_id, const ProblemInfo& problem, const std::string& code) {
    problem_ = problem_id;
    auto t0 = Clock::now();
    if (!Spawn()) return out_;
    out_.spawn_ms = MsSince(t0);
    t0 = Clock::now();
    bool loaded = Load(problem, code);
    out_.load_ms = MsSince(t0);
    if (!loaded) return out_;
    t0 = Clock::now();
    memory_ = problem.memory;
    bool correct = Trials(problem);
    out_.correctness_ms = MsSince(t0);
    if (!correct) return out_;
    if (opt_.time_candidate) {
      t0 = Clock::now();
      bool timed = Time();
      out_.timing_ms = MsSince(t0);
      if (!timed) return out_;
    }
    if (opt_.runtime_rules && !Ablate()) return out_;
    if (auto m = Ask({{"op", "memory"}}, milliseconds(30000)); m.ok()) {
      out_.candidate_peak_bytes = m->value("peak_bytes", int64_t{0});
    }
    Stop();
    out_.outcome = Outcome::kOk;
    return out_;
  }

 private:
  bool Spawn() {
    auto child = SpawnFromZygote(lane_.zygote, "spawn", lane_.DeviceName(),
                                 lane_.opt.work_dir / ("cand-" + std::to_string(getpid()) + "-" +
                                                       std::to_string(++lane_.spawned)));
    if (!child.ok()) return Infra(child.status().message());
    proc_ = std::move(child.value());
    chan_ = std::move(proc_.chan);
    return true;
  }

  // Kills the candidate if it is alive, reaps it and removes its private folder.
  void Stop() {
    chan_.Close();
    StopZygoteChild(lane_.zygote, &proc_);
  }

  // Collects how a candidate that closed its channel ended: "signal 11 (Segmentation fault)".
  std::string Reap() {
    auto r = lane_.zygote.Request({{"op", "reap"}, {"pid", proc_.pid}, {"timeout_s", 5}},
                                  milliseconds(10000));
    if (!r.ok()) return "it ended";
    if (r->value("running", false)) {
      ::kill(-proc_.pid, SIGKILL);
      ::kill(proc_.pid, SIGKILL);
      r = lane_.zygote.Request({{"op", "reap"}, {"pid", proc_.pid}, {"timeout_s", 5}}, milliseconds(10000));
      if (!r.ok()) return "it closed its channel";
    }
    proc_.pid = -1;
    if (r->contains("signal")) {
      int sig = (*r)["signal"].get<int>();
      return "it was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
    }
    return "it exited with code " + std::to_string(r->value("exit_code", -1));
  }

  // Sends a request and serves the candidate's load_inline events until the answer comes.
  // Deadlines exclude time spent building for it.
  Result<json> Ask(const json& msg, milliseconds timeout) {
    if (auto s = chan_.Send(msg); !s.ok()) return Status::Unavailable(s.message());
    auto deadline = Clock::now() + timeout;
    for (;;) {
      auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return Status::Timeout("deadline");
      auto r = chan_.Receive(left);
      if (!r.ok()) return r.status();
      if (r->value("event", "") != "load_inline") return r;
      auto b0 = Clock::now();
      LoadInlineReply reply = load_inline_((*r)["args"]);
      deadline += Clock::now() - b0;
      if (!reply.ok) out_.build_failed = true;
      json j = {{"ok", reply.ok}, {"so_path", reply.so_path}, {"module_name", reply.module_name},
                {"message", reply.message}};
      if (auto s = chan_.Send(j); !s.ok()) return Status::Unavailable(s.message());
    }
  }

  // Handles a failed Ask or a refused request; returns false (the run is over).
  bool Failed(const std::string& stage, const std::string& what, const Result<json>& r,
              milliseconds timeout) {
    if (!r.ok() && r.status().code() == Code::kTimeout) {
      Stop();
      out_.outcome = Outcome::kTimeout;
      out_.diagnostics.push_back(Diag(stage, "timeout",
                                      "the candidate did not finish " + what + " within " +
                                          std::to_string(timeout.count() / 1000) + " s and was killed",
                                      0, "Look for an infinite loop or a kernel that never ends."));
      return false;
    }
    if (!r.ok()) {
      std::string how = Reap();
      std::string log = ReadTail(proc_.workdir / "output.log", 3000);
      Diagnostic d = Diag(stage, "crash", "the candidate process died during " + what + ": " + how,
                          LastCandidateLine(log),
                          "Check memory accesses: indices, sizes and pointers passed to kernels.");
      d.excerpt = log;
      out_.outcome = Outcome::kRuntimeError;
      out_.diagnostics.push_back(d);
      return false;
    }
    return Refused(stage, what, *r);
  }

  bool Refused(const std::string& stage, const std::string& what, const json& r) {
    std::string kind = r.value("kind", "exception");
    std::string message = r.value("message", "failed");
    int line = r.value("line", 0);
    Diagnostic d = Diag(stage, kind, message, line);
    if (r.contains("traceback")) d.excerpt = r["traceback"].get<std::string>();
    if (kind == "build_failed" || out_.build_failed) {
      out_.outcome = Outcome::kCompileError;
      d.code = "compile_error";
    } else if (kind == "syntax_error" || kind == "no_model_new") {
      out_.outcome = Outcome::kFormatError;
      d.col = r.value("col", 0);
    } else if (kind == "cheat") {
      out_.outcome = Outcome::kCheat;
      d.code = r.value("rule", "cheat");
      d.message = message;
      d.hint = RuleHint(d.code);
    } else if (kind == "wrong_output") {
      std::string rule = r.value("rule", "");
      out_.outcome = rule == "H14" ? Outcome::kCheat : Outcome::kIncorrect;
      d.code = rule == "H14" ? "H14" : "wrong_output";
      d.hint = rule == "H14" ? RuleHint("H14")
                             : "Return outputs with the reference's count, shape, dtype and device.";
    } else if (kind == "internal") {
      return Infra(message);
    } else {
      out_.outcome = Outcome::kRuntimeError;
      d.message = what + " raised " + message;
      d.hint = kind == "cuda_error" ? "A CUDA error: check indices, launch bounds and sizes."
                                    : "Fix the exception; the traceback shows where it was raised.";
    }
    out_.diagnostics.push_back(d);
    Stop();
    return false;
  }

  // A trial on another size the problem allows went wrong (H19).
  static Diagnostic ShapeDiag(const json& variant, const std::string& detail) {
    std::string sizes;
    for (const auto& [k, v] : variant.items()) {
      sizes += (sizes.empty() ? "" : ", ") + k + "=" + v.get<std::string>();
    }
    return Diag("correctness", "H19",
                "wrong on inputs of another size the problem allows (" + sizes + ")" +
                    (detail.empty() ? "" : ": " + detail),
                0, RuleHint("H19"));
  }

  // The judge's verdict on what the candidate wrote into a slot's output buffers.
  // `perturb`, for timed outputs: the seed and index of the timed call that wrote them.
  Result<json> CheckSlot(const std::string& slot, const json& perturb = nullptr) {
    json msg = {{"op", "check"}, {"problem", problem_}, {"slot", slot},
                {"atol", opt_.atol}, {"rtol", opt_.rtol}};
    if (!perturb.is_null()) msg["perturb"] = perturb;
    return lane_.JudgeRequest(problem_, msg, milliseconds(300000));
  }

  bool Infra(const std::string& message) {
    out_.outcome = Outcome::kInfraError;
    out_.diagnostics.push_back(Diag("execute", "infra", message));
    return false;
  }

  bool Load(const ProblemInfo& problem, const std::string& code) {
    json msg = {{"op", "load"}, {"code", code}, {"init_inputs", problem.init_inputs},
                {"init_seed", init_seed_}, {"poison", problem.outputs}};
    // The host watches the lines of every except/finally block during calls (H03 by evidence).
    if (opt_.runtime_rules) guards_ = extract::FallbackGuards(code);
    json watch = json::array();
    for (const auto& g : guards_) watch.push_back({g.header_line, g.last_line});
    if (!watch.empty()) msg["watch"] = watch;
    auto r = Ask(msg, opt_.load_timeout);
    if (!r.ok() || !r->value("ok", false)) return Failed("load", "loading", r, opt_.load_timeout);
    return true;
  }

  // The trials of PlanTrials (trial_plan.h), in the same buffers every time.
  bool Trials(const ProblemInfo& problem) {
    const std::vector<Trial> order = PlanTrials(opt_.trials, seed_, problem.shape_variants.size());
    bool first_failure = true;
    for (size_t i = 0; i < order.size(); ++i) {
      const Trial& t = order[i];
      const std::string slot = t.variant < 0 ? "main" : "shape" + std::to_string(t.variant);
      json prep = {{"op", "prepare"}, {"problem", problem_}, {"slot", slot},
                   {"seed", t.seed}, {"signed", t.signed_inputs}};
      if (t.swap_seed) prep["swap_seed"] = t.swap_seed;
      if (t.variant >= 0) prep["variant"] = t.variant;
      auto tp = Clock::now();
      auto p = lane_.JudgeRequest(problem_, prep, milliseconds(300000));
      out_.prepare_ms += MsSince(tp);
      if (!p.ok()) return Infra("the judge failed to prepare a trial: " + p.status().message());
      if (p->contains("skip")) continue;
      ++out_.trials_total;
      json call = {{"op", "call"}, {"slot", slot}, {"buffers", (*p)["slot"]}};
      const bool profiled = opt_.runtime_rules && i == 0;
      if (profiled) call["profile"] = true;
      auto tc = Clock::now();
      auto r = Ask(call, profiled ? opt_.call_timeout + milliseconds(10000) : opt_.call_timeout);
      (profiled ? out_.profiled_call_ms : out_.call_ms) += MsSince(tc);
      if (t.variant >= 0 && r.ok() && !r->value("ok", false) &&
          r->value("kind", "") != "internal" && r->value("kind", "") != "cheat" &&
          r->value("rule", "") != "H14") {
        // Raising or answering the wrong shape on sizes the problem allows fails the trial.
        if (first_failure) {
          out_.diagnostics.push_back(ShapeDiag(problem.shape_variants[t.variant],
                                               r->value("message", "")));
          first_failure = false;
        }
        continue;
      }
      if (!r.ok() || !r->value("ok", false)) {
        if (r.ok() && r->value("kind", "") == "wrong_output" && r->value("rule", "") != "H14") {
          // A wrong shape or dtype fails this trial; the candidate may still be asked again.
          if (first_failure) {
            out_.diagnostics.push_back(Diag("correctness", "wrong_output", r->value("message", "")));
            first_failure = false;
          }
          continue;
        }
        return Failed("correctness", "correctness trial " + std::to_string(i + 1), r,
                      opt_.call_timeout);
      }
      const std::string during = t.variant >= 0  ? std::string("the trial with another shape")
                                 : t.signed_inputs ? std::string("the signed-input trial")
                                                   : "trial " + std::to_string(i + 1);
      if (FellBack(*r, during)) return false;
      if (profiled) {
        auto found = CheckProfile(r->value("profile", json::object()),
                                  r->value("extension_calls", 0),
                                  {opt_.policy, &opt_.allowed_aten, opt_.allow_libraries});
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
          std::string which = t.signed_inputs ? "the signed-input trial"
                                              : "trial " + std::to_string(i + 1);
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

  bool Time() {
    // Big problems time with fewer input sets in rotation rather than run out of memory.
    const int pool_size = FitTimingPool(opt_.timing.pool, memory_);
    const auto names = PoolNames(pool_size);
    out_.input_sets = pool_size;
    auto pool = lane_.PreparePool(problem_, pool_size, seed_ ^ 0x5bd1e995);
    if (!pool.ok()) return Infra("the judge failed to prepare timing inputs: " + pool.status().message());
    // Fresh inputs for every timed call (H06): the candidate host rewrites them from this
    // seed, and the judge checks the last call of each slot against its own rewrite.
    const uint64_t perturb_seed = ((seed_ ^ 0x7e57ab1e5eedULL) >> 2) | 1;
    std::vector<int64_t> last_index(names.size(), -1);
    auto noop = lane_.NoopCost(problem_, pool_size, perturb_seed);
    if (!noop.ok()) return Infra("the judge failed to calibrate timing: " + noop.status().message());
    Result<json> last_reply = json();
    milliseconds last_timeout(0);
    double wall_sum = 0;
    int calls = 0;
    int next_first = 0, last_iters = 0;
    // What the host's threads did meanwhile, from /proc: the main thread's waits for a CPU in
    // the bounded batches (`waited`), and every thread's CPU over the whole span (`span0`).
    const pid_t host = HostOf(proc_.pid);
    const HostTimes span0 = ReadHostTimes(host);
    const auto timing_start = Clock::now();
    HostTimes waited;
    waited.ok = span0.ok;
    BatchFn batch = [&](int first, int iters, std::vector<double>* ms) -> Status {
      next_first = first + iters;
      last_iters = iters;
      // Generous: the stopping rule sized the batch at ~50 ms from measured call times.
      last_timeout = opt_.call_timeout + milliseconds(static_cast<int64_t>(iters) * 2000);
      const HostTimes h0 = ReadHostTimes(host);
      auto t0 = Clock::now();
      last_reply = Ask({{"op", "time"}, {"slots", names}, {"buffers", *pool}, {"first", first},
                        {"iters", iters}, {"perturb_seed", perturb_seed}},
                       last_timeout);
      for (int64_t g = first; g < static_cast<int64_t>(first) + iters; ++g) {
        last_index[static_cast<size_t>(g) % names.size()] = g;
      }
      double wall = MsSince(t0);
      if (!last_reply.ok() || !last_reply->value("ok", false)) return Status::Internal("failed");
      *ms = (*last_reply)["device_ms"].get<std::vector<double>>();
      double sum = 0;
      for (double v : *ms) sum += v;
      if (first > 0) {  // warm-up calls are not bounded: they include lazy initialisation
        wall_sum += wall;
        calls += iters;
        waited += ReadHostTimes(host) - h0;
      }
      // Reported times can never add up to more than the time that passed.
      if (sum > wall * 1.02 + 1.0) return Status::Invalid("reported " + FormatNumber(sum) +
                                                          " ms of calls in " + FormatNumber(wall) +
                                                          " ms of wall time");
      return Status::Ok();
    };
    auto t = DriveTiming(opt_.timing, batch);
    if (!t.ok()) {
      if (t.status().code() == Code::kInvalidArgument) {
        return Cheat("H08", "timing was tampered with: " + t.status().message());
      }
      return Failed("timing", "the timed calls", last_reply, last_timeout);
    }
    // The wall-clock bound (JudgeWallClock): what the clock saw per call, less the measured
    // cost of an empty timed call, cannot be more than twice what the candidate reports.
    double net = calls > 0 ? wall_sum / calls - *noop : 0;
    auto escaped = [&] { return BeyondBound(net, t->summary.median_ms); };
    // A gap as it would be had the host's main thread never waited for a CPU in the batch(es)
    // that measured it.
    auto unqueued_of = [&](double gap) {
      return calls > 0 && waited.ok ? gap - waited.thread_wait_ms / calls : gap;
    };
    double unqueued = unqueued_of(net);
    double wait_ms = waited.thread_wait_ms;
    out_.host_cpu_ms = waited.thread_cpu_ms;
    out_.host_wait_ms = waited.thread_wait_ms;
    // Load on the machine (compilers, other lanes) slows the host side of every call and
    // stretches the wall clock past what the kernels took; the empty-call calibration may have
    // been measured under another load. A gap that is the candidate's is there every time, load
    // comes and goes: before calling it a cheat, measure the empty call and a batch of real
    // calls again, up to three times, and keep the smallest gap.
    for (int round = 0; round < 3 && escaped(); ++round) {
      auto again = lane_.NoopCost(problem_, pool_size, perturb_seed, /*fresh=*/true);
      if (!again.ok()) return Infra("the judge failed to calibrate timing: " + again.status().message());
      wall_sum = 0;
      calls = 0;
      waited = HostTimes{true};
      std::vector<double> ms;
      Status s = batch(next_first, std::max(last_iters, 20), &ms);
      if (s.code() == Code::kInvalidArgument) return Cheat("H08", "timing was tampered with: " + s.message());
      if (!s.ok()) return Failed("timing", "the timed calls", last_reply, last_timeout);
      double round_net = wall_sum / calls - *again;
      if (round_net < net) wait_ms = waited.thread_wait_ms;
      net = std::min(net, round_net);
      if (waited.ok) unqueued = std::min(unqueued, unqueued_of(round_net));
    }
    const HostTimes span = ReadHostTimes(host) - span0;
    WallClockFacts facts;
    facts.median_ms = t->summary.median_ms;
    facts.gap_ms = net;
    facts.unqueued_gap_ms = unqueued;
    facts.host_times_ok = span.ok;
    facts.others_cpu_ms = span.others_cpu_ms();
    facts.span_ms = MsSince(timing_start);
    facts.host_has_children = facts.gap_ms > 0.05 && HasChildren(host);
    const WallClock bound = JudgeWallClock(facts);
    if (bound != WallClock::kWithin) {
      std::string seen = "reported " + FormatNumber(t->summary.median_ms) +
                         " ms per call but the wall clock saw " + FormatNumber(net) + " ms";
      // The machine, not the candidate, may have made the gap (kBusy): never `ok` then, and
      // not `cheat` either, but not measured, to be evaluated again (infrastructure results
      // are never stored).
      if (bound == WallClock::kBusy) {
        out_.outcome = Outcome::kInfraError;
        out_.diagnostics.push_back(Diag("timing", kBusyCode,
                                        "the machine was too busy to time this candidate: it " +
                                            seen + ", and its host waited " +
                                            FormatNumber(wait_ms) +
                                            " ms for a CPU during those calls",
                                        0, "Evaluate it again on a quieter machine."));
        return false;
      }
      return Cheat("H07", seen + ": work escaped the timer (another stream or thread?)" +
                              (span.ok ? "; its host's main thread waited " + FormatNumber(wait_ms) +
                                             " ms for a CPU, its other threads ran " +
                                             FormatNumber(std::max(0.0, span.others_cpu_ms())) + " ms"
                                       : std::string()));
    }
    // The timed calls are not traced (tracing would slow them): one untimed, traced call on
    // the first timing set instead, before emit overwrites its outputs with the timed ones.
    if (!guards_.empty()) {
      auto r = Ask({{"op", "call"}, {"slot", names[0]}, {"buffers", (*pool)[0]}}, opt_.call_timeout);
      if (!r.ok() || !r->value("ok", false)) {
        return Failed("timing", "a call on the timing inputs", r, opt_.call_timeout);
      }
      if (FellBack(*r, "a call on the timing inputs")) return false;
    }
    for (size_t i = 0; i < names.size(); ++i) {
      if (last_index[i] < 0) continue;  // never timed (fewer calls than slots)
      auto e = Ask({{"op", "emit"}, {"slot", names[i]}, {"buffers", (*pool)[i]}}, opt_.call_timeout);
      if (!e.ok() || !e->value("ok", false)) return Failed("timing", "returning timed outputs", e, opt_.call_timeout);
      auto c = CheckSlot(names[i], {{"seed", perturb_seed}, {"index", last_index[i]}});
      if (!c.ok()) return Infra("the judge failed to check timed outputs: " + c.status().message());
      if (!c->value("pass", false)) {
        std::string detail = c->contains("rule") ? c->value("message", "")
                                                 : DescribeMismatch((*c)["outputs"][0]);
        // Right in the correctness trials, wrong when timed: it behaves differently when it
        // is being measured (H15), which is cheating, not an honest mistake.
        out_.outcome = Outcome::kCheat;
        out_.diagnostics.push_back(Diag("timing", "H15",
                                        "outputs of the timed calls are wrong (" + detail +
                                            "): the kernel behaves differently when timed",
                                        0, RuleHint("H15")));
        Stop();
        return false;
      }
    }
    out_.timing = *t;
    return true;
  }

  // The extension must do the work: with its tensor results replaced by NaN, the answer has to
  // be wrong (H02: a decoy kernel beside the real computation).
  bool Ablate() {
    json prep = {{"op", "prepare"}, {"problem", problem_}, {"slot", "main"},
                 {"seed", seed_ ^ 0xab1a7e}, {"signed", false}};
    auto p = lane_.JudgeRequest(problem_, prep, milliseconds(300000));
    if (!p.ok()) return Infra("the judge failed to prepare the ablation call: " + p.status().message());
    auto r = Ask({{"op", "call"}, {"slot", "main"}, {"buffers", (*p)["slot"]}, {"ablate", true}},
                 opt_.call_timeout);
    if (!r.ok() || !r->value("ok", false)) return true;  // it broke without its kernels: fine
    if (FellBack(*r, "the ablation call")) return false;  // it answered without them
    auto c = CheckSlot("main");
    if (!c.ok()) return Infra("the judge failed to check the ablation call: " + c.status().message());
    if (c->value("pass", false)) {
      out_.outcome = Outcome::kCheat;
      out_.diagnostics.push_back(Diag(
          "runtime", "H02",
          "the answer stayed correct with every result of the candidate's extension replaced by "
          "NaN: the work is done elsewhere",
          0, "Compute the output in your own kernels, not beside them."));
      Stop();
      return false;
    }
    return true;
  }

  // H03: true (and the verdict is cheat) when the call's reply shows that an except branch,
  // or a finally block after an exception, of the candidate ran during the call.
  bool FellBack(const json& reply, const std::string& during) {
    if (guards_.empty()) return false;
    auto d = CheckGuards(reply.value("guards", json()), guards_, during);
    if (!d) return false;
    out_.diagnostics.push_back(*d);
    out_.outcome = Outcome::kCheat;
    Stop();
    return true;
  }

  bool Cheat(const std::string& rule, const std::string& message) {
    out_.outcome = Outcome::kCheat;
    out_.diagnostics.push_back(Diag("timing", rule, message, 0, RuleHint(rule)));
    Stop();
    return false;
  }

 public:
  uint64_t seed_ = 0;
  uint64_t init_seed_ = 0;

 private:
  Lane::Impl& lane_;
  const LoadInlineFn& load_inline_;
  const ExecOptions& opt_;
  ExecResult out_;
  std::string problem_;
  MemoryFacts memory_;
  std::vector<extract::GuardBlock> guards_;  // watched by the host; empty: nothing to watch
  ZygoteChild proc_;  // the candidate host
  Channel chan_;      // its channel (moved out of proc_)
};

}  // namespace

ExecResult Lane::Impl::RunCandidate(const std::string& problem_id, const ProblemInfo& problem,
                                    const std::string& code, const LoadInlineFn& load_inline,
                                    const ExecOptions& opt) {
  CandidateRun run(*this, load_inline, opt);
  run.seed_ = opt.seed ? opt.seed : DrawSeed();
  run.init_seed_ = problem.init_seed;
  return run.Run(problem_id, problem, code);
}

}  // namespace kf::execute
