#include "build/requests.h"

#include "build/environment.h"
#include "common/protocol.h"

namespace kf::build::requests {
using nlohmann::json;

json Hello(const std::string& backend) {
  return {{"op", "hello"},
          {"backend", backend},
          {"probe", ToolchainProbe(backend)},
          {"protocol", protocol::Embedded().version()}};
}

json Build(const ExtensionSpec& spec, bool light_headers, bool split_build, bool cached_bindings) {
  json request = {{"op", "build"}, {"spec", CanonicalJson(spec)}};
  if (light_headers) request["light_headers"] = true;
  if (split_build) request["split_build"] = true;
  if (cached_bindings) request["cached_bindings"] = true;
  return request;
}

json BuildNative(const std::filesystem::path& source, bool cuda) {
  json cflags = {"-O2"};
  if (cuda) cflags.push_back("-DKFORGE_WITH_CUDA");
  return {{"op", "build_native"},
          {"name", "kforge_native"},
          {"sources", {source.string()}},
          {"extra_cflags", cflags},
          {"with_cuda", cuda}};
}

void AddContext(const Context& c, json* request) {
  json& r = *request;
  r["dir"] = c.dir.string();
  if (!c.arch.empty()) r["arch"] = c.arch;
  r["pch_dir"] = c.pch_dir;
  r["light_dir"] = c.light_dir;
  if (!c.bindings_dir.empty() && r.value("op", "") == "build") r["bindings_dir"] = c.bindings_dir;
  r["probe"] = ToolchainProbe(c.backend);
  if (r.value("op", "") == "build") r["pch_make"] = c.pch_make;
}

}  // namespace kf::build::requests
