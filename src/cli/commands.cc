#include "cli/commands.h"

namespace kf::cli {

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      EvalCommand(),
      LintCommand(),
#ifdef KFORGE_HAVE_NET
      GenerateCommand(),
#endif
      McpCommand(),
  };
  return kCommands;
}

}  // namespace kf::cli
