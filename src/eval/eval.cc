// The Evaluator: one job's policy, store lookup, then Prepare (extract, static rules, build:
// build_stage.cc) and Execute (a lane's run, baselines: baselines.cc, the verdict), then store.
#include <algorithm>

#include "backend/backend.h"
#include "common/hash.h"
#include "eval/decide.h"
#include "eval/impl.h"
#include "extract/extract.h"
#include "legality/legality.h"

namespace kf::eval {
namespace fs = std::filesystem;
using nlohmann::json;

Status Evaluator::Impl::EnsureLane(LaneState& ls, Verdict* v) {
  if (!ls.lane->Alive()) {
    // Its judge or zygote died (killed from outside, out of memory): the lane starts anew and
    // loads everything again, so one lost process does not fail every later job on it.
    if (auto s = ls.lane->Restart(); !s.ok()) {
      return Status::Unavailable(
          "the lane's judge or zygote died and the lane could not be started again: " +
          s.message());
    }
    ls.problems.clear();
    ls.device_key.clear();
    ls.device_name.clear();
  }
  if (ls.device_key.empty()) {
    auto a = native.get();
    if (!a.ok()) return a.status();
    if (a->environment) return Status::Unavailable(a->environment->Message());
    if (!a->ok) {
      return Status::Unavailable("kforge's timing helper failed to build:\n" + a->error_text);
    }
    auto info = ls.lane->Ready(a->so_path, a->module_name);
    if (!info.ok()) return info.status();
    ls.device_name = info->name.empty() ? info->device : info->name;
    ls.device_key = info->device + "|" + info->name + "|" + info->torch_version;
  }
  v->device = ls.device_name;
  return Status::Ok();
}

Result<execute::ProblemInfo> Evaluator::Impl::Problem(LaneState& ls, const std::string& hash,
                                                      const fs::path& path, bool trusted) {
  auto it = ls.problems.find(hash);
  if (it != ls.problems.end()) return it->second;
  // Parameters are drawn from a seed of the problem's own, the same for every candidate.
  uint64_t init_seed = std::stoull(hash.substr(0, 12), nullptr, 16);
  auto p = ls.lane->LoadProblem(hash.substr(0, 16), path, init_seed, trusted);
  if (!p.ok()) return p.status();
  auto source = ReadFile(path);
  if (!source.ok()) return source.status();
  p->source = std::move(*source);
  ls.problems[hash] = *p;
  return *p;
}


Verdict Evaluator::Impl::Finish(Prepared& p, VerdictStatus s) {
  p.verdict.status = s;
  score::Finish(&p.verdict, opt.reward);
  // Infrastructure failures say nothing about the candidate: never stored, tried again later.
  if (ShouldStore(s, p.job_key)) {
    (void)store->PutVerdict(p.job_key, p.verdict);
  }
  return p.verdict;
}


Prepared Evaluator::Impl::Prepare(const fs::path& problem_path, const std::string& text,
                                  bool problem_trusted) {
  Prepared p;
  p.problem_path = problem_path;
  p.problem_trusted = problem_trusted;
  p.text = text;
  Verdict& v = p.verdict;
  v.backend = opt.backend;
  v.policy = execute::PolicyName(opt.exec.policy);
  v.candidate_hash = Sha256Hex(text);
  v.problem_id = ProblemId(problem_path);
  auto final_as = [&](VerdictStatus s) {
    p.final = true;
    v.status = s;
    return std::move(p);
  };
  auto problem_src = ReadFile(problem_path);
  if (!problem_src.ok()) {
    v.diagnostics.push_back(InfraDiagnostic("extract", problem_src.status()));
    return final_as(VerdictStatus::kInfraError);
  }
  v.problem_hash = Sha256Hex(*problem_src);
  p.job_key = StoreKey(v.problem_hash, v.candidate_hash);

  // extract
  auto t0 = Now();
  p.candidate = extract::Extract(text, opt.family);
  v.candidate_format = backend::CandidateFormat(p.candidate.family);
  if (opt.reference_as_candidate) {  // plain PyTorch, no kernel of its own: that is the point
    auto& ds = p.candidate.diagnostics;
    ds.erase(std::remove_if(ds.begin(), ds.end(),
                            [](const Diagnostic& d) { return d.code == "no_kernel"; }),
             ds.end());
  }
  const extract::Candidate& cand = p.candidate;
  v.stages.push_back({"extract", cand.ok(), MsSince(t0), {{"from_reply", cand.from_reply}}});
  for (const auto& d : cand.diagnostics) v.diagnostics.push_back(d);
  if (!cand.ok()) return final_as(VerdictStatus::kFormatError);

  // static legality: the candidate's Python and kernel sources against the rules of docs/RULES.md
  t0 = Now();
  std::vector<Diagnostic> findings;
  if (!opt.reference_as_candidate) findings = StaticFindings(cand, *problem_src, opt);
  bool legal = true;
  for (const auto& d : findings) {
    legal = legal && d.severity != Severity::kError;
    v.diagnostics.push_back(d);
  }
  v.stages.push_back({"static", legal, MsSince(t0), json::object()});
  if (!legal) return final_as(VerdictStatus::kCheat);

  // build: every statically resolved load_inline call, in parallel. A family that compiles in
  // the candidate's process (Triton) has its build stage recorded from the run (Execute).
  if (PathOf(cand).Prebuilds()) {
    if (auto decided = BuildStatic(p)) return final_as(*decided);
  }

  return p;
}

namespace {

// What a lane's run says, into the verdict: its diagnostics in the submitted text's lines, its
// trials and ops, and the stages it went through (the build of a family that compiles in the
// candidate's process, execute, correctness, timing).
void RecordRun(const execute::ExecResult& r, const RuntimeBuilds& rb, const backend::Path& path,
               bool jit_cache_warm, Prepared& p) {
  Verdict& v = p.verdict;
  const extract::Candidate& cand = p.candidate;
  const int shift = cand.first_line - 1;
  for (auto d : r.diagnostics) {
    if (path.device().name == "cuda") HintStreamedCheck(cand, &d);  // where it was seen
    if (d.line > 0) {
      d.line += shift;
      if (d.excerpt.empty()) d.excerpt = LineOf(p.text, d.line);
    }
    v.diagnostics.push_back(d);
  }
  v.trials_passed = r.trials_passed;
  v.trials_total = r.trials_total;
  v.pytorch_ops = r.pytorch_ops;
  bool loaded = r.load_ms > 0 && (r.trials_total > 0 || r.outcome == execute::Outcome::kOk);
  if (!path.Prebuilds() && r.load_ms > 0) {
    // Triton compiled the kernels inside the candidate's process, on their first calls.
    v.stages.push_back({"build",
                        r.outcome != execute::Outcome::kCompileError,
                        r.jit_compile_ms,
                        {{"family", backend::FamilyName(cand.family)},
                         {"in_process", true},
                         {"compiled", r.jit_compiles},
                         {"cache_warm", jit_cache_warm},
                         {"launches", r.jit_launches}}});
  }
  v.stages.push_back({"execute", loaded, r.spawn_ms + r.load_ms - rb.ms,
                      {{"spawn_ms", r.spawn_ms},
                       {"host_prestarted", r.host_prestarted},
                       {"judge_peak_bytes", r.judge_peak_bytes},
                       {"candidate_peak_bytes", r.candidate_peak_bytes},
                       {"run_time_builds", rb.builds},
                       {"run_time_compiled", rb.compiled},
                       {"run_time_build_ms", rb.ms},
                       {"load_phases_ms", r.load_phases_ms}}});
  if (r.trials_total > 0) {
    v.stages.push_back({"correctness", r.trials_total == r.trials_passed, r.correctness_ms,
                        {{"prepare_ms", r.prepare_ms},
                         {"call_ms", r.call_ms},
                         {"profiled_call_ms", r.profiled_call_ms},
                         {"check_ms", r.check_ms},
                         {"trials", r.trials}}});
  }
  if (r.timing) {
    TimingSummary ts{r.timing->summary.median_ms, r.timing->summary.p10_ms,
                     r.timing->summary.p90_ms, r.timing->summary.n};
    v.candidate_ms = ts;
    v.stages.push_back({"timing", true, r.timing_ms, TimingFacts(r)});
  }
}
}  // namespace

std::optional<execute::ExecResult> Evaluator::Impl::Reverify(
    LaneState& ls, const execute::ProblemInfo& problem, const execute::LoadInlineFn& load_inline,
    execute::ExecOptions eo, Prepared& p, VerdictStatus* status) {
  Verdict& v = p.verdict;
  eo.seed = execute::DrawSeed();
  execute::ExecResult again = ls.lane->Run(problem.id, problem, p.candidate.code, load_inline, eo);
  v.stages.push_back({"reverify", again.outcome == execute::Outcome::kOk,
                      again.correctness_ms + again.timing_ms, json::object()});
  switch (JudgeReverify(again, v.candidate_ms->median_ms)) {
    case Reverified::kFailed: {
      const int shift = p.candidate.first_line - 1;
      for (auto d : again.diagnostics) {
        if (d.line > 0) d.line += shift;
        v.diagnostics.push_back(d);
      }
      *status = FromOutcome(again.outcome);
      v.trials_passed = again.trials_passed;
      v.trials_total = again.trials_total;
      return std::nullopt;
    }
    case Reverified::kSlowerCounts: {
      const auto& s2 = again.timing->summary;
      v.candidate_ms = TimingSummary{s2.median_ms, s2.p10_ms, s2.p90_ms, s2.n};
      // Its speedups are its own candidate against its own interleaved reference, and both
      // stages describe the run that counts: the first run's reference beside the second run's
      // candidate would be two measurements under different loads read as one.
      if (again.baselines) UseBaselines(*again.baselines, &v);
      for (auto& st : v.stages) {
        if (st.name == "timing") st.detail = TimingFacts(again);
        if (st.name == "baselines" && again.baselines) st.detail = BaselineFacts(*again.baselines);
      }
      return again;
    }
    case Reverified::kFirstCounts: break;
  }
  return std::nullopt;
}

Verdict Evaluator::Impl::Execute(Prepared p, LaneState& ls) {
  if (p.final) return Finish(p, p.verdict.status);
  Verdict& v = p.verdict;
  const extract::Candidate& cand = p.candidate;
  auto infra = [&](const std::string& stage, const Status& s) {
    v.diagnostics.push_back(InfraDiagnostic(stage, s));
    return Finish(p, VerdictStatus::kInfraError);
  };

  if (auto s = EnsureLane(ls, &v); !s.ok()) return infra("execute", s);
  auto problem = Problem(ls, v.problem_hash, p.problem_path, p.problem_trusted);
  if (!problem.ok()) return infra("execute", problem.status());
  RuntimeBuilds rb;
  execute::LoadInlineFn load_inline = RuntimeLoadInline(p, &rb);
  const backend::Path& path = PathOf(cand);
  execute::ExecOptions eo = opt.exec;
  eo.family = cand.family;
  eo.interleave_baselines = opt.baselines;
  bool jit_cache_warm = false;
  if (!path.Prebuilds()) {
    auto env = Environment();
    eo.jit_cache = path.JitCacheDir(opt.cache_dir, v.candidate_hash, env ? env->dump() : "");
    std::error_code ec;
    jit_cache_warm = fs::is_directory(eo.jit_cache, ec) && !fs::is_empty(eo.jit_cache, ec);
  }
  execute::ExecResult r = ls.lane->Run(problem->id, *problem, cand.code, load_inline, eo);
  RecordRun(r, rb, path, jit_cache_warm, p);
  if (LaneDeathExplains(r.outcome) && !ls.lane->Alive()) {
    // The candidate's process went down with its lane (a killed worker takes both), or the
    // judge was gone when the run asked it for a trial: the end says nothing about the
    // candidate. The lane starts again for the next job (EnsureLane), and the pipeline runs
    // this one once more (SpoiledByLoad's sibling, LaneDied).
    Diagnostic d = InfraDiagnostic(
        "execute", Status::Unavailable("the lane's judge or zygote died while the candidate ran: "
                                       "not the candidate's doing"));
    d.code = execute::kLaneDiedCode;
    v.diagnostics.insert(v.diagnostics.begin(), d);
    return Finish(p, VerdictStatus::kInfraError);
  }
  auto environment_failed = [&] {
    v.diagnostics.push_back(EnvironmentDiagnostic(*rb.environment));
    return Finish(p, VerdictStatus::kInfraError);
  };
  VerdictStatus status = RunStatus(r.outcome, r.build_failed, rb.environment.has_value());
  if (rb.environment) return environment_failed();
  if (status == VerdictStatus::kOk && opt.baselines) {
    if (auto s = UseReferenceTimes(ls, r, *problem, &v); !s.ok()) return infra("baselines", s);
    // The candidate's run and the reference's batches interleaved with it (A/B/A) whose
    // speedups count: the first one, or a slower re-verification's.
    std::optional<execute::ExecResult> again;
    if (NeedsReverify(v, opt.reverify_speedup)) {
      again = Reverify(ls, *problem, load_inline, eo, p, &status);
    }
    if (status == VerdictStatus::kOk) SetSpeedups(again ? *again : r, &v);
  }
  if (rb.environment) return environment_failed();  // in the re-verification's builds
  return Finish(p, status);
}

Evaluator::Evaluator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Evaluator::~Evaluator() = default;

Result<std::unique_ptr<Evaluator>> Evaluator::Create(const EvalOptions& opt) {
  std::error_code ec;
  fs::create_directories(opt.cache_dir, ec);
  if (ec) return Status::IoError("cannot create " + opt.cache_dir.string() + ": " + ec.message());
  if (!fs::exists(opt.runner_dir / "kforge_runner" / "judge.py")) {
    return Status::NotFound("kforge's runner is not at " + opt.runner_dir.string() +
                            " (set KFORGE_RUNNER_DIR)");
  }
  EvalOptions with_policy = opt;
  // Before any part starts: a bad allowlist fails without spawning a lane.
  if (auto s = LoadPolicy(&with_policy); !s.ok()) return s;
  auto parts = RealParts(with_policy);
  if (!parts.ok()) return parts.status();
  return CreateWith(with_policy, std::move(parts.value()));
}

Result<std::unique_ptr<Evaluator>> Evaluator::CreateWith(const EvalOptions& opt,
                                                         EvaluatorParts parts) {
  if (!parts.builder || !parts.store) {
    return Status::Invalid("an Evaluator needs a builder and a store");
  }
  auto impl = std::make_unique<Impl>();
  impl->opt = opt;
  if (auto s = LoadPolicy(&impl->opt); !s.ok()) return s;  // nothing to do when Create did it
  impl->settings_digest = SettingsDigest(impl->opt);
  impl->clock = parts.clock ? std::move(parts.clock) : RealClock();
  impl->store = std::move(parts.store);
  impl->builder = std::move(parts.builder);
  for (auto& lane : parts.lanes) {
    if (!lane) return Status::Invalid("an Evaluator's lane is missing");
    impl->lanes.push_back(LaneState{std::move(lane), {}, "", ""});
  }
  ArtifactBuilder* b = impl->builder.get();
  if (!impl->lanes.empty()) {  // the timing helper only lanes load
    impl->native = std::async(std::launch::async, [b] { return b->BuildNative(); }).share();
  }
  return std::unique_ptr<Evaluator>(new Evaluator(std::move(impl)));
}

std::vector<Diagnostic> StaticFindings(const extract::Candidate& c, const std::string& problem_text,
                                       const EvalOptions& opt) {
  const execute::PolicyAllows allows = execute::Allows(opt.exec.policy);
  legality::LegalityOptions lo;
  lo.allow_libraries = opt.exec.allow_libraries;
  lo.allow_graphs = allows.cuda_graphs;
  // The precision rule (H13) applies unless the problem itself works in reduced precision.
  lo.fp32_problem = problem_text.find("float16") == std::string::npos &&
                    problem_text.find("bfloat16") == std::string::npos &&
                    problem_text.find(".half()") == std::string::npos;
  std::vector<Diagnostic> findings = legality::Check(c, lo);
  if (allows.pytorch_compute) {
    // KernelBench's acceptance: PyTorch compute is allowed, from forward (H01) or from the
    // kernel sources (H04: at::/torch:: calls, cuBLAS, cuDNN); the run lists the ATen ops.
    for (auto& d : findings) {
      if (d.code != "H01" && d.code != "H04") continue;
      d.severity = Severity::kInfo;
      d.message = "allowed under the kernelbench policy: " + d.message;
    }
  }
  return findings;
}

Verdict Evaluator::Evaluate(const fs::path& problem_path, const std::string& candidate_text) {
  return Execute(Prepare(problem_path, candidate_text, true), 0);
}

Prepared Evaluator::Prepare(const fs::path& problem_path, const std::string& candidate_text,
                            bool problem_trusted) {
  return impl_->Prepare(problem_path, candidate_text, problem_trusted);
}

namespace {

Status NoLanes() {
  return Status::Unavailable("this kforge process compiles only (a build worker): it has no "
                             "execution lane");
}

}  // namespace

LaneState* Evaluator::Impl::PickLane(int lane) {
  if (lanes.empty()) return nullptr;
  if (lane < 0 || lane >= static_cast<int>(lanes.size())) lane = 0;
  return &lanes[static_cast<size_t>(lane)];
}

Verdict Evaluator::Execute(Prepared p, int lane) {
  LaneState* ls = impl_->PickLane(lane);
  if (ls == nullptr) {
    if (p.final) return impl_->Finish(p, p.verdict.status);
    p.verdict.diagnostics.push_back(InfraDiagnostic("execute", NoLanes()));
    return impl_->Finish(p, VerdictStatus::kInfraError);
  }
  return impl_->Execute(std::move(p), *ls);
}

Result<execute::ProblemInfo> Evaluator::Impl::LoadOnLane(LaneState& ls, const fs::path& path,
                                                         bool trusted, std::string* hash) {
  auto src = ReadFile(path);
  if (!src.ok()) return src.status();
  Verdict scratch;
  if (auto s = EnsureLane(ls, &scratch); !s.ok()) return s;
  *hash = Sha256Hex(*src);
  return Problem(ls, *hash, path, trusted);
}

Result<Evaluator::ProblemFacts> Evaluator::Describe(const fs::path& problem_path, int lane) {
  LaneState* ls = impl_->PickLane(lane);
  if (ls == nullptr) return NoLanes();
  std::string hash;
  auto info = impl_->LoadOnLane(*ls, problem_path, true, &hash);
  if (!info.ok()) return info.status();
  return ProblemFacts{*info, ls->device_name};
}

Status Evaluator::Warm(const fs::path& problem_path, int lane, bool problem_trusted) {
  LaneState* ls = impl_->PickLane(lane);
  if (ls == nullptr) return NoLanes();
  std::string hash;
  auto info = impl_->LoadOnLane(*ls, problem_path, problem_trusted, &hash);
  if (!info.ok()) return info.status();
  if (!impl_->opt.baselines) return Status::Ok();
  // With baselines on, every timed candidate's batches interleave the reference's (A/B/A), and
  // its speedups come from those. A warm-up makes torch.compile compile, off the candidates'
  // timing, and measures nothing: the reference timed alone (GetBaselines) is taken only when
  // a verdict needs it (a run without interleaved batches).
  return ls->lane->WarmReference(*info, impl_->opt.exec.timing, execute::DrawSeed());
}

int Evaluator::lanes() const { return static_cast<int>(impl_->lanes.size()); }

const backend::Path& Evaluator::Impl::PathOf(const extract::Candidate& c) const {
  const backend::Device* d = backend::FindDevice(opt.backend);
  return backend::PathFor(d ? *d : *backend::FindDevice("cpu"), c.family);
}

}  // namespace kf::eval
