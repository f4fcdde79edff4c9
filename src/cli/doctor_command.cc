// kforge doctor: checks the environment kforge needs and says how to fix what is missing
// (src/doctor decides; this command only picks the defaults eval would use and prints).
#include <iostream>
#include <memory>

#include "backend/backend.h"
#include "cli/commands.h"
#include "doctor/doctor.h"
#include "eval/eval.h"

namespace kf::cli {
namespace {

struct DoctorFlags {
  std::string backend;
  std::string python;
  bool json = false;
};

int RunDoctor(const DoctorFlags& f) {
  doctor::GatherOptions opt;
  // The same defaults as eval, so doctor checks what eval would use.
  opt.backend = f.backend.empty() ? backend::DefaultBackend() : f.backend;
  opt.python = f.python.empty() ? eval::DefaultPython() : f.python;
  opt.runner_dir = eval::FindRunnerDir();
  doctor::Facts facts = doctor::GatherFacts(opt);
  std::vector<doctor::Check> checks = doctor::Decide(facts);
  if (f.json) {
    std::cout << doctor::ToJson(facts, checks).dump(2) << std::endl;
  } else {
    std::cout << doctor::Render(facts, checks) << std::flush;
  }
  return doctor::AnyFailed(checks) ? kExitCheckFailed : kExitOk;
}

}  // namespace

Command DoctorCommand() {
  return {"doctor", "Check the environment kforge needs (Python, torch, compilers, GPUs, "
                    "sandbox) and print a fix for each problem",
          [](CLI::App* app) -> std::function<int()> {
            auto f = std::make_shared<DoctorFlags>();
            app->add_option("--backend", f->backend,
                            "cuda or cpu: what to check for (default: cuda where a GPU is visible)")
                ->check(CLI::IsMember({"cuda", "cpu"}));
            app->add_option("--python", f->python,
                            "Python interpreter to check (default: the one eval would use)");
            app->add_flag("--json", f->json, "print one JSON document of the checks");
            return [f] { return RunDoctor(*f); };
          }};
}

}  // namespace kf::cli
