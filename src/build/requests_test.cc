// Every request the builder sends its workers, built by the functions builder.cc uses, fits
// runner/protocol.json (the schema compiled in).
#include "build/requests.h"

#include <gtest/gtest.h>

#include "common/protocol.h"

namespace kf::build::requests {
namespace {
using nlohmann::json;

TEST(BuildRequestsTest, EveryRequestFitsTheSchema) {
  ExtensionSpec spec;
  spec.name = "ext";
  spec.cpp_sources = {"int f();"};
  spec.functions = {"f"};
  Context ctx;
  ctx.dir = "/cache/artifacts/k.tmp";
  ctx.light_dir = "/cache/light";
  ctx.backend = "cpu";
  std::vector<json> sent = {Hello("cpu"), Hello("cuda")};
  for (json r : {Build(spec, false), Build(spec, true), Build(spec, true, true),
                 Build(spec, false, false, true), BuildNative("/r/kforge_native.cpp", false),
                 BuildNative("/r/kforge_native.cpp", true)}) {
    AddContext(ctx, &r);
    sent.push_back(r);
    Context cuda = ctx;
    cuda.arch = "9.0";
    cuda.pch_dir = "/cache/pch";
    cuda.backend = "cuda";
    cuda.pch_make = true;
    cuda.bindings_dir = "/cache/bindings";
    AddContext(cuda, &r);
    sent.push_back(r);
  }
  for (const auto& msg : sent) {
    Status st = protocol::Embedded().CheckRequest("build_worker", msg);
    EXPECT_TRUE(st.ok()) << st.message() << "\n" << msg.dump();
  }
}

TEST(BuildRequestsTest, CachedBindingsAreAskedForWithWhereTheyAreKept) {
  ExtensionSpec spec;
  spec.functions = {"f"};
  json r = Build(spec, false, false, true);
  Context ctx;
  ctx.bindings_dir = "/cache/bindings";
  AddContext(ctx, &r);
  EXPECT_EQ(r.value("cached_bindings", false), true);
  EXPECT_EQ(r.value("bindings_dir", ""), "/cache/bindings");
  json plain = Build(spec, false);
  AddContext(Context{}, &plain);
  EXPECT_FALSE(plain.contains("cached_bindings"));
  EXPECT_FALSE(plain.contains("bindings_dir"));
  // The helper's build never splits: no folder is sent with it.
  json native = BuildNative("/r/kforge_native.cpp", false);
  AddContext(ctx, &native);
  EXPECT_FALSE(native.contains("bindings_dir"));
  // What a worker answers about them fits the schema, as a result and as a failure.
  EXPECT_TRUE(protocol::Embedded()
                  .CheckReply("build_worker", "build",
                              {{"ok", true}, {"so_file", "x.so"}, {"module_name", "x"}, {"sandbox", "on"},
                               {"cpu_s", 2.0}, {"layout", json::object()},
                               {"bindings", "cached"}, {"bindings_key", "ab"},
                               {"bindings_cpu_s", 1.0}})
                  .ok());
}

TEST(BuildRequestsTest, AFailedBuildIsAResultNotAnError) {
  const auto& schema = protocol::Embedded();
  const json request = Build(ExtensionSpec{}, false);
  EXPECT_TRUE(schema
                  .CheckReply("build_worker", "build",
                              {{"ok", false},
                               {"message", "error: x"},
                               {"exception", "E"},
                               {"traceback", "..."},
                               {"layout", json::object()},
                               {"sandbox", "on: landlock"},
                               {"cpu_s", 1.5},
                               {"toolchain", json::object()}})
                  .ok());
  EXPECT_EQ(
      schema.CheckReply("build_worker", "build", {{"ok", true}, {"so_file", "x.so"}}).message(),
      "build_worker 'build' reply: missing required field 'module_name'");
}

}  // namespace
}  // namespace kf::build::requests
