// Decide: facts -> checks. Pure; every rule here is tested in doctor_test.cc.
#include "doctor/doctor.h"

#include <regex>

#include "build/environment.h"

namespace kf::doctor {
namespace {

using build::PartKind;
using build::ToolchainPart;
using nlohmann::json;

constexpr const char* kPythonFix =
    "apt-get install python3, or pass --python PATH (or set KFORGE_PYTHON)";
constexpr const char* kTorchFix =
    "apt-get install python3-torch, or pass --python PATH of an interpreter that has torch";
constexpr const char* kNeedsPython = "needs the interpreter and kforge's runner (see above)";

Check Make(std::string name, State state, std::string detail, std::string fix = "") {
  return {std::move(name), state, std::move(detail), std::move(fix)};
}

std::string Str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

const json& Field(const json& j, const char* key) {
  static const json kNull;
  return j.is_object() && j.contains(key) ? j[key] : kNull;
}

std::string NotNeeded(const Facts& f) { return "not needed for --backend " + f.backend; }

// "12.4" from "Cuda compilation tools, release 12.4, V12.4.131"; "" when absent.
std::string NvccRelease(const std::string& line) {
  static const std::regex kRelease(R"(release (\d+\.\d+))");
  std::smatch m;
  return std::regex_search(line, m, kRelease) ? std::string(m[1]) : "";
}

std::string Major(const std::string& version) { return version.substr(0, version.find('.')); }

Check RunnerCheck(const Facts& f) {
  if (!f.runner_found) {
    return Make("runner", State::kFail, "kforge's runner is not in " + f.runner_dir,
                "set KFORGE_RUNNER_DIR to the folder that holds kforge_runner/ (runner/ in "
                "kforge's source tree)");
  }
  return Make("runner", State::kOk, f.runner_dir);
}

Check PythonCheck(const Facts& f) {
  if (!f.runner_found) return Make("python", State::kSkip, f.python + ": needs kforge's runner");
  if (f.runner.is_null()) {
    return Make("python", State::kFail, f.python + ": " + f.runner_error, kPythonFix);
  }
  const json& py = Field(f.runner, "python");
  std::string exe = Str(py, "executable");
  std::string detail = exe == f.python || exe.empty() ? f.python : f.python + " (" + exe + ")";
  return Make("python", State::kOk, detail + ", Python " + Str(py, "version"));
}

Check TorchCheck(const Facts& f) {
  if (f.runner.is_null()) return Make("torch", State::kSkip, kNeedsPython);
  const json& t = Field(f.runner, "torch");
  if (!Str(t, "error").empty()) {
    return Make("torch", State::kFail, f.python + " cannot import torch: " + Str(t, "error"),
                kTorchFix);
  }
  std::string cuda = Str(t, "cuda");
  std::string detail = Str(t, "version") + (cuda.empty() ? ", CPU only" : ", CUDA " + cuda);
  if (f.backend == "cuda" && cuda.empty()) {
    return Make("torch", State::kFail, detail + ": --backend cuda needs a torch built with CUDA",
                "pass --python PATH of an interpreter whose torch has CUDA, or use --backend cpu");
  }
  return Make("torch", State::kOk, detail + " (" + Str(t, "path") + ")");
}

// Headers and libraries: is the part's sentinel where torch's builder looks?
Check PartCheck(const ToolchainPart& p, const Facts& f) {
  if (p.cuda_only && f.backend != "cuda") return Make(p.id, State::kSkip, NotNeeded(f));
  if (f.runner.is_null()) return Make(p.id, State::kSkip, kNeedsPython);
  bool library = p.kind == PartKind::kLibraries;
  std::string name = library ? "-l" + p.sentinel : p.sentinel;
  const json& found = Field(Field(f.runner, "toolchain"), library ? "libraries" : "headers");
  if (!found.is_object() || !found.contains(p.sentinel)) {
    return Make(p.id, State::kWarn, name + " was not looked for (a runner of another version?)");
  }
  std::string path = found[p.sentinel].is_string() ? found[p.sentinel].get<std::string>() : "";
  if (!path.empty()) return Make(p.id, State::kOk, name + ": " + path);
  return Make(p.id, State::kFail,
              name + " is not found (" + p.what + "), where torch's builder looks: torch's " +
                  (library ? "library folders and the linker's" : "include folders, Python's and the compiler's"),
              p.fix);
}

Check CompilerCheck(const ToolchainPart& p, const Facts& f) {
  if (f.runner.is_null()) return Make(p.id, State::kSkip, kNeedsPython);
  const json& tc = Field(f.runner, "toolchain");
  std::string cxx = Str(tc, "cxx").empty() ? "c++" : Str(tc, "cxx");
  std::string path = Str(tc, "cxx_path");
  if (path.empty()) return Make(p.id, State::kFail, cxx + " is not on PATH (" + p.what + ")", p.fix);
  const json& works = Field(tc, "cxx_works");
  if (works.is_boolean() && !works.get<bool>()) {
    return Make(p.id, State::kFail, path + " does not compile a one-line program", p.fix);
  }
  std::string detail = path + ": " + Str(f.runner, "cxx_version");
  if (!works.is_boolean()) {
    return Make(p.id, State::kWarn, detail + " (its test compile did not finish in time)");
  }
  return Make(p.id, State::kOk, detail);
}

Check NinjaCheck(const ToolchainPart& p, const Facts& f) {
  if (f.runner.is_null()) return Make(p.id, State::kSkip, kNeedsPython);
  std::string path = Str(Field(f.runner, "toolchain"), "ninja");
  if (path.empty()) return Make(p.id, State::kFail, "ninja is not on PATH (" + p.what + ")", p.fix);
  return Make(p.id, State::kOk, path);
}

// nvcc, and whether its CUDA version is the one torch was built with: torch's builder refuses
// another major version and warns about another minor one.
Check NvccCheck(const ToolchainPart& p, const Facts& f) {
  if (f.runner.is_null()) {
    return Make(p.id, State::kSkip, f.backend == "cuda" ? kNeedsPython : NotNeeded(f));
  }
  std::string path = Str(Field(f.runner, "toolchain"), "nvcc");
  std::string release = NvccRelease(Str(f.runner, "nvcc_release"));
  std::string found = path.empty() ? "" : "nvcc " + (release.empty() ? "?" : release) + " at " + path;
  if (f.backend != "cuda") {
    return Make(p.id, State::kSkip, (found.empty() ? "" : found + "; ") + NotNeeded(f));
  }
  if (path.empty()) {
    return Make(p.id, State::kFail,
                "nvcc is not found ($CUDA_HOME, $CUDA_PATH, PATH, /usr/local/cuda)", p.fix);
  }
  std::string torch_cuda = Str(Field(f.runner, "torch"), "cuda");
  if (release.empty()) return Make(p.id, State::kWarn, found + ": its release is unreadable");
  if (torch_cuda.empty()) return Make(p.id, State::kOk, found);
  std::string fix = "install the CUDA toolkit " + torch_cuda +
                    " (CUDA_HOME pointing at it), or a torch built for CUDA " + release;
  if (Major(release) != Major(torch_cuda)) {
    return Make(p.id, State::kFail,
                found + ", but torch was built with CUDA " + torch_cuda +
                    ": torch's builder refuses another major version",
                fix);
  }
  if (release != torch_cuda) {
    return Make(p.id, State::kWarn,
                found + ", torch was built with CUDA " + torch_cuda +
                    ": the same major version usually works",
                fix);
  }
  return Make(p.id, State::kOk, found + ", as torch's CUDA");
}

Check GpuCheck(const Facts& f) {
  const json& t = Field(f.runner, "torch");
  std::string detail = std::to_string(f.gpu_nodes) + " /dev/nvidiaN node(s)";
  const json& count = Field(t, "device_count");
  if (count.is_number_integer()) detail += ", torch sees " + std::to_string(count.get<int>());
  if (!Str(t, "device_error").empty()) detail += ", torch: " + Str(t, "device_error");
  if (f.backend != "cuda") return Make("gpus", State::kSkip, detail + "; " + NotNeeded(f));
  if (f.gpu_nodes == 0) {
    return Make("gpus", State::kFail, "no /dev/nvidiaN device: no GPU is visible",
                "install NVIDIA's driver; in a container, pass the GPUs in (docker run --gpus "
                "all), or use --backend cpu");
  }
  if (!Str(t, "cuda").empty() && (!count.is_number_integer() || count.get<int>() == 0)) {
    return Make("gpus", State::kFail, detail + ", but torch sees none",
                "check the driver with nvidia-smi (it must support torch's CUDA " + Str(t, "cuda") +
                    ") and CUDA_VISIBLE_DEVICES");
  }
  return Make("gpus", State::kOk, detail);
}

bool Flag(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_boolean() && j[key].get<bool>();
}

// What src/sandbox enforces and needs from the kernel (see sandbox/steps.h).
std::vector<Check> SandboxChecks(const Facts& f) {
  std::vector<Check> out;
  if (f.sandbox_library.empty()) {
    out.push_back(Make("sandbox_library", State::kFail,
                       "libkforge_sandbox.so is not beside the kforge binary: candidates and "
                       "compilers would run unconfined",
                       "build it with kforge: cmake --build build (target kforge_sandbox)"));
  } else {
    out.push_back(Make("sandbox_library", State::kOk, f.sandbox_library));
  }
  const json& s = f.sandbox;
  if (!s.is_object()) {
    for (const char* name : {"sandbox_namespaces", "sandbox_landlock", "sandbox_seccomp"}) {
      out.push_back(Make(name, State::kFail, "the kernel's sandbox features could not be probed"));
    }
    return out;
  }
  bool root = Flag(s, "root");
  std::string how = root ? " (as root)" : " (through a user namespace)";
  if (Flag(s, "net_namespace") && Flag(s, "pid_namespace")) {
    out.push_back(Make("sandbox_namespaces", State::kOk,
                       "network and pid namespaces" + how + "; processes " + Str(s, "processes")));
  } else {
    std::string which = Flag(s, "net_namespace") ? "pid" : Flag(s, "pid_namespace") ? "network" : "network and pid";
    std::string userns = Flag(s, "user_namespace") ? "" : ", user namespaces refused";
    out.push_back(Make(
        "sandbox_namespaces", State::kFail,
        "cannot create " + which + " namespaces" + how + userns +
            ": the sandbox refuses to start, so builds and runs end infra_error",
        root ? "allow unshare(2): in a container, a seccomp profile that permits namespaces "
               "(or --privileged)"
             : "allow unprivileged user namespaces (sysctl -w "
               "kernel.unprivileged_userns_clone=1; user.max_user_namespaces > 0), or run "
               "kforge as root"));
  }
  int abi = s.value("landlock_abi", 0);
  if (abi > 0) {
    out.push_back(Make("sandbox_landlock", State::kOk,
                       "Landlock ABI v" + std::to_string(abi) + ": the filesystem is read-only "
                       "but for each process's own folders"));
  } else {
    bool mounts = root && Flag(s, "mount_namespace");
    out.push_back(Make("sandbox_landlock", State::kWarn,
                       mounts ? "no Landlock: read-only mounts confine the filesystem instead"
                              : "no Landlock and not root: candidates' writes to the filesystem "
                                "are NOT confined",
                       "boot a kernel with Landlock (Linux >= 5.13, 'landlock' in the lsm= list)"));
  }
  if (Flag(s, "seccomp")) {
    out.push_back(Make("sandbox_seccomp", State::kOk, "seccomp filters"));
  } else {
    out.push_back(Make("sandbox_seccomp", State::kFail,
                       "no seccomp filters: the sandbox refuses to start, so builds and runs "
                       "end infra_error",
                       "a kernel with CONFIG_SECCOMP_FILTER; in a container, a runtime that "
                       "lets processes install seccomp filters"));
  }
  return out;
}

Check RedisCheck(const Facts& f) {
  if (!f.redis_server.empty()) return Make("redis", State::kOk, f.redis_server);
  return Make("redis", State::kWarn,
              "redis-server is not on PATH: only kforge serve --redis, kforge worker and their "
              "tests need it",
              "apt-get install redis-server");
}

}  // namespace

const char* StateName(State s) {
  switch (s) {
    case State::kOk: return "ok";
    case State::kWarn: return "warn";
    case State::kFail: return "fail";
    case State::kSkip: return "skip";
  }
  return "fail";
}

std::vector<Check> Decide(const Facts& f) {
  std::vector<Check> out = {RunnerCheck(f), PythonCheck(f), TorchCheck(f)};
  for (const auto& p : build::ToolchainParts()) {
    if (p.id == "compiler") {
      out.push_back(CompilerCheck(p, f));
    } else if (p.id == "ninja") {
      out.push_back(NinjaCheck(p, f));
    } else if (p.id == "nvcc") {
      out.push_back(NvccCheck(p, f));
    } else {
      out.push_back(PartCheck(p, f));
    }
  }
  out.push_back(GpuCheck(f));
  for (auto& c : SandboxChecks(f)) out.push_back(std::move(c));
  out.push_back(RedisCheck(f));
  return out;
}

bool AnyFailed(const std::vector<Check>& checks) {
  for (const auto& c : checks) {
    if (c.state == State::kFail) return true;
  }
  return false;
}

}  // namespace kf::doctor
