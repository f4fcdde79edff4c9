// kforge data sft|rft|rl: training sets from generate trajectories and bench verdicts
// (src/data). A prompt for a problem that no generate turn recorded is made as generate makes
// it: the templates of prompts/ and the shapes the judge measures (the Evaluator's Describe,
// started only when such a prompt is needed).
#include <fstream>
#include <iostream>
#include <memory>

#include "backend/backend.h"
#include "agent/agent.h"
#include "cli/commands.h"
#include "cli/eval_flags.h"
#include "common/files.h"
#include "data/data.h"
#include "eval/eval.h"
#include "problems/registry.h"

namespace kf::cli {
namespace {
namespace fs = std::filesystem;

struct DataFlags {
  std::string mode;  // "sft", "rft", "rl"
  std::vector<std::string> trajectories, verdicts, problems;
  std::string out, format = "chat", prompt_dir;
  bool sampled_only = false;
  data::SftOptions sft;
  data::RftOptions rft;
  data::RlOptions rl;
  EvalFlags eval;
};

// Prompts for problem files: one Evaluator (a judge to measure shapes) made on first use.
class Prompts {
 public:
  explicit Prompts(const DataFlags& f) : f_(f) {}

  Result<std::vector<model::Message>> operator()(const fs::path& problem) {
    if (!ev_) {
      auto opt = ToEvalOptions(f_.eval);
      opt.baselines = false;
      auto ev = eval::Evaluator::Create(opt);
      if (!ev.ok()) return ev.status();
      ev_ = std::move(*ev);
      backend_ = opt.backend;
      auto t = agent::LoadTemplates(
          f_.prompt_dir.empty() ? agent::DefaultPromptDir() : fs::path(f_.prompt_dir),
          backend::PromptFormat(opt.backend, opt.family));
      if (!t.ok()) return t.status();
      templates_ = *t;
    }
    auto source = ReadFile(problem);
    if (!source.ok()) return source.status();
    auto facts = ev_->Describe(problem, 0);
    if (!facts.ok()) return facts.status();
    agent::ProblemContext ctx{eval::ProblemId(problem), *source, agent::DescribeShapes(facts->info),
                              backend_, facts->device};
    return agent::FirstPrompt(templates_, ctx);
  }

 private:
  const DataFlags& f_;
  std::unique_ptr<eval::Evaluator> ev_;
  std::string backend_;
  agent::PromptTemplates templates_;
};

Status WriteAtomically(const fs::path& p, const std::string& text) {
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  fs::path tmp = p.string() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f) return Status::IoError("cannot write " + tmp.string());
  }
  fs::rename(tmp, p, ec);
  if (ec) return Status::IoError("cannot rename " + tmp.string() + ": " + ec.message());
  return Status::Ok();
}

int RunData(DataFlags& f) {
  if (f.trajectories.empty() && f.verdicts.empty()) {
    std::cerr << "kforge data " << f.mode << ": give --trajectories and/or --verdicts\n";
    return kExitUsage;
  }
  std::vector<fs::path> tr(f.trajectories.begin(), f.trajectories.end());
  std::vector<fs::path> vd(f.verdicts.begin(), f.verdicts.end());
  auto corpus = data::Load(tr, vd);
  if (!corpus.ok()) {
    std::cerr << "kforge data " << f.mode << ": " << corpus.status().message() << "\n";
    return kExitUsage;
  }
  problems::Registry registry;
  for (const auto& dir : f.problems) {
    Status s = registry.AddFolder(dir);
    if (!s.ok()) {
      std::cerr << "kforge data " << f.mode << ": " << s.message() << "\n";
      return kExitUsage;
    }
  }
  // Bench records whose problem file moved, and generate turns (which name none): by id.
  for (auto& s : corpus->bench) {
    std::error_code ec;
    if (!s.problem_path.empty() && fs::exists(s.problem_path, ec)) continue;
    if (const auto* p = registry.Find(s.problem)) s.problem_path = p->path;
  }
  if (f.mode == "rl" && !f.sampled_only) {
    for (const auto* p : registry.List()) f.rl.extra_problems[p->id] = p->path;
  }
  Prompts prompts(f);
  data::PromptFn prompt = [&](const fs::path& p) { return prompts(p); };
  data::Output out;
  if (f.mode == "sft") out = data::Sft(*corpus, f.sft, prompt);
  if (f.mode == "rft") out = data::Rft(*corpus, f.rft, prompt);
  if (f.mode == "rl") out = data::Rl(*corpus, f.rl, prompt, ReadFile);
  auto format = f.format == "verl" ? data::Format::kVerl : data::Format::kChat;
  Status s = WriteAtomically(f.out, data::ToJsonl(out, format, f.mode == "rl"));
  if (!s.ok()) {
    std::cerr << "kforge data " << f.mode << ": " << s.message() << "\n";
    return kExitInfra;
  }
  std::vector<std::string> warnings = corpus->warnings;
  warnings.insert(warnings.end(), out.warnings.begin(), out.warnings.end());
  for (size_t i = 0; i < warnings.size() && i < 20; ++i)
    std::cerr << "warning: " << warnings[i] << "\n";
  if (warnings.size() > 20) std::cerr << "warning: ... and " << warnings.size() - 20 << " more\n";
  std::cout << f.mode << ": " << out.examples.size() << " examples from "
            << corpus->conversations.size() << " generate conversations and "
            << corpus->bench.size() << " bench samples -> " << f.out << " (" << f.format << ")\n";
  return out.examples.empty() ? 1 : kExitOk;
}

// The flags every mode takes, declared once.
void AddCommon(CLI::App* sub, DataFlags* f) {
  sub->add_option("--trajectories", f->trajectories,
                  "generate's trajectories.jsonl, or a folder searched for them (repeatable)");
  sub->add_option("--verdicts", f->verdicts,
                  "bench's verdicts.jsonl, or a folder searched for them (repeatable)");
  sub->add_option("--problems", f->problems,
                  "problem folders: files by id for prompts (rl: every problem, sampled or not)");
  sub->add_option("--out", f->out, "the JSONL file to write")->required();
  sub->add_option("--format", f->format, "chat (OpenAI messages) or verl (verl's columns)")
      ->check(CLI::IsMember({"chat", "verl"}));
  sub->add_option("--prompt-dir", f->prompt_dir, "templates for prompts made here (prompts/)");
  sub->add_option("--backend", f->eval.backend, "for prompts made here: cuda or cpu")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  sub->add_option("--family", f->eval.family,
                  "for prompts made here: load_inline (default) or triton (the reply format asked "
                  "for)")
      ->check(CLI::IsMember({"auto", "load_inline", "triton"}));
  sub->add_option("--python", f->eval.python, "for prompts made here: Python with PyTorch");
  sub->add_option("--cache", f->eval.cache_dir, "cache folder (default: ~/.cache/kforge)");
}

}  // namespace

Command DataCommand() {
  return {"data",
          "Training sets (SFT, RFT, RL prompts) from generate trajectories and bench verdicts",
          [](CLI::App* app) -> std::function<int()> {
            auto f = std::make_shared<DataFlags>();
            app->require_subcommand(1);
            auto* sft = app->add_subcommand("sft", "prompt -> the final correct, legal kernel");
            AddCommon(sft, f.get());
            sft->add_flag("--repairs", f->sft.repairs, "keep the repair turns before it");
            sft->add_flag("--reasoning", f->sft.reasoning, "keep reasoning as <think>...</think>");
            auto* rft = app->add_subcommand("rft", "per problem the k most diverse fast kernels");
            AddCommon(rft, f.get());
            rft->add_option("--min-speedup", f->rft.min_speedup, "vs eager, at least (1.0)");
            rft->add_option("--k", f->rft.k, "kernels per problem at most (4)")
                ->check(CLI::PositiveNumber);
            rft->add_option("--ngram", f->rft.ngram, "token n-gram length (5)")
                ->check(CLI::Range(1, 64));
            rft->add_option("--num-hashes", f->rft.num_hashes, "MinHash signature length (128)")
                ->check(CLI::Range(8, 4096));
            rft->add_option("--max-similarity", f->rft.max_similarity,
                            "estimated Jaccard above which two kernels are one solution (0.9)")
                ->check(CLI::Range(0.0, 1.0));
            auto* rl = app->add_subcommand("rl", "prompts with Pass@k difficulty, easiest first");
            AddCommon(rl, f.get());
            rl->add_option("--k", f->rl.k, "Pass@k's k (1)")->check(CLI::PositiveNumber);
            rl->add_option("--min-difficulty", f->rl.min_difficulty, "keep 1 - Pass@k >= this")
                ->check(CLI::Range(0.0, 1.0));
            rl->add_option("--max-difficulty", f->rl.max_difficulty, "keep 1 - Pass@k <= this")
                ->check(CLI::Range(0.0, 1.0));
            rl->add_flag("--inline-problems", f->rl.inline_problems,
                         "ground_truth is the problem's source (for --allow-inline-problems)");
            rl->add_option("--data-source", f->rl.data_source, "the rows' data_source (kforge)");
            rl->add_flag("--sampled-only", f->sampled_only,
                         "leave out --problems problems that have no sample");
            for (auto* sub : {sft, rft, rl}) {
              sub->callback([f, sub] { f->mode = sub->get_name(); });
            }
            return [f] { return RunData(*f); };
          }};
}

}  // namespace kf::cli
