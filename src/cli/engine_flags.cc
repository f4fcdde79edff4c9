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
  AddVerdictFlags(app, f);
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
