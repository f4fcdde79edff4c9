// kforge: turns PyTorch operators into fast, verified kernels. This file only wires the
// subcommand table (src/cli) to CLI11.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"kforge: verify, time and score kernels written for PyTorch operators"};
  app.require_subcommand(1);
  std::function<int()> chosen;
  for (const auto& cmd : kf::cli::Commands()) {
    CLI::App* sub = app.add_subcommand(cmd.name, cmd.help);
    auto handler = cmd.setup(sub);
    sub->callback([&chosen, handler] { chosen = handler; });
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kf::cli::kExitUsage;
  }
  return chosen ? chosen() : kf::cli::kExitUsage;
}
