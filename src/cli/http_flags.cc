#include "cli/http_flags.h"
#ifdef KFORGE_HAVE_NET

#include <cstdlib>
#include <iostream>

#include "cli/commands.h"

namespace kf::cli {

void AddHttpFlags(CLI::App* app, serve::ServeOptions* opt, std::string* token_env) {
  app->add_option("--port", opt->port, "TCP port (0: any free port)")->check(CLI::Range(0, 65535));
  app->add_option("--host", opt->host, "address to listen on (127.0.0.1)");
  app->add_option("--token-env", *token_env,
                  "environment variable holding the bearer token clients must send "
                  "(Authorization: Bearer <token>); required unless --host is loopback")
      ->check([](const std::string& n) {
        return n.empty() || n.find_first_of("= ") != std::string::npos
                   ? std::string("a variable name, e.g. KFORGE_TOKEN")
                   : std::string();
      });
  app->add_option("--threads", opt->threads,
                  "requests handled at once; a synchronous reward or long poll holds "
                  "one while it waits; beyond, 503 (1024)")
      ->check(CLI::Range(1, 16384));
  app->add_option("--health-threads", opt->health_threads,
                  "/healthz and /metrics requests handled at once, apart from "
                  "--threads (16)")
      ->check(CLI::Range(1, 1024));
  app->add_option("--request-timeout-s", opt->request_timeout_s,
                  "a request's head and body must arrive within this many seconds of "
                  "its first byte, or 408 (30)")
      ->check(CLI::Range(0.1, 3600.0));
  app->add_option("--idle-timeout-s", opt->idle_timeout_s,
                  "a connection with no request begun is closed after this (10)")
      ->check(CLI::Range(0.1, 3600.0));
  app->add_option("--max-connections", opt->max_connections,
                  "open connections; a new one beyond gets 503 (10000, at most the "
                  "descriptor limit less 512)")
      ->check(CLI::Range(16LL, 1LL << 20));
  app->add_option("--max-body-bytes", opt->max_body_bytes,
                  "larger request bodies get 413 (16 MiB)");
}

int ReadTokenEnv(const std::string& command, const std::string& env, std::string* token) {
  if (env.empty()) return kExitOk;
  const char* v = std::getenv(env.c_str());
  if (v == nullptr || *v == '\0') {
    std::cerr << "kforge " << command << ": --token-env " << env
              << ": the environment variable is unset or empty\n";
    return kExitUsage;
  }
  *token = v;
  ::unsetenv(env.c_str());
  return kExitOk;
}

}  // namespace kf::cli

#endif  // KFORGE_HAVE_NET
