// The requests the builder sends its Python build workers (runner/kforge_runner/build_worker.py),
// one function each, so every one is checked against runner/protocol.json in one test
// (requests_test.cc). Internal to build.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "common/extension_spec.h"

namespace kf::build::requests {

// The toolchain fingerprint (and this kforge's protocol version).
nlohmann::json Hello(const std::string& backend);
// One load_inline call; `light_headers`: try it without torch/extension.h first.
// `split_build`: try a split build first (runner/kforge_runner/split_build.py).
// `cached_bindings`: main.cpp in two units, the bindings' from the build cache
// (runner/kforge_runner/bindings.py).
nlohmann::json Build(const ExtensionSpec& spec, bool light_headers, bool split_build = false,
                     bool cached_bindings = false);
// kforge's timing helper, runner/native/kforge_native.cpp.
nlohmann::json BuildNative(const std::filesystem::path& source, bool cuda);

// What every build request carries besides its own fields, so each worker builds exactly like
// the one that answered hello: where to build, the CUDA arch list hello found (empty: left
// out), the PCH and light-headers folders, the toolchain probe, and for a candidate's build
// whether to make a PCH.
struct Context {
  std::filesystem::path dir;
  std::string arch;
  std::string pch_dir;  // empty: no PCH
  std::string light_dir;
  std::string bindings_dir;  // empty: no cached bindings
  std::string backend;
  bool pch_make = false;
};
void AddContext(const Context& c, nlohmann::json* request);

}  // namespace kf::build::requests
