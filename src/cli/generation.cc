#include "cli/generation.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "common/files.h"

#ifdef KFORGE_HAVE_NET
#include "model_http/http_transport.h"
#endif

namespace kf::cli {
namespace fs = std::filesystem;

void AddModelFlags(CLI::App* app, ModelSetup* f) {
  app->add_option("--model-url", f->url,
                  "OpenAI-compatible base URL, e.g. http://localhost:8000/v1");
  app->add_option("--model", f->model, "model name sent with every request");
  app->add_option(
      "--api-key-env", f->api_key_env,
      "environment variable holding the API key, sent as a Bearer token (OPENAI_API_KEY)");
  app->add_option("--request-timeout-s", f->request_timeout_s,
                  "give up on a request not fully answered after this long (600)")
      ->check(CLI::Range(1, 86400));
  app->add_option(
         "--retries", f->retries,
         "retries of a request on connect errors, HTTP 429 and 5xx, with exponential backoff (3)")
      ->check(CLI::Range(0, 20));
  app->add_option("--concurrency", f->concurrency,
                  "model requests in flight at once (default: --samples)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--temperature", f->temperature, "sampling temperature (0.7)");
  app->add_option("--top-p", f->top_p, "nucleus sampling (0.95)");
  app->add_option("--max-tokens", f->max_tokens, "tokens per reply, reasoning included (16384)")
      ->check(CLI::PositiveNumber);
  app->add_option("--stop", f->stop, "stop sequence (repeatable)");
  app->add_option("--sampling-seed", f->seed,
                  "the model's sampling seed; sample i sends seed + i (default: none)");
  app->add_option("--prompt-dir", f->prompt_dir, "folder of prompt templates (default: prompts/)");
}

model::Sampling MakeSampling(const ModelSetup& f) {
  model::Sampling s;
  s.temperature = f.temperature;
  s.top_p = f.top_p;
  s.max_tokens = f.max_tokens;
  s.stop = f.stop;
  if (f.seed >= 0) {
    s.seed = f.seed;
  }
  return s;
}

Result<std::unique_ptr<model::ModelClient>> MakeClient(const ModelSetup& f, int samples) {
#ifdef KFORGE_HAVE_NET
  if (f.url.empty()) {
    return Status::Invalid("no model server: pass --model-url");
  }
  if (f.model.empty()) {
    return Status::Invalid("no model name: pass --model");
  }
  model::HttpOptions ho;
  ho.request_timeout = std::chrono::seconds(f.request_timeout_s);
  ho.connect_timeout = std::chrono::seconds(std::min(10, f.request_timeout_s));
  auto transport = model::MakeHttpTransport(f.url, ho);
  if (!transport.ok()) {
    return transport.status();
  }
  model::ClientOptions co;
  co.model = f.model;
  if (const char* key = std::getenv(f.api_key_env.c_str()); key && *key) {
    co.api_key = key;
  }
  co.max_attempts = f.retries + 1;
  co.max_concurrency = f.concurrency > 0 ? f.concurrency : std::max(1, samples);
  return std::make_unique<model::ModelClient>(co, std::move(transport.value()));
#else
  (void)f;
  (void)samples;
  return Status::Unavailable(
      "this kforge was built without KFORGE_NET (static build): it cannot "
      "talk to a model server");
#endif
}

Result<std::unique_ptr<pipeline::Pipeline>> MakeGenerationEngine(const eval::EvalOptions& opt) {
  pipeline::PipelineOptions po;
  po.build_threads = std::max(1, opt.build_workers);
  return pipeline::MakePipeline(opt, po);
}

std::string ProgressLine(const agent::Turn& t) {
  char buf[160];
  std::string s = "sample " + std::to_string(t.sample) + " turn " + std::to_string(t.turn) + ": ";
  if (!t.error.empty()) {
    return s + "model call failed: " + t.error;
  }
  const Verdict& v = *t.verdict;
  s += StatusName(v.status);
  if (v.trials_total > 0) {
    s += "  " + std::to_string(v.trials_passed) + "/" + std::to_string(v.trials_total) + " trials";
  }
  if (v.speedup_vs_eager) {
    std::snprintf(buf, sizeof buf, "  %.2fx vs eager", *v.speedup_vs_eager);
    s += buf;
  }
  if (t.reward) {
    std::snprintf(buf, sizeof buf, "  reward %.2f", *t.reward);
    s += buf;
  }
  std::snprintf(buf, sizeof buf, "  (model %.1f s, verify %.1f s)", t.model_ms / 1000,
                t.eval_ms / 1000);
  return s + buf;
}

namespace {

// Model replies and compiler output may hold bytes that are not UTF-8 (or excerpts cut inside
// a character): replaced, never a throw.
std::string Dump(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status WriteFile(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) {
    return Status::IoError("cannot write " + p.string());
  }
  return Status::Ok();
}

}  // namespace

Result<GenerationReport> RunGeneration(pipeline::Pipeline& engine, model::ModelClient& client,
                                       const GenerationRequest& req) {
  auto source = ReadFile(req.problem);
  if (!source.ok()) {
    return Status::NotFound("cannot read problem " + req.problem.string());
  }
  auto templates = agent::LoadTemplates(
      req.prompt_dir.empty() ? agent::DefaultPromptDir() : req.prompt_dir,
      req.prompt_format.empty() ? req.backend : req.prompt_format);
  if (!templates.ok()) {
    return templates.status();
  }
  GenerationReport report;
  std::ofstream jsonl;
  if (!req.out_dir.empty()) {
    std::error_code ec;
    fs::create_directories(req.out_dir, ec);
    report.trajectories_path = req.out_dir / "trajectories.jsonl";
    jsonl.open(report.trajectories_path, std::ios::trunc);
    if (ec || !jsonl) {
      return Status::IoError("cannot write to " + req.out_dir.string());
    }
  }
  // Shape injection: what the judge itself measured, so the prompt cannot disagree with it.
  auto facts = engine.Describe(req.problem);
  if (!facts.ok()) {
    return facts.status();
  }
  agent::ProblemContext ctx{eval::ProblemId(req.problem), *source,
                            agent::DescribeShapes(facts->info), req.backend, facts->device};
  agent::Callbacks cb;
  cb.on_turn = [&](const agent::Turn& t) {
    if (req.progress) {
      *req.progress << ProgressLine(t) << std::endl;
    }
    if (req.on_turn) {
      req.on_turn(t);
    }
    if (t.verdict && t.verdict->status == VerdictStatus::kInfraError) {
      ++report.infra_errors;
    }
    if (jsonl.is_open()) {
      jsonl << Dump(agent::TurnJson(t)) << std::endl;
    }
  };
  cb.on_trajectory = [&](const agent::Trajectory& t) {
    if (jsonl.is_open()) {
      jsonl << Dump(agent::TrajectoryJson(t)) << std::endl;
    }
  };
  agent::EvaluateFn evaluate = [&](const std::string& text) {
    return engine.Evaluate({req.problem, text});
  };
  report.result = agent::Generate(req.options, *templates, ctx, client, evaluate, cb);
  if (!req.out_dir.empty() && report.result.best) {
    report.best_path = req.out_dir / "best.py";
    report.verdict_path = req.out_dir / "best.json";
    if (auto s = WriteFile(report.best_path, report.result.best->candidate); !s.ok()) {
      return s;
    }
    if (auto s =
            WriteFile(report.verdict_path, Dump(ToJson(report.result.best->verdict), 2) + "\n");
        !s.ok()) {
      return s;
    }
  }
  return report;
}

}  // namespace kf::cli
