#include "cli/commands.h"

namespace kf::cli {

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      EvalCommand(),
      CheckCommand(),
      RulesCommand(),
      LintCommand(),
      FeasibilityCommand(),
      BenchCommand(),
#ifdef KFORGE_HAVE_NET
      ServeCommand(),
      UiCommand(),
      GenerateCommand(),
#endif
      WorkerCommand(),
      McpCommand(),
      DoctorCommand(),
      SynthCommand(),
      DataCommand(),
  };
  return kCommands;
}

}  // namespace kf::cli
