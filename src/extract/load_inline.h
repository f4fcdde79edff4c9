// Finding torch.utils.cpp_extension.load_inline calls in a parsed candidate and resolving their
// arguments into an ExtensionSpec. Internal to extract.
#pragma once

#include <string>
#include <vector>

#include "common/extension_spec.h"
#include "extract/python_parse.h"
#include "extract/resolve.h"

namespace kf::extract {

// The names through which `m` can call load_inline directly: "load_inline", aliases from
// `from ... import load_inline as x`, and module-level `x = <one of those, or *.load_inline>`.
std::vector<std::string> LoadInlineNames(const ParsedModule& m);

// True when `call` calls load_inline: its callee is one of `names` or any dotted name ending in
// ".load_inline" (torch.utils.cpp_extension.load_inline, cpp_extension.load_inline, an alias
// of the module, ...).
bool IsLoadInlineCall(const Call& call, const std::vector<std::string>& names);

struct ResolvedCall {
  bool resolved = false;
  std::string why;  // when !resolved: the argument and the reason
  ExtensionSpec spec;
  std::vector<LinedString> cpp_sources;  // lines are lines of the parsed text
  std::vector<LinedString> cuda_sources;
};

// Binds the call's arguments to load_inline's parameters (positional and keyword) and
// evaluates the ones that make up the ExtensionSpec. Arguments that do not affect the build
// (verbose, build_directory, keep_intermediates, use_pch, no_implicit_headers) need not resolve.
ResolvedCall ResolveLoadInline(const ParsedModule& m, const Evaluator& eval, const Call& call);

}  // namespace kf::extract
