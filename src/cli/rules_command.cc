// kforge rules: the legality rules a verdict can name (common/rules.h), with the hint a model
// is shown for each; --markdown prints docs/RULES.md.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "common/rules.h"

namespace kf::cli {

Command RulesCommand() {
  return {"rules", "List the legality rules a cheat verdict names, with what stops each",
          [](CLI::App* app) -> std::function<int()> {
            auto markdown = std::make_shared<bool>(false);
            app->add_flag("--markdown", *markdown, "print the table of docs/RULES.md");
            return [markdown] {
              if (*markdown) {
                std::cout << RulesMarkdown();
                return kExitOk;
              }
              for (const Rule& r : Rules()) {
                std::cout << r.code << "  " << r.name << "\n  catches: "
                          << r.catches << "\n  stopped by: " << r.stops << "\n  hint: " << r.hint
                          << "\n\n";
              }
              return kExitOk;
            };
          }};
}

}  // namespace kf::cli
