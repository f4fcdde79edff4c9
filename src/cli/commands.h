// The CLI's subcommands: a table of name, help and handler. main.cpp only wires them up.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kf::cli {

// Exit codes: a verdict was produced (whatever its status) / bad usage / the system failed.
inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInfra = 3;
// doctor: at least one check failed (its output names each with a fix); lint-problems: a
// perturbed trial left its problem's input contract.
inline constexpr int kExitCheckFailed = 1;

struct Command {
  std::string name;
  std::string help;
  // Declares the subcommand's flags on `app`; returns the handler to run when it is chosen.
  std::function<std::function<int()>(CLI::App* app)> setup;
};

const std::vector<Command>& Commands();

Command EvalCommand();
Command CheckCommand();
Command RulesCommand();
Command LintCommand();
Command FeasibilityCommand();
Command BenchCommand();
Command WorkerCommand();
Command McpCommand();
Command DoctorCommand();
Command SynthCommand();
Command DataCommand();
#ifdef KFORGE_HAVE_NET
Command ServeCommand();
Command GenerateCommand();  // talks to a model server: needs the HTTP components
Command UiCommand();        // the web UI over a store
#endif

}  // namespace kf::cli
