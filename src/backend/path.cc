// The two kernel families as paths on a device: load_inline (the CUDA and CPU paths) and
// Triton.
#include <map>
#include <memory>

#include "backend/backend.h"
#include "common/hash.h"

namespace kf::backend {
namespace {

// C++/CUDA sources passed to torch.utils.cpp_extension.load_inline: kforge builds them in its
// build pool before the run, exactly as torch would (src/build); the candidate host hands the
// candidate the prebuilt module through a counting proxy (runner/kforge_runner/guard.py).
class LoadInlinePath final : public Path {
 public:
  using Path::Path;
  Family family() const override { return Family::kLoadInline; }
  bool Prebuilds() const override { return true; }
  std::filesystem::path JitCacheDir(const std::filesystem::path&, std::string_view,
                                    std::string_view) const override {
    return {};
  }
  const char* EvidenceField() const override { return "extension_calls"; }
  std::string NeverRanMessage() const override {
    return "ModelNew.forward never called a function of the candidate's own extension";
  }
  std::string StillCorrectMessage() const override {
    return "the answer stayed correct with the candidate's extension made a no-op (its tensor "
           "results NaN, its functions that return nothing not called): the work is done "
           "elsewhere";
  }
  std::string PromptFormat() const override { return device().load_inline_prompt; }
};

// @triton.jit kernels launched with kernel[grid](...): Triton compiles them inside the
// candidate process on first call, into a cache of the candidate's own under kforge's cache;
// the host counts every launch through hooks it installs before the candidate's code runs
// (runner/kforge_runner/triton_hooks.py), and in the ghost replay makes every launch a no-op.
class TritonPath final : public Path {
 public:
  using Path::Path;
  Family family() const override { return Family::kTriton; }
  bool Prebuilds() const override { return false; }
  std::filesystem::path JitCacheDir(const std::filesystem::path& cache_dir,
                                    std::string_view candidate_hash,
                                    std::string_view environment) const override {
    // Triton keys its own entries by its version, the target and the kernel's source, so one
    // folder never serves a wrong binary; ours is per candidate text for isolation (backend.h)
    // and per toolchain and device so a changed machine starts empty.
    const std::string key = Sha256Hex("triton|" + std::string(candidate_hash) + "|" +
                                      device().name + "|" + std::string(environment));
    return cache_dir / "triton" / key.substr(0, 32);
  }
  const char* EvidenceField() const override { return "triton_launches"; }
  std::string NeverRanMessage() const override {
    return "ModelNew.forward never launched one of the candidate's @triton.jit kernels";
  }
  std::string StillCorrectMessage() const override {
    return "ghost replay: with every Triton kernel launch made a no-op the answer stayed "
           "correct, so the kernels did not compute it: the work is done elsewhere";
  }
  std::string PromptFormat() const override { return "triton"; }
};

}  // namespace

const char* FamilyName(Family f) { return f == Family::kTriton ? "triton" : "load_inline"; }

const char* CandidateFormat(Family f) { return f == Family::kTriton ? "triton" : "kernelbench"; }

bool ParseFamilyChoice(std::string_view name, std::optional<Family>* out) {
  if (name == "auto") {
    out->reset();
  } else if (name == "load_inline" || name == "kernelbench") {
    *out = Family::kLoadInline;
  } else if (name == "triton") {
    *out = Family::kTriton;
  } else {
    return false;
  }
  return true;
}

const Path& PathFor(const Device& device, Family family) {
  // One object per (device, family), made once over the device table; never freed (used until
  // the program ends, from any thread).
  static const auto* kPaths = [] {
    auto* paths = new std::map<std::pair<std::string, Family>, std::unique_ptr<Path>>();
    for (const std::string& name : DeviceNames()) {
      const Device& d = *FindDevice(name);
      (*paths)[{name, Family::kLoadInline}] = std::make_unique<LoadInlinePath>(d);
      (*paths)[{name, Family::kTriton}] = std::make_unique<TritonPath>(d);
    }
    return paths;
  }();
  return *kPaths->at({device.name, family});
}

std::string PromptFormat(std::string_view backend, std::optional<Family> family) {
  const Path* p = FindPath(backend, family.value_or(Family::kLoadInline));
  return p ? p->PromptFormat() : "";
}

const Path* FindPath(std::string_view backend, Family family) {
  const Device* d = FindDevice(backend);
  return d ? &PathFor(*d, family) : nullptr;
}

}  // namespace kf::backend
