#include "cli/engine_flags.h"

#include <signal.h>

namespace kf::cli {
namespace {
std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop.store(true); }
}  // namespace

void AddEngineFlags(CLI::App* app, EvalFlags* f) {
  app->add_option("--backend", f->backend, "cuda or cpu (default: cuda where a GPU is visible)")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  app->add_option("--python", f->python, "Python interpreter with PyTorch");
  app->add_option("--cache", f->cache_dir,
                  "cache folder: artifacts, store, problems sent with jobs (default: "
                  "~/.cache/kforge); share it between workers to build each extension once");
  app->add_option("--build-workers", f->build_workers, "concurrent compiles (default: cores)");
  app->add_option("--devices", f->devices,
                  "GPU indices I,J,..., one execution lane each (default: 0)")
      ->delimiter(',');
  app->add_option("--trials", f->trials, "seeded correctness trials")->check(CLI::Range(1, 100));
  app->add_flag("--no-baselines", f->no_baselines, "skip timing eager and torch.compile");
  app->add_option("--timing-budget-ms", f->timing_budget_ms, "timing budget per candidate")
      ->check(CLI::PositiveNumber);
  app->add_option("--call-timeout-s", f->call_timeout_s, "one candidate call longer is timeout")
      ->check(CLI::Range(1, 3600));
  app->add_option("--load-timeout-s", f->load_timeout_s, "importing and constructing ModelNew")
      ->check(CLI::Range(1, 3600));
  app->add_flag("--allow-libraries", f->allow_libraries, "allow cuBLAS/cuDNN/ATen compute");
}

const std::atomic<bool>& StopOnSignals() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client that hangs up must not end the server
  return g_stop;
}

}  // namespace kf::cli
