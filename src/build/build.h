// build: compiles a candidate's load_inline extensions on a pool of Python worker processes
// that run torch's own builder, into a content-addressed artifact cache.
//
// The cache key covers the whole call (sources, functions, flags, name) and the toolchain
// (python, torch, compilers, CUDA arch list), never the extension name alone: model samples
// reuse names like "elementwise_add" for different code. Failed builds are cached too, except
// those the machine caused (a missing toolchain header, library or compiler: environment.h),
// which come back as an Artifact with `environment` set and are tried again next time.
// Thread-safe: Build() may be called from many threads; at most `workers` compile at once, and
// concurrent builds of one key (also from other kforge processes) compile once.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "build/environment.h"
#include "common/extension_spec.h"
#include "common/status.h"

namespace kf::build {

struct BuildOptions {
  std::string python = "python3";
  std::filesystem::path runner_dir;   // holds the kforge_runner package
  std::filesystem::path cache_dir;    // the worker's logs live in cache_dir/logs/
  // Where compiled extensions (build_cache/artifacts/<key>/), PCHs (build_cache/pch/) and the
  // light-headers macro lists live; cache_dir when empty. Artifacts are content-keyed (code,
  // flags, toolchain), so several caches (verdict stores) may share one: KFORGE_BUILD_CACHE.
  std::filesystem::path build_cache;
  std::string backend = "cpu";        // "cpu" or "cuda": decides the toolchain fingerprint
  int workers = 2;                    // concurrent compiles; compiles are CPU-bound
  std::vector<int> cpus;              // the cores build workers (and compilers) may use; all if empty
  // Compile load_inline's main.cpp against a precompiled torch/extension.h kept in
  // build_cache/pch/ (built once per compiler and flag set; runner/kforge_runner/pch.py). The
  // object files are the same; only the parsing of torch's headers is saved. A PCH is made
  // from the second candidate build of the build cache on, in this process or an earlier one.
  bool pch = true;
  // Light headers (opt-in, off until checked on a GPU machine: identical SASS and verdicts):
  // compile cuda.cu with the candidate's first `#include <torch/extension.h>` replaced by
  // `#include <torch/types.h>` on the same line, and on any failure again exactly as written
  // (runner/kforge_runner/light_headers.py). nvcc then parses neither libtorch's C++ API nor
  // pybind11, about half its CPU on the H200. Such builds get keys of their own
  // (LoadInlineKeyInput), so light and as-written artifacts never mix.
  bool light_headers = false;
  // Split builds (opt-in, off until checked on a GPU machine: identical SASS and verdicts):
  // compile cuda.cu with the candidate's kernels alone, without torch's headers, and its host
  // code in main.cpp against the precompiled header, kernel launches going through generated
  // stubs; a candidate the split cannot be sure of, or whose split build fails, is built the
  // usual way (runner/kforge_runner/split_build.py). Such builds get keys of their own.
  bool split_build = false;
  // Cached bindings: compile load_inline's main.cpp as two units, the candidate's code against
  // torch/types.h and the PYBIND11_MODULE (with a declaration of each bound function) against
  // torch/extension.h, and keep the bindings' object in build_cache/bindings/ for every later
  // candidate that binds the same functions with the same signatures; a candidate the split
  // cannot read, or whose split fails to build, is built as load_inline would
  // (runner/kforge_runner/bindings.py). Such builds get keys of their own.
  bool cached_bindings = false;
  // nvcc on a loaded machine can take minutes for one translation unit; a build past this is
  // killed and reported as a compile error (a template explosion is the candidate's fault).
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
};

// One message from the compiler, located in the generated file and, where possible, in the
// candidate's source strings.
struct CompilerMessage {
  std::string file;       // "main.cpp" or "cuda.cu" (torch's generated files), or "" (linker)
  int line = 0;           // in `file`
  int col = 0;
  std::string severity;   // "error", "warning", "note"
  std::string text;
  bool cuda = false;      // which list of sources: cuda_sources or cpp_sources
  int source_index = -1;  // index into that list; -1 when outside the candidate's sources
  int source_line = 0;    // 1-based line inside that source string
};

struct Artifact {
  std::string key;
  bool ok = false;
  std::filesystem::path so_path;  // valid when ok
  std::string module_name;
  std::string error_text;  // the compiler's output (tail) when !ok
  // Set when !ok because the machine lacks part of the toolchain: not the candidate's fault,
  // not cached (the verdict is infra_error, with the fix).
  std::optional<EnvironmentFault> environment;
  std::vector<CompilerMessage> messages;
  double build_ms = 0;     // compile time, 0 for a cache hit
  double cpu_ms = 0;       // CPU time of the compile (user + sys, compilers included); 0 for a hit
  bool cache_hit = false;
  // Whether main.cpp was compiled against a precompiled torch/extension.h: "used", "missing"
  // (none matched yet), or "" (no main.cpp compiled through the wrapper, or PCH off).
  std::string pch;
  // What light headers did (BuildOptions::light_headers): "used" (cuda.cu was compiled with
  // the light include), "fell_back" (the light build failed, or the sources test a macro only
  // torch/extension.h defines, or a split build of them failed and no light one was tried:
  // built as written), "unchanged" (no include to rewrite), or ""
  // (not asked for). Read from the artifact on a cache hit too.
  std::string light_headers;
  std::string light_headers_why;  // why it fell back, when it did
  // What the split build did (BuildOptions::split_build): "used", "fell_back" (planned, but
  // its build failed: built the usual way), "refused" (the plan could not be made: why says
  // what), or "" (not asked for). Read from the artifact on a cache hit too.
  std::string split_build;
  std::string split_build_why;
  // What cached bindings did (BuildOptions::cached_bindings): "cached" (the bindings' object
  // came from the build cache), "built" (compiled here and kept), "fell_back" (the split's
  // build failed: built as load_inline would), "refused" (why says what), or "" (not asked).
  std::string bindings;
  std::string bindings_why;
};

class Builder {
 public:
  explicit Builder(BuildOptions opt);
  ~Builder();
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  // The toolchain description every key covers; starts one worker on first use.
  Result<nlohmann::json> Fingerprint();
  Result<std::string> Key(const ExtensionSpec& spec);
  Result<Artifact> Build(const ExtensionSpec& spec);
  // Builds kforge's own compiled helper (runner/native) for this toolchain.
  Result<Artifact> BuildNative();
  // Total wall time spent compiling (not waiting for the cache) so far.
  double compile_ms_total() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Whether a light-headers build could rewrite anything in `spec`: its CUDA sources mention
// torch/extension.h. A cheap superset of what the runner rewrites (a mention in a comment
// counts here), so every build the rewrite can touch gets a light key.
bool LightHeadersMayApply(const ExtensionSpec& spec);
// What a load_inline build's artifact key covers besides the toolchain: the call itself, and,
// for a light-headers build that may rewrite the sources, `light_rules` (a digest of the
// runner's rewrite rules; "" when light headers are off). Off, or with nothing to rewrite,
// the input is exactly that of a plain build, so plain artifacts stay valid and are shared.
// For a split build that may apply (SplitBuildMayApply), `split_rules` (a digest of the
// runner's split rules; "" when split builds are off) too; and for cached bindings that may
// apply (the call binds functions), `bindings_rules` ("" when off).
nlohmann::json LoadInlineKeyInput(const ExtensionSpec& spec, const std::string& light_rules,
                                  const std::string& split_rules = "",
                                  const std::string& bindings_rules = "");
// Whether a split build could apply to `spec`: its CUDA sources launch a kernel (`<<<`). A
// cheap superset of what the runner splits.
bool SplitBuildMayApply(const ExtensionSpec& spec);
// An artifact's key: SHA-256 of the toolchain fingerprint and the key input.
std::string ArtifactKey(const nlohmann::json& fingerprint, const nlohmann::json& what);

// Parses gcc/clang/nvcc/linker output into messages (exposed for tests).
std::vector<CompilerMessage> ParseCompilerOutput(const std::string& text);
// Fills source_index/source_line from the start line of each source string in the generated
// files (`layout`: {"main.cpp": [start lines of cpp_sources], "cuda.cu": [...]}).
void LocateMessages(const nlohmann::json& layout, const ExtensionSpec& spec,
                    std::vector<CompilerMessage>* messages);

}  // namespace kf::build
