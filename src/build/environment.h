// The parts of the toolchain that builds need from the machine (headers, libraries, tools),
// each with the fix for a machine that lacks it, and the decision whether a failed build is
// the environment's fault or the candidate's.
//
// ToolchainParts() is the one table of "what is missing -> how to get it": the build's fault
// classification and `kforge doctor` both read it, so a verdict's hint and doctor's fix agree.
//
// Why the decision needs facts as well as the compiler's words: a missing-header message is
// text the candidate can provoke (`#include <torch/no_such.h>`), and an environment fault is
// infra_error (no reward, never cached). So a build is blamed on the environment only when the
// build worker, looking at the search paths the build used, also failed to find the part's
// sentinel file (torch/extension.h for torch's headers): a file every install of the part has.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kf::build {

enum class PartKind {
  kHeaders,    // found in the include search path
  kLibraries,  // found in the library search path (lib<name>.so or .a)
  kTool,       // an executable (the compiler, ninja, nvcc)
};

struct ToolchainPart {
  std::string id;        // stable name, also doctor's check name: "torch_headers"
  PartKind kind;
  std::string what;      // for people: "PyTorch's C++ headers"
  std::string sentinel;  // the file that proves the part present: "torch/extension.h", "torch"
                         // (a library name), "" for tools
  // What belongs to the part, to name the part of a missing file: headers are a folder prefix
  // ("torch/") or an exact name ("Python.h"); libraries are names as in -l<name>.
  std::vector<std::string> members;
  bool cuda_only;        // needed only by builds with CUDA sources
  std::string fix;       // "apt-get install libtorch-dev"
};

// Every part, in the order doctor reports them.
const std::vector<ToolchainPart>& ToolchainParts();
// The part with this id; null when there is none.
const ToolchainPart* FindPart(const std::string& id);

// What the build worker is asked to look for: {"headers": [sentinels], "libraries": [names]},
// the CUDA parts only for the "cuda" backend.
nlohmann::json ToolchainProbe(const std::string& backend);

// A build that failed because the machine lacks part of the toolchain.
struct EnvironmentFault {
  std::string part;     // a ToolchainPart id
  std::string missing;  // what was not found: "torch/extension.h", "-ltorch", "c++"
  std::string detail;   // "torch/extension.h is missing (PyTorch's C++ headers)"
  std::string fix;      // the part's fix
  // "environment: <detail>; fix: <fix>", for messages that carry no separate hint (a Status).
  // A verdict's diagnostic says "environment: <detail>" with the fix as its hint.
  std::string Message() const;
};

// Decides whether a failed build was the environment's fault. `output` is the builder's
// message (compiler and linker output); `toolchain` is what the build worker found when the
// build failed (runner/kforge_runner/toolchain.py):
//   {"headers": {sentinel: path|null}, "libraries": {name: path|null}, "cxx": "c++",
//    "cxx_path": path|null, "cxx_works": bool|null, "ninja": path|null, "nvcc": path|null}
// A key that is absent is unknown and blames nothing. `uses_cuda`: the build compiles CUDA
// sources, so the CUDA parts are needed. nullopt: the candidate's own compile error.
std::optional<EnvironmentFault> ClassifyBuildFailure(const std::string& output,
                                                     const nlohmann::json& toolchain,
                                                     bool uses_cuda);

// The files a compiler or linker output says it could not find, in order: headers as written
// in the #include ("torch/extension.h"), libraries as "-l<name>" (exposed for tests).
std::vector<std::string> MissingFiles(const std::string& output);

}  // namespace kf::build
