// backend: what differs by where candidates run and by what they are written in, behind one
// seam, so that the stages (extract, static rules, build, execute, score, prompts) ask here
// instead of comparing strings.
//
// Two axes, because two things really vary independently:
//   - the device backend (Device): cpu, cuda. Data: torch's device type, how lanes are
//     numbered, where the device model is read from, which profiler names are vendor
//     libraries, the load_inline prompt. A MUSA or ROCm backend is one more table entry
//     (docs/BACKENDS.md lists what else it needs).
//   - the kernel family (Family): load_inline (C++/CUDA sources compiled by kforge before the
//     run) or triton (@triton.jit functions compiled inside the candidate process on first
//     call).
// A Path is one family on one device: the CUDA path (load_inline on cuda), the CPU path
// (load_inline on cpu) and the Triton path (triton on cuda; on cpu only where the Python has a
// `triton` package, which in this repository is the tests' stand-in). It answers how a
// candidate is built, how it runs on the device, and what evidence and messages its rules use.
//
// Thread-safety: immutable tables; every function may be called from any thread.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kf::backend {

enum class Family { kLoadInline, kTriton };

// "load_inline", "triton": the names --family takes and the verdict settings record.
const char* FamilyName(Family f);
// The verdict's candidate.format: "kernelbench" (KernelBench's load_inline format, the name
// verdicts have always carried) or "triton".
const char* CandidateFormat(Family f);
// --family's value: "auto" (detect from the candidate's text) sets *out to nothing;
// "load_inline" (or "kernelbench") and "triton" name one. False for anything else.
bool ParseFamilyChoice(std::string_view name, std::optional<Family>* out);

// A device backend: what differs between cpu and cuda, as data.
struct Device {
  std::string name;        // --backend: "cuda", "cpu"
  std::string torch_type;  // torch.device's type in the runner: "cuda", "cpu"
  bool indexed = false;    // lanes are numbered devices ("cuda:N"); false: one device
  // The load_inline reply format (prompts/format_<name>.txt).
  std::string load_inline_prompt;
  // Profiler kernel names that belong to vendor libraries (H04 under strict), as an ECMAScript
  // regex matched case-insensitively; "" where the profiler records no device kernels.
  std::string vendor_kernels;
  // Candidates' kernels run on the candidate host's own CPUs, so the host's CPU time bounds
  // the work it did: the wall-clock bound (H07) can prove that no work escaped its timer.
  bool kernels_on_host_cpus = false;

  // torch's name of lane `index`'s device: "cuda:0", "cpu".
  std::string TorchDevice(int index) const;
};

// The backend called `name`, or nullptr.
const Device* FindDevice(std::string_view name);
// Every backend's name, for --backend's check: {"cuda", "cpu"}.
std::vector<std::string> DeviceNames();

// How many GPUs this machine (or container) shows: /dev/nvidiaN nodes. A container may expose
// them under other numbers (/dev/nvidia3 and /dev/nvidia6); CUDA still calls them 0 and 1.
int GpuNodes(const std::filesystem::path& dev = "/dev");
// "cuda" when a GPU is visible, else "cpu".
std::string DefaultBackend();
// The device indices a many-lane command uses when none are given: those CUDA_VISIBLE_DEVICES
// names, else every GPU node; one lane (0) on an unindexed backend.
std::vector<int> VisibleDevices(const Device& d);
// The model of the devices a backend runs on, for the verdict key: the GPUs' models from the
// NVIDIA driver's files under `proc` (sorted, distinct, comma-separated; no CUDA call), or the
// CPU's model name.
std::string DeviceModel(const Device& d, const std::filesystem::path& proc = "/proc");
// DeviceModel's answer for GPUs whose model the driver does not name.
inline constexpr const char* kUnknownGpu = "unknown GPU";

// One kernel family on one device: how its candidates are built, run and judged.
class Path {
 public:
  explicit Path(const Device& device) : device_(device) {}
  virtual ~Path() = default;
  Path(const Path&) = delete;
  Path& operator=(const Path&) = delete;

  virtual Family family() const = 0;
  const Device& device() const { return device_; }

  // -- build
  // True: kforge compiles the kernels before the run (the build pool and its artifact
  // cache, load_inline). False: they compile inside the candidate process on first call, and
  // the run reports the compile time as the build stage (Triton).
  virtual bool Prebuilds() const = 0;
  // The folder the candidate process may write its compiler's cache to, under kforge's cache
  // `cache_dir`, for the candidate with text hash `candidate_hash` on a toolchain and device
  // described by `environment` (any text that changes when either does). One folder per
  // candidate text: a candidate can write only the cache its own identical text reads, never
  // another candidate's compiled kernels. Empty: the family has no such cache.
  virtual std::filesystem::path JitCacheDir(const std::filesystem::path& cache_dir,
                                            std::string_view candidate_hash,
                                            std::string_view environment) const = 0;

  // -- run
  // The reply field in which the candidate host counts calls of the candidate's own kernels
  // during one call ("extension_calls": its extension's functions; "triton_launches": its
  // @triton.jit kernels launched).
  virtual const char* EvidenceField() const = 0;
  // Diagnostic messages of the H02 decisions: its kernels never ran in a profiled forward; the
  // answer stayed right with them made no-ops (the ablation call, for Triton: ghost replay).
  virtual std::string NeverRanMessage() const = 0;
  virtual std::string StillCorrectMessage() const = 0;

  // -- feedback
  // The reply format the model is asked for (prompts/format_<name>.txt).
  virtual std::string PromptFormat() const = 0;

 private:
  const Device& device_;
};

// The reply format a model is asked for on `backend` (prompts/format_<name>.txt): the named
// family's, else load_inline's, the format a model was always asked for. "" for an unknown
// backend.
std::string PromptFormat(std::string_view backend, std::optional<Family> family);

// The path of `family` on `device` (a static object).
const Path& PathFor(const Device& device, Family family);
// By backend name; nullptr for an unknown backend.
const Path* FindPath(std::string_view backend, Family family);

}  // namespace kf::backend
