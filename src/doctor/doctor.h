// doctor: checks the environment kforge needs (Python and torch, the toolchain that builds
// candidates, GPUs, the sandbox's kernel features, redis-server) and says how to fix what is
// missing.
//
// Gathering and deciding are apart: GatherFacts runs the Python side
// (runner/kforge_runner/doctor.py, which only reports what it finds) and asks the kernel;
// Decide is a pure function from those facts to checks, tested on hand-written facts. The
// fixes for toolchain parts come from build/environment.h, the table the build's own fault
// classification uses, so doctor and an infra_error verdict give the same advice.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kf::doctor {

// Everything doctor looks at. Plain data, so tests write it by hand.
struct Facts {
  std::string backend = "cpu";       // "cpu" or "cuda": decides what is needed
  std::string python;                // the interpreter kforge would use
  std::string runner_dir;            // where kforge_runner/ was looked for
  bool runner_found = true;          // and whether it is there
  // What runner/kforge_runner/doctor.py printed (see there); null when it did not answer,
  // with `runner_error` saying why (no such interpreter, no runner, a crash).
  nlohmann::json runner;
  std::string runner_error;
  int gpu_nodes = 0;                 // /dev/nvidiaN nodes
  nlohmann::json sandbox;            // kforge_sandbox_probe()'s object; null when it failed
  std::string sandbox_library;       // libkforge_sandbox.so beside kforge; "" when absent
  std::string redis_server;          // redis-server on PATH; "" when absent
};

enum class State { kOk, kWarn, kFail, kSkip };
const char* StateName(State s);  // "ok", "warn", "fail", "skip"

struct Check {
  std::string name;    // stable, for scripts: "torch_headers"
  State state = State::kOk;
  std::string detail;  // what was found, or what is wrong
  std::string fix;     // a command or step that repairs it; "" when ok
};

// The checks, in a fixed order. Pure.
std::vector<Check> Decide(const Facts& facts);
// Whether any check failed (doctor then exits 1).
bool AnyFailed(const std::vector<Check>& checks);

// {"backend", "python", "ok", "checks": [{"name", "state", "detail", "fix"}]}
nlohmann::json ToJson(const Facts& facts, const std::vector<Check>& checks);
// One line per check (state, name, detail), a "fix:" line under each that has one, a summary.
std::string Render(const Facts& facts, const std::vector<Check>& checks);

struct GatherOptions {
  std::string backend = "cpu";
  std::string python = "python3";
  std::filesystem::path runner_dir;  // holds kforge_runner/
};
// Runs the Python side and asks the machine. Never fails: what could not be learnt is a fact.
Facts GatherFacts(const GatherOptions& opt);

}  // namespace kf::doctor
