#include "extract/load_inline.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace kf::extract {
namespace {

// load_inline's parameters in positional order, as the kforge brief fixes them.
constexpr std::array<std::string_view, 15> kParams = {"name",
                                                      "cpp_sources",
                                                      "cuda_sources",
                                                      "functions",
                                                      "extra_cflags",
                                                      "extra_cuda_cflags",
                                                      "extra_ldflags",
                                                      "extra_include_paths",
                                                      "build_directory",
                                                      "verbose",
                                                      "with_cuda",
                                                      "is_python_module",
                                                      "with_pytorch_error_handling",
                                                      "keep_intermediates",
                                                      "use_pch"};
enum Param {
  kName,
  kCppSources,
  kCudaSources,
  kFunctions,
  kExtraCflags,
  kExtraCudaCflags,
  kExtraLdflags,
  kExtraIncludePaths,
  kBuildDirectory,
  kVerbose,
  kWithCuda,
  kIsPythonModule,
  kWithPytorchErrorHandling,
  kKeepIntermediates,
  kUsePch,
};
// Keyword-only in newer torch releases; accepted when they cannot change the build.
constexpr std::array<std::string_view, 2> kExtraKeywords = {"no_implicit_headers", "sycl_sources"};

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// A str or a list of str (None: nothing) as load_inline accepts for sources and flags.
bool StringList(const Value& v, std::vector<LinedString>* out) {
  if (v.kind == Value::Kind::kNone) return true;
  if (v.kind == Value::Kind::kStr) {
    out->push_back(v.str);
    return true;
  }
  if (v.kind != Value::Kind::kList) return false;
  for (const Value& item : v.items) {
    if (item.kind != Value::Kind::kStr) return false;
    out->push_back(item.str);
  }
  return true;
}

std::vector<std::string> Texts(const std::vector<LinedString>& v) {
  std::vector<std::string> out;
  out.reserve(v.size());
  for (const LinedString& s : v) out.push_back(s.text);
  return out;
}

}  // namespace

std::vector<std::string> LoadInlineNames(const ParsedModule& m) {
  std::vector<std::string> names = {"load_inline"};
  for (const Import& im : m.imports) {
    if (im.name == "load_inline") names.push_back(im.alias);
  }
  for (const Assignment& a : m.assignments) {
    if (a.scope != -1 || a.value_begin < 0 || (a.value_end - a.value_begin) % 2 == 0) continue;
    std::string dotted;
    bool plain = true;
    for (int i = a.value_begin; i < a.value_end && plain; ++i) {
      const Token& t = m.tokens[i];
      const bool want_name = (i - a.value_begin) % 2 == 0;
      plain = want_name ? t.kind == TokenKind::kName : (t.kind == TokenKind::kOp && t.text == ".");
      dotted += t.text;
    }
    if (plain && (EndsWith(dotted, ".load_inline") ||
                  std::find(names.begin(), names.end(), dotted) != names.end())) {
      names.push_back(a.name);
    }
  }
  return names;
}

bool IsLoadInlineCall(const Call& call, const std::vector<std::string>& names) {
  return EndsWith(call.callee, ".load_inline") ||
         std::find(names.begin(), names.end(), call.callee) != names.end();
}

ResolvedCall ResolveLoadInline(const ParsedModule& m, const Evaluator& eval, const Call& call) {
  ResolvedCall r;
  auto fail = [&](std::string why) {
    r.resolved = false;
    r.why = std::move(why);
    return r;
  };
  std::array<const Argument*, kParams.size()> bound{};
  size_t next_positional = 0;
  for (const Argument& a : call.args) {
    const int line = m.tokens[a.begin < call.rparen ? a.begin : call.lparen].line;
    if (a.star != 0) {
      return fail(std::string(a.star == 1 ? "*" : "**") + "-unpacked arguments at line " +
                  std::to_string(line));
    }
    size_t idx = next_positional;
    if (a.keyword.empty()) {
      if (next_positional >= kParams.size()) return fail("too many positional arguments");
      ++next_positional;
    } else {
      idx = std::find(kParams.begin(), kParams.end(), a.keyword) - kParams.begin();
      if (idx == kParams.size()) {
        if (std::find(kExtraKeywords.begin(), kExtraKeywords.end(), a.keyword) ==
            kExtraKeywords.end()) {
          return fail("unexpected keyword argument '" + a.keyword + "'");
        }
        Value v;
        std::string why;
        if (a.keyword == "sycl_sources" &&
            (!eval.Eval(a.begin, a.end, call.stmt, &v, &why) || v.kind != Value::Kind::kNone)) {
          return fail("argument 'sycl_sources': SYCL sources are not supported");
        }
        continue;
      }
    }
    if (bound[idx] != nullptr) {
      return fail("multiple values for argument '" + std::string(kParams[idx]) + "'");
    }
    bound[idx] = &a;
  }

  std::string why;
  auto get = [&](Param p, Value* v) {
    *v = Value{};
    const Argument* a = bound[p];
    if (a == nullptr || eval.Eval(a->begin, a->end, call.stmt, v, &why)) return true;
    why = "argument '" + std::string(kParams[p]) + "': cannot resolve " + why;
    return false;
  };
  auto wrong_type = [&](Param p, const Value& v, const char* want) {
    return fail("argument '" + std::string(kParams[p]) + "' must be " + want + ", not " +
                KindName(v.kind));
  };
  Value v;
  if (bound[kName] == nullptr) return fail("missing required argument 'name'");
  if (bound[kCppSources] == nullptr) return fail("missing required argument 'cpp_sources'");
  if (!get(kName, &v)) return fail(why);
  if (v.kind != Value::Kind::kStr || v.str.text.empty()) {
    return wrong_type(kName, v, "a non-empty str");
  }
  r.spec.name = v.str.text;

  if (!get(kCppSources, &v)) return fail(why);
  if (!StringList(v, &r.cpp_sources)) return wrong_type(kCppSources, v, "a str or list of str");
  if (!get(kCudaSources, &v)) return fail(why);
  if (!StringList(v, &r.cuda_sources)) return wrong_type(kCudaSources, v, "a str or list of str");
  r.spec.cpp_sources = Texts(r.cpp_sources);
  r.spec.cuda_sources = Texts(r.cuda_sources);

  if (!get(kFunctions, &v)) return fail(why);
  std::vector<LinedString> names;
  if (v.kind == Value::Kind::kDict) {
    r.spec.functions = nlohmann::json::object();
    for (size_t i = 0; i < v.keys.size(); ++i) {
      const Value& doc = v.items[i];
      if (doc.kind != Value::Kind::kStr) return wrong_type(kFunctions, doc, "a dict of str");
      r.spec.functions[v.keys[i]] = doc.str.text;
    }
  } else if (!StringList(v, &names)) {
    return wrong_type(kFunctions, v, "a str, list of str or dict");
  } else if (v.kind != Value::Kind::kNone) {
    r.spec.functions = Texts(names);
  }

  const std::pair<Param, std::vector<std::string>*> flags[] = {
      {kExtraCflags, &r.spec.extra_cflags},
      {kExtraCudaCflags, &r.spec.extra_cuda_cflags},
      {kExtraLdflags, &r.spec.extra_ldflags},
      {kExtraIncludePaths, &r.spec.extra_include_paths}};
  for (const auto& [p, out] : flags) {
    std::vector<LinedString> list;
    if (!get(p, &v)) return fail(why);
    if (!StringList(v, &list)) return wrong_type(p, v, "a list of str");
    *out = Texts(list);
  }

  if (!get(kWithCuda, &v)) return fail(why);
  if (v.kind == Value::Kind::kBool) {
    r.spec.with_cuda = v.boolean;
  } else if (v.kind != Value::Kind::kNone) {
    return wrong_type(kWithCuda, v, "None or a bool");
  }
  if (!get(kWithPytorchErrorHandling, &v)) return fail(why);
  if (bound[kWithPytorchErrorHandling] != nullptr) {
    if (v.kind != Value::Kind::kBool) return wrong_type(kWithPytorchErrorHandling, v, "a bool");
    r.spec.with_pytorch_error_handling = v.boolean;
  }
  if (!get(kIsPythonModule, &v)) return fail(why);
  if (bound[kIsPythonModule] != nullptr && !(v.kind == Value::Kind::kBool && v.boolean)) {
    return fail("argument 'is_python_module': only True is supported (the build makes a module)");
  }
  r.resolved = true;
  return r;
}

}  // namespace kf::extract
