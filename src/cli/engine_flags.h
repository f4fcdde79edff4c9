// Flags shared by `kforge serve` and `kforge worker` besides the evaluation flags
// (cli/eval_flags.h): how to reach Redis, and stopping on signals.
#pragma once

#include <CLI/CLI.hpp>
#include <atomic>

#include "cli/eval_flags.h"
#include "common/status.h"
#include "queue/redis_url.h"

namespace kf::cli {

struct RedisFlags {
  std::string url;           // --redis
  std::string password_env;  // --redis-password-env: the variable that holds the password
};
// --redis-password-env (the --redis flag itself each command declares: serve's has no default).
void AddRedisPasswordFlag(CLI::App* app, RedisFlags* f);
// The address: the URL parsed, the password read from the environment where asked. Errors
// quote the URL redacted.
Result<queue::RedisAddress> ToRedisAddress(const RedisFlags& f);

// SIGINT and SIGTERM set the returned flag (installed once per process).
const std::atomic<bool>& StopOnSignals();

}  // namespace kf::cli
