// The builds of a candidate: every load_inline call resolved statically, built before it runs
// (BuildStatic), and the ones it asks for at run time (RuntimeLoadInline); compiler messages
// become diagnostics in the candidate's own lines.
#include <future>

#include "eval/decide.h"
#include "eval/impl.h"

namespace kf::eval {
namespace {
using nlohmann::json;

// Compiler messages as diagnostics in the submitted text's lines.
std::vector<Diagnostic> BuildDiagnostics(const build::Artifact& a, const ExtensionSpec& spec,
                                         const extract::InlineCall* call,
                                         const std::string& submitted) {
  std::vector<Diagnostic> out;
  for (const auto& m : a.messages) {
    if (m.severity != "error") continue;
    Diagnostic d;
    d.stage = "build";
    d.code = "compile_error";
    d.message = m.text;
    if (m.source_index >= 0) {
      const auto& sources = m.cuda ? spec.cuda_sources : spec.cpp_sources;
      d.excerpt = LineOf(sources[static_cast<size_t>(m.source_index)], m.source_line);
      if (call) {
        const auto& texts = m.cuda ? call->cuda_sources : call->cpp_sources;
        if (static_cast<size_t>(m.source_index) < texts.size()) {
          const auto& map = texts[static_cast<size_t>(m.source_index)].line_map;
          if (m.source_line >= 1 && static_cast<size_t>(m.source_line) <= map.size()) {
            d.line = map[static_cast<size_t>(m.source_line - 1)];
          }
        }
      }
      if (d.line > 0) d.excerpt = LineOf(submitted, d.line);
      d.col = m.col;
    } else if (!m.file.empty()) {
      d.message = m.file + ":" + std::to_string(m.line) + ": " + m.text;
    }
    out.push_back(std::move(d));
    if (out.size() >= 10) break;
  }
  if (out.empty()) {
    Diagnostic d;
    d.stage = "build";
    d.code = "compile_error";
    std::string text = a.error_text;
    if (text.size() > 3000) text = "..." + text.substr(text.size() - 3000);
    d.message = "the extension '" + spec.name + "' failed to build";
    d.excerpt = text;
    out.push_back(std::move(d));
  }
  return out;
}

// What light headers did over a candidate's builds, for the build stage's detail: benches count
// the compiles that used it and those that fell back.
struct LightHeadersTally {
  int used = 0, fell_back = 0;  // artifacts, compiled or cached
  int compiled_used = 0, compiled_fell_back = 0;
  std::string why;  // the first fall-back's reason

  void Add(const build::Artifact& a) {
    if (a.light_headers == "used") {
      ++used;
      compiled_used += a.cache_hit ? 0 : 1;
    } else if (a.light_headers == "fell_back") {
      ++fell_back;
      compiled_fell_back += a.cache_hit ? 0 : 1;
      if (why.empty()) why = a.light_headers_why;
    }
  }
  // "fell_back" when any build did, else "used" when any did, else "unchanged" (nothing to
  // rewrite: no CUDA source includes torch/extension.h).
  std::string State() const {
    if (fell_back > 0) return "fell_back";
    return used > 0 ? "used" : "unchanged";
  }
};

// What split builds did over a candidate's builds (build::BuildOptions::split_build).
struct SplitBuildTally {
  int used = 0, fell_back = 0, refused = 0;  // artifacts, compiled or cached
  int compiled_used = 0;
  std::string why;  // the first fall-back's or refusal's reason

  void Add(const build::Artifact& a) {
    if (a.split_build == "used") {
      ++used;
      compiled_used += a.cache_hit ? 0 : 1;
    } else if (a.split_build == "fell_back" || a.split_build == "refused") {
      ++(a.split_build == "refused" ? refused : fell_back);
      if (why.empty()) why = a.split_build_why;
    }
  }
  // "fell_back" or "refused" when any build was, else "used" when any was, else "unchanged"
  // (no CUDA source launches a kernel).
  std::string State() const {
    if (fell_back > 0) return "fell_back";
    if (refused > 0) return "refused";
    return used > 0 ? "used" : "unchanged";
  }
};

// What cached bindings did over a candidate's compiled builds (build::Artifact::bindings): how
// many linked a kept bindings' object, compiled one, fell back or were refused, and the first
// reason a build did not use them.
struct BindingsTally {
  int cached = 0, built = 0, fell_back = 0, refused = 0;
  std::string why;

  void Add(const build::Artifact& a) {
    if (a.cache_hit || a.bindings.empty()) return;
    if (a.bindings == "cached") ++cached;
    if (a.bindings == "built") ++built;
    if (a.bindings == "fell_back") ++fell_back;
    if (a.bindings == "refused") ++refused;
    if (why.empty()) why = a.bindings_why;
  }
  bool Any() const { return cached + built + fell_back + refused > 0; }
};

}  // namespace

std::optional<VerdictStatus> Evaluator::Impl::BuildStatic(Prepared& p) {
  Verdict& v = p.verdict;
  const extract::Candidate& cand = p.candidate;
  const std::string& text = p.text;
  const auto t0 = Now();
  std::vector<std::future<Result<build::Artifact>>> builds;
  for (const auto& call : cand.inline_calls) {
    if (!call.resolved) continue;
    builds.push_back(
        std::async(std::launch::async, [this, &call] { return builder->Build(call.spec); }));
  }
  bool all_hit = true;
  int compiled = 0;
  double cpu_ms = 0;
  int with_pch = 0;
  LightHeadersTally light;
  SplitBuildTally split;
  BindingsTally bindings;
  bool build_ok = true;
  std::optional<Status> build_infra;
  std::optional<build::EnvironmentFault> environment;
  size_t bi = 0;
  for (const auto& call : cand.inline_calls) {
    if (!call.resolved) continue;
    auto a = builds[bi++].get();  // every future is waited for, even after a failure
    if (!a.ok()) {
      build_infra = a.status();
      continue;
    }
    if (a->environment) {  // outranks the candidate's own errors: this machine cannot judge it
      environment = a->environment;
      continue;
    }
    all_hit = all_hit && a->cache_hit;
    compiled += a->cache_hit ? 0 : 1;
    cpu_ms += a->cpu_ms;
    with_pch += !a->cache_hit && a->pch == "used" ? 1 : 0;
    light.Add(*a);
    split.Add(*a);
    bindings.Add(*a);
    if (!a->ok) {
      build_ok = false;
      for (auto& d : BuildDiagnostics(*a, call.spec, &call, text)) v.diagnostics.push_back(d);
    }
  }
  const std::optional<VerdictStatus> decided =
      StaticBuildStatus({build_infra.has_value(), environment.has_value(), !build_ok});
  if (decided == VerdictStatus::kInfraError) {  // the machine's fault: no build stage recorded
    v.diagnostics.push_back(build_infra ? InfraDiagnostic("build", *build_infra)
                                        : EnvironmentDiagnostic(*environment));
    return decided;
  }
  int unresolved = 0;
  for (const auto& call : cand.inline_calls) unresolved += call.resolved ? 0 : 1;
  v.stages.push_back({"build",
                      build_ok,
                      MsSince(t0),
                      {{"cache_hit", all_hit},
                       {"compiled", compiled},
                       {"cpu_ms", cpu_ms},
                       {"compiled_with_pch", with_pch},
                       {"light_headers", opt.light_headers ? light.State() : "off"},
                       {"compiled_light", light.compiled_used},
                       {"compiled_light_fell_back", light.compiled_fell_back},
                       {"split_build", opt.split_build ? split.State() : "off"},
                       {"compiled_split", split.compiled_used},
                       {"deferred_to_run_time", unresolved}}});
  if (!light.why.empty()) v.stages.back().detail["light_headers_why"] = light.why;
  if (!split.why.empty()) v.stages.back().detail["split_build_why"] = split.why;
  if (bindings.Any()) {  // only where something was compiled with cached bindings asked for
    auto& detail = v.stages.back().detail;
    detail["bindings"] = {{"cached", bindings.cached}, {"built", bindings.built},
                          {"fell_back", bindings.fell_back}, {"refused", bindings.refused}};
    if (!bindings.why.empty()) detail["bindings_why"] = bindings.why;
  }
  return decided;
}

execute::LoadInlineFn Evaluator::Impl::RuntimeLoadInline(Prepared& p, RuntimeBuilds* rb) {
  return [this, &p, rb](const json& args) {
    Verdict& v = p.verdict;
    const extract::Candidate& cand = p.candidate;
    const std::string& text = p.text;
    execute::LoadInlineReply reply;
    ExtensionSpec spec;
    std::string err;
    if (!SpecFromJson(args, &spec, &err)) {
      reply.message = "load_inline: " + err;
      return reply;
    }
    auto b0 = Now();
    auto a = builder->Build(spec);
    rb->ms += MsSince(b0);
    ++rb->builds;
    if (a.ok() && !a->cache_hit) ++rb->compiled;
    if (!a.ok()) {
      reply.message = a.status().message();
      return reply;
    }
    if (a->environment) {
      rb->environment = a->environment;
      reply.message = a->environment->Message();
      return reply;
    }
    if (!a->ok) {
      const extract::InlineCall* match = nullptr;
      for (const auto& c : cand.inline_calls) {
        if (c.resolved && CanonicalJson(c.spec) == CanonicalJson(spec)) match = &c;
      }
      for (auto& d : BuildDiagnostics(*a, spec, match, text)) v.diagnostics.push_back(d);
      reply.message = a->error_text.substr(0, 4000);
      return reply;
    }
    reply.ok = true;
    reply.so_path = a->so_path.string();
    reply.module_name = a->module_name;
    return reply;
  };
}

}  // namespace kf::eval
