#include "cli/engine_flags.h"

#include <signal.h>

#include <cstdlib>

namespace kf::cli {
namespace {
std::atomic<bool> g_stop{false};
// The first signal asks for a clean stop; a second one, while that runs, ends the process.
void OnSignal(int sig) {
  if (g_stop.exchange(true)) {
    signal(sig, SIG_DFL);
    raise(sig);
  }
}
}  // namespace

void AddRedisPasswordFlag(CLI::App* app, RedisFlags* f) {
  app->add_option("--redis-password-env", f->password_env,
                  "environment variable holding the Redis password (keeps it off the command "
                  "line; the URL names the ACL user, if any)");
}

Result<queue::RedisAddress> ToRedisAddress(const RedisFlags& f) {
  auto a = queue::ParseRedisUrl(f.url);
  if (!a.ok()) return a.status();
  if (!f.password_env.empty()) {
    if (auto s = queue::SetRedisPasswordFromEnv(f.password_env, std::getenv(f.password_env.c_str()),
                                                &a.value());
        !s.ok()) {
      return s;
    }
  }
  return a;
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
