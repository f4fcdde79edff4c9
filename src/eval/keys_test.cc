#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include <gtest/gtest.h>

#include "eval/eval.h"

namespace kf::eval {
namespace {

using nlohmann::json;

const json kEnv = {{"toolchain", {{"torch", "2.11.0"}}}, {"device", "NVIDIA H200"}};

std::string KeyWith(const EvalOptions& o, const json& env = kEnv) {
  return VerdictKey("problem", "candidate", SettingsDigest(o), env);
}

// The runner's code is part of the key: one changed byte in a runner file, and the store
// holds nothing for the new code.
TEST(VerdictKey, RunnerCodeSeparates) {
  auto dir = std::filesystem::temp_directory_path() / ("kf-runner-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir / "kforge_runner");
  auto write = [&](const std::string& text) {
    std::ofstream(dir / "kforge_runner" / "judge.py") << text;
  };
  write("TOLERANCE = 1e-4\n");
  EvalOptions a;
  a.runner_dir = dir;
  const std::string before = KeyWith(a);
  EXPECT_EQ(before, KeyWith(a));
  // Another folder with the same files: the same key (a copy of the same runner).
  auto dir2 = dir;
  dir2 += "-copy";
  std::filesystem::create_directories(dir2 / "kforge_runner");
  std::ofstream(dir2 / "kforge_runner" / "judge.py") << "TOLERANCE = 1e-4\n";
  EvalOptions b;
  b.runner_dir = dir2;
  EXPECT_EQ(before, KeyWith(b));
  std::ofstream(dir2 / "kforge_runner" / "judge.py") << "TOLERANCE = 1e-2\n";
  EvalOptions c;  // the digest is kept per folder: a third folder reads the changed code
  auto dir3 = dir;
  dir3 += "-changed";
  std::filesystem::create_directories(dir3 / "kforge_runner");
  std::filesystem::copy_file(dir2 / "kforge_runner" / "judge.py", dir3 / "kforge_runner" / "judge.py");
  c.runner_dir = dir3;
  EXPECT_NE(before, KeyWith(c));
  for (const auto& d : {dir, dir2, dir3}) std::filesystem::remove_all(d);
}

// Every option a user can set that changes what a verdict says gives another key, so the store
// never hands back a verdict made under other rules.
TEST(VerdictKey, EveryVerdictShapingOptionSeparates) {
  const EvalOptions base;
  std::vector<std::pair<const char*, std::function<void(EvalOptions&)>>> changes = {
      {"backend", [](EvalOptions& o) { o.backend = "cuda"; }},
      {"trials", [](EvalOptions& o) { o.exec.trials = 10; }},
      {"seed", [](EvalOptions& o) { o.exec.seed = 42; }},
      {"atol", [](EvalOptions& o) { o.exec.tolerances = DefaultTolerances(1e-2, -1); }},
      {"rtol", [](EvalOptions& o) { o.exec.tolerances = DefaultTolerances(-1, 1e-2); }},
      {"float16 atol", [](EvalOptions& o) { o.exec.tolerances.atol["float16"] = 1e-3; }},
      {"allow_libraries", [](EvalOptions& o) { o.exec.allow_libraries = true; }},
      {"runtime_rules", [](EvalOptions& o) { o.exec.runtime_rules = false; }},
      {"no baselines", [](EvalOptions& o) { o.baselines = false; }},
      {"reference as candidate", [](EvalOptions& o) { o.reference_as_candidate = true; }},
      {"policy", [](EvalOptions& o) { o.exec.policy = execute::Policy::kKernelBench; }},
      {"allowlist", [](EvalOptions& o) { o.exec.allowed_aten.insert("aten::add"); }},
      {"timing budget", [](EvalOptions& o) { o.exec.timing.budget_ms = 500; }},
      {"timing pool", [](EvalOptions& o) { o.exec.timing.pool = 2; }},
      {"call timeout", [](EvalOptions& o) { o.exec.call_timeout = std::chrono::seconds(5); }},
      {"load timeout", [](EvalOptions& o) { o.exec.load_timeout = std::chrono::seconds(5); }},
      {"reverify", [](EvalOptions& o) { o.reverify_speedup = 100; }},
      {"reward lambda", [](EvalOptions& o) { o.reward.lambda = 1.0; }},
      {"reward vs compile", [](EvalOptions& o) { o.reward.against_compile = true; }},
  };
  std::set<std::string> keys = {KeyWith(base)};
  for (const auto& [name, change] : changes) {
    EvalOptions o = base;
    change(o);
    EXPECT_TRUE(keys.insert(KeyWith(o)).second) << name << " does not change the key";
  }
}

// How a verdict is computed, not what it says: these share one key.
TEST(VerdictKey, PlumbingOptionsDoNotSeparate) {
  EvalOptions a, b;
  b.build_workers = 16;
  b.devices = {0, 1};
  b.device_index = 1;
  b.cache_dir = "/elsewhere";
  b.pch = false;
  EXPECT_EQ(KeyWith(a), KeyWith(b));
}

// The key holds the tolerances the judge applies, not the flags that asked for them: --atol
// 1e-4 is the default, and its verdicts are the default's.
TEST(VerdictKey, ToleranceKeyIsOfTheEffectiveMaps) {
  EvalOptions plain, same;
  same.exec.tolerances = DefaultTolerances(1e-4, 1e-4);
  EXPECT_EQ(KeyWith(plain), KeyWith(same));
  EXPECT_EQ(VerdictSettings(plain)["atol"],
            json({{"float32", 1e-4}, {"float64", 1e-7}, {"float16", 1e-2}, {"bfloat16", 1e-2}}));
}

// Light headers change no kernel (identical SASS on sm_90): a verdict built either way has one
// key, the one verdicts stored before light headers existed have.
// Split builds too, since an H100 showed the same device code and verdicts (on by default).
TEST(VerdictKey, SplitBuildsShareTheKey) {
  EvalOptions split, usual;
  usual.split_build = false;
  EXPECT_TRUE(split.split_build);
  EXPECT_EQ(KeyWith(split), KeyWith(usual));
  EXPECT_FALSE(VerdictSettings(split).contains("split_build"));
}

TEST(VerdictKey, LightHeadersShareTheKey) {
  EvalOptions light, plain;
  plain.light_headers = false;
  EXPECT_TRUE(light.light_headers);
  EXPECT_EQ(KeyWith(light), KeyWith(plain));
  EXPECT_FALSE(VerdictSettings(light).contains("light_headers"));
}

TEST(VerdictKey, EnvironmentAndContentsSeparate) {
  EvalOptions o;
  json other_device = kEnv;
  other_device["device"] = "NVIDIA H100 80GB HBM3";
  json other_torch = kEnv;
  other_torch["toolchain"]["torch"] = "2.10.0";
  std::string d = SettingsDigest(o);
  std::set<std::string> keys = {
      VerdictKey("problem", "candidate", d, kEnv), VerdictKey("problem", "candidate", d, other_device),
      VerdictKey("problem", "candidate", d, other_torch), VerdictKey("problem2", "candidate", d, kEnv),
      VerdictKey("problem", "candidate2", d, kEnv)};
  EXPECT_EQ(keys.size(), 5u);
  // The job id covers the settings but not the machine: the service names a job before any
  // worker has taken it.
  EXPECT_NE(JobKey("problem", "candidate", d), JobKey("problem", "candidate", SettingsDigest([] {
                                                         EvalOptions t;
                                                         t.exec.trials = 3;
                                                         return t;
                                                       }())));
}

}  // namespace
}  // namespace kf::eval
