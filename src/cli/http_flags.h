// Flags of the HTTP front shared by `kforge serve` and `kforge ui`: where to listen, the
// bearer token's variable, and the connection limits (serve/server.h).
#pragma once
#ifdef KFORGE_HAVE_NET

#include <CLI/CLI.hpp>
#include <string>

#include "serve/server.h"

namespace kf::cli {

void AddHttpFlags(CLI::App* app, serve::ServeOptions* opt, std::string* token_env);

// Reads the token from the variable `env` names (never argv, which every user of the machine
// can read in /proc) and removes it from the environment at once, so processes kforge starts,
// candidates among them, do not inherit it. kExitOk, or kExitUsage with a message on stderr
// (`command` names who says it). An empty `env` leaves `token` empty.
int ReadTokenEnv(const std::string& command, const std::string& env, std::string* token);

}  // namespace kf::cli

#endif  // KFORGE_HAVE_NET
