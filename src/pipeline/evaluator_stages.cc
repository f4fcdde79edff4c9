// EvaluatorStages: the Pipeline's stages done by an eval::Evaluator (borrowed or owned), the
// adapter every command uses (MakePipeline); tests give the Pipeline fakes instead
// (pipeline_fakes.h).
#include "pipeline/pipeline.h"

namespace kf::pipeline {
namespace {

class EvaluatorStagesImpl : public Stages {
 public:
  explicit EvaluatorStagesImpl(eval::Evaluator* ev) : ev_(ev) {}
  explicit EvaluatorStagesImpl(std::unique_ptr<eval::Evaluator> ev)
      : owned_(std::move(ev)), ev_(owned_.get()) {}
  int lanes() const override { return ev_->lanes(); }
  std::optional<Verdict> Lookup(const std::filesystem::path& problem,
                                const std::string& text) override {
    return ev_->Lookup(problem, text);
  }
  eval::Prepared Prepare(const Job& job) override {
    return ev_->Prepare(job.problem, job.text, job.problem_trusted);
  }
  Verdict Execute(eval::Prepared p, int lane) override { return ev_->Execute(std::move(p), lane); }
  void Warm(const Job& job, int lane) override {
    // A failure shows again, as a verdict, in Execute.
    (void)ev_->Warm(job.problem, lane, job.problem_trusted);
  }
  Result<eval::Evaluator::ProblemFacts> Describe(const std::filesystem::path& problem,
                                                 int lane) override {
    return ev_->Describe(problem, lane);
  }

 private:
  std::unique_ptr<eval::Evaluator> owned_;  // null when the caller keeps the Evaluator
  eval::Evaluator* ev_;
};

}  // namespace

std::unique_ptr<Stages> EvaluatorStages(eval::Evaluator* ev) {
  return std::make_unique<EvaluatorStagesImpl>(ev);
}
std::unique_ptr<Stages> EvaluatorStages(std::unique_ptr<eval::Evaluator> ev) {
  return std::make_unique<EvaluatorStagesImpl>(std::move(ev));
}

Result<std::unique_ptr<Pipeline>> MakePipeline(const eval::EvalOptions& opt, PipelineOptions po) {
  auto ev = eval::Evaluator::Create(opt);
  if (!ev.ok()) return ev.status();
  return std::make_unique<Pipeline>(EvaluatorStages(std::move(ev.value())), po);
}

PipelineOptions InOrder() {
  PipelineOptions po;
  po.build_threads = 1;
  po.reuse_stored = false;
  po.warm_lanes = false;
  return po;
}

}  // namespace kf::pipeline
