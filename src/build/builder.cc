#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <fstream>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <random>

#include "build/build.h"
#include "build/requests.h"
#include "common/affinity.h"
#include "common/channel.h"
#include "common/files.h"
#include "common/hash.h"
#include "common/process.h"
#include "common/protocol.h"
#include "sandbox/sandbox.h"

namespace kf::build {
namespace fs = std::filesystem;
namespace {

struct Worker {
  Child child;
  Channel chan;
};

Result<nlohmann::json> ReadJsonFile(const fs::path& p) {
  auto text = ReadFile(p);
  if (!text.ok()) return text.status();
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return Status::IoError("corrupt " + p.string());
  return j;
}

Status WriteJsonFile(const fs::path& p, const nlohmann::json& j) {
  fs::path tmp = p;
  tmp += ".tmp";
  {
    std::ofstream f(tmp);
    if (!f) return Status::IoError("cannot write " + tmp.string());
    f << j.dump();
    if (!f) return Status::IoError("cannot write " + tmp.string() + " (disk full?)");
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) return Status::IoError("rename " + tmp.string() + ": " + ec.message());
  return Status::Ok();
}

// An exclusive lock on a file, held for the object's life (flock: per open file, so it also
// excludes other threads of this process that open the same path).
class FileLock {
 public:
  explicit FileLock(const fs::path& p) : fd_(open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) flock(fd_, LOCK_EX);
  }
  ~FileLock() {
    if (fd_ >= 0) close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

Artifact ArtifactFromResult(const std::string& key, const fs::path& dir, const nlohmann::json& r,
                            const ExtensionSpec* spec) {
  Artifact a;
  a.key = key;
  a.ok = r.value("ok", false);
  if (a.ok) {
    a.so_path = dir / r.value("so_file", "");
    a.module_name = r.value("module_name", "");
  } else {
    a.error_text = r.value("message", "build failed");
    a.messages = ParseCompilerOutput(a.error_text);
    if (spec && r.contains("layout")) LocateMessages(r["layout"], *spec, &a.messages);
  }
  a.light_headers = r.value("light_headers", "");
  a.light_headers_why = r.value("light_headers_why", "");
  a.split_build = r.value("split_build", "");
  a.split_build_why = r.value("split_build_why", "");
  a.bindings = r.value("bindings", "");
  if (r.contains("bindings_why") && r["bindings_why"].is_string()) a.bindings_why = r["bindings_why"];
  return a;
}

// Why a failed build failed, when the machine is to blame; nullopt for a success or the
// candidate's own error.
std::optional<EnvironmentFault> EnvironmentFaultOf(const nlohmann::json& reply, bool uses_cuda) {
  if (reply.value("ok", false)) return std::nullopt;
  const nlohmann::json toolchain = reply.contains("toolchain") ? reply["toolchain"] : nullptr;
  return ClassifyBuildFailure(reply.value("message", ""), toolchain, uses_cuda);
}

}  // namespace

class Builder::Impl {
 public:
  explicit Impl(BuildOptions opt) : opt_(std::move(opt)) {}

  Result<std::unique_ptr<Worker>> StartWorker() {
    UniqueFd mine, theirs;
    if (auto s = SocketPair(&mine, &theirs); !s.ok()) return s;
    fs::create_directories(opt_.cache_dir / "logs");
    SpawnOptions so;
    so.argv = {opt_.python, "-m", "kforge_runner.build_worker", "--fd", "3"};
    so.fds = {{3, theirs.get()}};
    so.env_set = {"PYTHONPATH=" + opt_.runner_dir.string(), "PYTHONDONTWRITEBYTECODE=1",
                  "KFORGE_SANDBOX_LIB=" + SandboxLibraryPath()};
    so.stderr_path = (opt_.cache_dir / "logs" / "build-worker.log").string();
    so.stdout_path = so.stderr_path;
    auto child = Spawn(so);
    if (!child.ok()) return child.status();
    (void)PinProcess(child->pid(), opt_.cpus);  // best effort: unpinned builds still build
    auto w = std::make_unique<Worker>();
    w->child = std::move(child.value());
    w->chan = Channel(std::move(mine));
    return w;
  }

  // A worker to use; blocks while all `workers` are busy.
  Result<std::unique_ptr<Worker>> Acquire() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !idle_.empty() || live_ < opt_.workers; });
    if (!idle_.empty()) {
      auto w = std::move(idle_.front());
      idle_.pop_front();
      return w;
    }
    ++live_;
    lock.unlock();
    auto w = StartWorker();
    if (!w.ok()) {
      std::lock_guard<std::mutex> relock(mu_);
      --live_;
      cv_.notify_one();
    }
    return w;
  }

  void Release(std::unique_ptr<Worker> w) {
    std::lock_guard<std::mutex> lock(mu_);
    if (w) {
      idle_.push_back(std::move(w));
    } else {
      --live_;  // the worker died or was killed
    }
    cv_.notify_one();
  }

  // Sends one request and waits for the answer; a worker that dies or overruns is discarded.
  // On a timeout, `*cpu_ms` (when given) is the CPU the worker and its compilers used on it.
  Result<nlohmann::json> Request(const nlohmann::json& msg, std::chrono::milliseconds timeout,
                                 double* cpu_ms = nullptr) {
    const protocol::Schema& schema = protocol::Embedded();
    if (auto s = schema.CheckRequest("build_worker", msg); !s.ok()) {
      return Status::Internal("kforge broke the protocol: " + s.message());
    }
    auto w = Acquire();
    if (!w.ok()) return w.status();
    std::unique_ptr<Worker> worker = std::move(w.value());
    const double cpu0 = cpu_ms ? ProcessTreeCpuMs(worker->child.pid()) : 0;
    Status s = worker->chan.Send(msg);
    if (!s.ok()) {
      Release(nullptr);
      return Status::Unavailable("build worker: " + s.message());
    }
    auto reply = worker->chan.Receive(timeout);
    if (!reply.ok()) {
      if (cpu_ms) *cpu_ms = ProcessTreeCpuMs(worker->child.pid()) - cpu0;
      worker->child.Kill();
      Release(nullptr);
      if (reply.status().code() == Code::kTimeout) return reply.status();
      return Status::Unavailable("build worker died: " + reply.status().message() +
                                 " (see " + (opt_.cache_dir / "logs/build-worker.log").string() + ")");
    }
    Release(std::move(worker));
    if (auto s = schema.CheckReplyTo("build_worker", msg, *reply); !s.ok()) {
      return Status::Internal("the build worker broke the protocol: " + s.message());
    }
    return reply;
  }

  Result<nlohmann::json> Fingerprint() {
    std::lock_guard<std::mutex> lock(fp_mu_);
    if (fingerprint_) return *fingerprint_;
    // The probe's findings (where torch's headers, pybind11 and Python.h resolve, or that they
    // do not) are part of the fingerprint: installing a missing package changes every key.
    auto r = Request(requests::Hello(opt_.backend), std::chrono::seconds(120));
    if (!r.ok()) return r.status();
    if (!r->value("ok", false)) {
      return Status::Unavailable(r->value("message", "build worker refused to start"));
    }
    nlohmann::json fp = (*r)["fingerprint"];
    fp["backend"] = opt_.backend;
    fingerprint_ = fp;
    return fp;
  }

  Result<std::string> Key(const nlohmann::json& what) {
    auto fp = Fingerprint();
    if (!fp.ok()) return fp.status();
    return ArtifactKey(*fp, what);
  }

  // A digest of the runner's light-headers rules (the file that rewrites), read once: a change
  // to them changes every light build's key. "" when light headers are off.
  Result<std::string> LightRules() {
    if (!opt_.light_headers) return std::string();
    std::lock_guard<std::mutex> lock(fp_mu_);
    if (light_rules_.empty()) {
      const fs::path file = opt_.runner_dir / "kforge_runner" / "light_headers.py";
      auto rules = ReadFile(file);
      if (!rules.ok()) {
        return Status::NotFound("kforge's light-headers rules are missing: " + file.string());
      }
      light_rules_ = Sha256Hex(*rules);
    }
    return light_rules_;
  }

  // A digest of the runner's split-build rules (split_build.py and the light-headers file it
  // reads sources with), read once. "" when split builds are off.
  Result<std::string> SplitRules() {
    if (!opt_.split_build) return std::string();
    return RulesDigest({"split_build.py", "light_headers.py"}, "split-build", &split_rules_);
  }

  // A digest of the runner's cached-bindings rules (bindings.py and the light-headers file it
  // reads sources with), read once. "" when cached bindings are off.
  Result<std::string> BindingsRules() {
    if (!opt_.cached_bindings) return std::string();
    return RulesDigest({"bindings.py", "light_headers.py"}, "cached-bindings", &bindings_rules_);
  }

  // The digest of the digests of these runner files, kept in *memo after the first read.
  Result<std::string> RulesDigest(std::initializer_list<const char*> names, const std::string& what,
                                  std::string* memo) {
    std::lock_guard<std::mutex> lock(fp_mu_);
    if (memo->empty()) {
      std::string all;
      for (const char* name : names) {
        const fs::path file = opt_.runner_dir / "kforge_runner" / name;
        auto rules = ReadFile(file);
        if (!rules.ok()) {
          return Status::NotFound("kforge's " + what + " rules are missing: " + file.string());
        }
        all += Sha256Hex(*rules);
      }
      *memo = Sha256Hex(all);
    }
    return *memo;
  }

  // The artifact key's input for a load_inline call (LoadInlineKeyInput with these rules).
  Result<nlohmann::json> KeyInput(const ExtensionSpec& spec);

  // `uses_cuda`: the build compiles CUDA sources or links CUDA's libraries.
  Result<Artifact> BuildKeyed(const std::string& key, nlohmann::json request,
                              const ExtensionSpec* spec, bool uses_cuda) {
    fs::path root = BuildCache() / "artifacts";
    fs::path dir = root / key;
    std::error_code ec;
    fs::create_directories(root, ec);
    if (ec) return Status::IoError("cannot create " + root.string() + ": " + ec.message());
    if (auto cached = ReadJsonFile(dir / "result.json"); cached.ok()) {
      Artifact a = ArtifactFromResult(key, dir, *cached, spec);
      a.cache_hit = true;
      return a;
    }
    FileLock lock(root / (key + ".lock"));
    if (auto cached = ReadJsonFile(dir / "result.json"); cached.ok()) {  // built while we waited
      Artifact a = ArtifactFromResult(key, dir, *cached, spec);
      a.cache_hit = true;
      return a;
    }
    fs::path tmp = root / (key + ".tmp");
    fs::remove_all(tmp, ec);
    fs::create_directories(tmp, ec);
    if (ec) return Status::IoError("cannot create " + tmp.string() + ": " + ec.message());
    // What every worker needs to build exactly like the one that answered `hello`.
    requests::Context ctx;
    ctx.dir = tmp;
    if (auto fp = Fingerprint(); fp.ok()) ctx.arch = fp->value("arch", "");
    ctx.pch_dir = opt_.pch ? (BuildCache() / "pch").string() : "";
    // The macros only torch/extension.h defines are listed once per toolchain, here.
    ctx.light_dir = (BuildCache() / "light").string();
    if (request.contains("cached_bindings")) ctx.bindings_dir = (BuildCache() / "bindings").string();
    // The probe: what a failed build's worker looks for, so the failure can be told apart
    // from the candidate's own (environment.h).
    ctx.backend = opt_.backend;
    // A PCH costs more than one build saves: it is made once the build cache has compiled a
    // candidate before, in this process or an earlier one (the first one-off `kforge eval` of a
    // cache makes none; its second does, while it builds).
    ctx.pch_make = request.value("op", "") == "build" && SecondCandidateBuild();
    requests::AddContext(ctx, &request);
    auto t0 = std::chrono::steady_clock::now();
    double timeout_cpu_ms = 0;
    auto reply = Request(request, opt_.timeout, &timeout_cpu_ms);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    {
      std::lock_guard<std::mutex> l(mu_);
      compile_ms_total_ += ms;
    }
    if (!reply.ok()) {
      if (reply.status().code() == Code::kTimeout) {
        fs::remove_all(tmp, ec);
        const long long limit_s = opt_.timeout.count() / 1000;
        const long long cpu_s = static_cast<long long>(timeout_cpu_ms / 1000);
        // Decided by what ran: compilers that got less than half the time on a CPU waited for
        // one (the machine's load), which is no verdict on the code (infra_error, retried);
        // compilers busy all along were kept so by the code (a template explosion, say).
        if (timeout_cpu_ms < 500.0 * static_cast<double>(opt_.timeout.count()) / 1000) {
          return Status::Unavailable(
              "the build did not finish within " + std::to_string(limit_s) +
              " s, and its compilers were on a CPU for only " + std::to_string(cpu_s) +
              " s of them: the machine is too busy to judge it (not the candidate's fault)");
        }
        Artifact a;  // not cached either
        a.key = key;
        a.error_text = "the build took longer than " + std::to_string(limit_s) +
                       " s (" + std::to_string(cpu_s) + " s of compiler CPU) and was stopped";
        a.build_ms = ms;
        a.cpu_ms = timeout_cpu_ms;
        return a;
      }
      return reply.status();
    }
    if (reply->value("infra", false)) {  // e.g. the sandbox failed: not the code's fault, not cached
      fs::remove_all(tmp, ec);
      return Status::Unavailable(reply->value("message", "build infrastructure failed"));
    }
    if (auto fault = EnvironmentFaultOf(*reply, uses_cuda)) {
      // The machine's fault: not cached, so the build runs again once the part is installed.
      fs::remove_all(tmp, ec);
      Artifact a;
      a.key = key;
      a.error_text = reply->value("message", "build failed");
      a.environment = std::move(fault);
      a.build_ms = ms;
      a.cpu_ms = 1000.0 * reply->value("cpu_s", 0.0);
      return a;
    }
    if (auto s = WriteJsonFile(tmp / "result.json", *reply); !s.ok()) return s;
    fs::remove_all(dir, ec);
    fs::rename(tmp, dir, ec);
    if (ec) return Status::IoError("cannot store artifact " + dir.string() + ": " + ec.message());
    Artifact a = ArtifactFromResult(key, dir, *reply, spec);
    a.build_ms = ms;
    a.cpu_ms = 1000.0 * reply->value("cpu_s", 0.0);
    a.pch = reply->value("pch", "");
    return a;
  }

  fs::path BuildCache() const { return opt_.build_cache.empty() ? opt_.cache_dir : opt_.build_cache; }

  // Whether this candidate build is the build cache's second or later: this process built one
  // before, or an earlier process left the mark its first build leaves.
  bool SecondCandidateBuild() {
    const fs::path mark = BuildCache() / "pch" / "candidate-built";
    std::lock_guard<std::mutex> l(mu_);
    std::error_code ec;
    const bool before = ++candidate_builds_ >= 2 || fs::exists(mark, ec);
    if (!before) {
      fs::create_directories(mark.parent_path(), ec);
      std::ofstream(mark) << "a candidate was built with this build cache\n";
    }
    return before;
  }

  BuildOptions opt_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Worker>> idle_;  // GUARDED_BY(mu_)
  int live_ = 0;                              // GUARDED_BY(mu_)
  double compile_ms_total_ = 0;               // GUARDED_BY(mu_)
  int candidate_builds_ = 0;                  // GUARDED_BY(mu_)
  std::mutex fp_mu_;
  std::optional<nlohmann::json> fingerprint_;  // GUARDED_BY(fp_mu_)
  std::string light_rules_;                    // GUARDED_BY(fp_mu_)
  std::string split_rules_;  // SplitRules(), once read
  std::string bindings_rules_;  // BindingsRules(), once read
};

Builder::Builder(BuildOptions opt) : impl_(std::make_unique<Impl>(std::move(opt))) {}
Builder::~Builder() = default;

Result<nlohmann::json> Builder::Fingerprint() { return impl_->Fingerprint(); }

bool LightHeadersMayApply(const ExtensionSpec& spec) {
  for (const auto& s : spec.cuda_sources) {
    if (s.find("torch/extension.h") != std::string::npos) return true;
  }
  return false;
}

bool SplitBuildMayApply(const ExtensionSpec& spec) {
  for (const auto& s : spec.cuda_sources) {
    if (s.find("<<<") != std::string::npos) return true;
  }
  return false;
}

nlohmann::json LoadInlineKeyInput(const ExtensionSpec& spec, const std::string& light_rules,
                                  const std::string& split_rules,
                                  const std::string& bindings_rules) {
  nlohmann::json what = {{"load_inline", CanonicalJson(spec)}};
  if (!light_rules.empty() && LightHeadersMayApply(spec)) what["light_headers"] = light_rules;
  if (!split_rules.empty() && SplitBuildMayApply(spec)) what["split_build"] = split_rules;
  // Only a call that binds functions has load_inline's PYBIND11_MODULE to split off.
  if (!bindings_rules.empty() && !spec.functions.is_null()) what["cached_bindings"] = bindings_rules;
  return what;
}

std::string ArtifactKey(const nlohmann::json& fingerprint, const nlohmann::json& what) {
  nlohmann::json j = {{"toolchain", fingerprint}, {"what", what}, {"format", 2}};  // 2: source layouts fixed
  return Sha256Hex(j.dump());
}

Result<nlohmann::json> Builder::Impl::KeyInput(const ExtensionSpec& spec) {
  auto rules = LightRules();
  if (!rules.ok()) return rules.status();
  auto split = SplitRules();
  if (!split.ok()) return split.status();
  auto bindings = BindingsRules();
  if (!bindings.ok()) return bindings.status();
  return LoadInlineKeyInput(spec, *rules, *split, *bindings);
}

Result<std::string> Builder::Key(const ExtensionSpec& spec) {
  auto what = impl_->KeyInput(spec);
  if (!what.ok()) return what.status();
  return impl_->Key(*what);
}

Result<Artifact> Builder::Build(const ExtensionSpec& spec) {
  auto what = impl_->KeyInput(spec);
  if (!what.ok()) return what.status();
  auto key = impl_->Key(*what);
  if (!key.ok()) return key.status();
  // load_inline's own default: CUDA when there are CUDA sources.
  bool uses_cuda = spec.with_cuda.value_or(!spec.cuda_sources.empty());
  // Light headers only where the key says so: a build the rewrite cannot touch is a plain
  // build, shared.
  return impl_->BuildKeyed(
      *key,
      requests::Build(spec, what->contains("light_headers"), what->contains("split_build"),
                      what->contains("cached_bindings")),
      &spec, uses_cuda);
}

Result<Artifact> Builder::BuildNative() {
  fs::path src = impl_->opt_.runner_dir / "native" / "kforge_native.cpp";
  auto text = ReadFile(src);
  if (!text.ok()) return Status::NotFound("kforge's helper source is missing: " + src.string());
  bool cuda = impl_->opt_.backend == "cuda";
  auto key = impl_->Key({{"native", Sha256Hex(*text)}});
  if (!key.ok()) return key.status();
  return impl_->BuildKeyed(*key, requests::BuildNative(src, cuda), nullptr, cuda);
}

double Builder::compile_ms_total() const {
  std::lock_guard<std::mutex> l(impl_->mu_);
  return impl_->compile_ms_total_;
}

}  // namespace kf::build
