// kforge ui: the web UI over an existing store, read-only, with no evaluation engine (runs,
// problems, verdicts; no live view, no submissions). The same pages and HTTP front as `kforge
// serve`, so the same token rules: a token is required beyond loopback.
#ifdef KFORGE_HAVE_NET

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/engine_flags.h"
#include "cli/http_flags.h"
#include "eval/eval.h"
#include "serve/server.h"
#include "store/store.h"

namespace kf::cli {
namespace {
namespace fs = std::filesystem;

struct UiFlags {
  serve::ServeOptions serve;
  std::string cache;
  std::string token_env;
};

int RunUi(UiFlags& f) {
  if (int rc = ReadTokenEnv("ui", f.token_env, &f.serve.token); rc != kExitOk) return rc;
  if (auto s = serve::CheckExposure(f.serve); !s.ok()) {
    std::cerr << "kforge ui: " << s.message() << "\n";
    return kExitUsage;
  }
  const fs::path cache =
      fs::absolute(f.cache.empty() ? eval::DefaultCacheDir() : fs::path(f.cache));
  const fs::path db = cache / "kforge.db";
  if (!fs::is_regular_file(db)) {
    std::cerr << "kforge ui: no store at " << db.string()
              << ": give the --cache that kforge bench (or serve) used\n";
    return kExitUsage;
  }
  // Opening brings an older store's schema up to date (it adds the runs tables); the pages
  // themselves never write.
  auto store = store::Store::Open(db);
  if (!store.ok()) {
    std::cerr << "kforge ui: " << store.status().message() << "\n";
    return kExitInfra;
  }
  const auto& stop = StopOnSignals();
  Status s = serve::RunServer(f.serve, nullptr, nullptr, store->get(), stop, [&](int port) {
    std::cout << "kforge ui: http://" << f.serve.host << ":" << port << "/ (read-only, store "
              << db.string() << ", " << (f.serve.token.empty() ? "no token" : "login required")
              << ")" << std::endl;
  });
  if (!s.ok()) {
    std::cerr << "kforge ui: " << s.message() << "\n";
    return s.code() == Code::kInvalidArgument ? kExitUsage : kExitInfra;
  }
  return kExitOk;
}

}  // namespace

Command UiCommand() {
  return {"ui", "Browse a store's runs, problems and verdicts in a web browser (read-only)",
          [](CLI::App* app) -> std::function<int()> {
            auto f = std::make_shared<UiFlags>();
            f->serve.port = 8001;  // beside a `kforge serve` on 8000
            app->add_option("--cache", f->cache,
                            "the cache folder whose store (kforge.db) to show (default: "
                            "~/.cache/kforge)");
            AddHttpFlags(app, &f->serve, &f->token_env);
            return [f] { return RunUi(*f); };
          }};
}

}  // namespace kf::cli

#endif  // KFORGE_HAVE_NET
