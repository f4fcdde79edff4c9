// extract: turns a submitted candidate (a whole file or a model's raw reply) into the Python
// source to run, decides its kernel family (load_inline or Triton), and finds its kernels:
// every torch.utils.cpp_extension.load_inline call with its arguments resolved statically where
// possible, and every @triton.jit function. Pure C++, no Python: our own tokenizer and a small
// parser. Every finding is a Diagnostic located in the candidate as submitted.
//
// Thread-safety: all functions are pure and may be called from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.h"
#include "common/diagnostic.h"
#include "common/extension_spec.h"
#include "extract/triton.h"

namespace kf::extract {

// One source string passed to load_inline, with where each of its lines came from.
struct SourceText {
  std::string text;
  // line_map[i] = 1-based line in the submitted text of line i+1 of `text`; 0 when unknown
  // (e.g. text produced by concatenating names whose origin is lost). Same length as the
  // number of lines in `text` (a trailing line without '\n' counts).
  std::vector<int> line_map;
};

// One load_inline call site.
struct InlineCall {
  int line = 0;                          // 1-based line (submitted text) of the call
  bool resolved = false;                 // every argument was resolved statically
  std::string unresolved_why;            // when !resolved: which argument and why, for logs
  ExtensionSpec spec;                    // valid when resolved
  std::vector<SourceText> cpp_sources;   // same order as spec.cpp_sources, with line maps
  std::vector<SourceText> cuda_sources;  // same order as spec.cuda_sources
};

struct Candidate {
  std::string code;         // the Python program to run (the file, or the first fenced block)
  int first_line = 1;       // line in the submitted text where `code` starts
  bool from_reply = false;  // code came out of a fenced block of a model reply
  bool has_model_new = false;
  int model_new_line = 0;
  // The module-level class that `ModelNew` names: "ModelNew" itself, or the class a module-level
  // `ModelNew = Name` binds (a file that defines `class Model` with its kernels and ends with
  // `ModelNew = Model`, as METR's KernelBench solutions do; the host instantiates ModelNew).
  std::string model_new_class = "ModelNew";
  std::vector<InlineCall> inline_calls;
  // The kernel family: the one asked for, else triton when the candidate defines @triton.jit
  // kernels and calls no load_inline, else load_inline (what every candidate was before).
  backend::Family family = backend::Family::kLoadInline;
  // Its @triton.jit functions, in lines of `code` (not of the submitted text), whatever the
  // family.
  std::vector<TritonKernel> triton_kernels;
  // Errors here mean status format_error; warnings and infos may accompany a good candidate.
  std::vector<Diagnostic> diagnostics;

  bool ok() const;  // no error-severity diagnostics
};

// The whole extract stage. Never fails: problems become diagnostics with code one of
//   "no_code_block"  (a reply with prose but no fenced block and no Python in it),
//   "syntax_error"   (tokenizer or parser error: unterminated string, unbalanced bracket,
//                     bad indentation, ... with line and column),
//   "no_model_new"   (no top-level `class ModelNew`, nor `ModelNew = <a top-level class>`),
//   "no_kernel"      (no load_inline call anywhere; for the triton family: no @triton.jit
//                     function).
// `family`: the family the job names (--family); nothing: detect it.
Candidate Extract(std::string_view submitted,
                  std::optional<backend::Family> family = std::nullopt);

// Exposed for tests and for the static rules.
// The candidate inside a model's reply: the first fenced code block (``` or ~~~, any info
// string) that defines `class ModelNew`, else the first fenced block; with the 1-based line
// where its body starts. Returns false when the text has no fenced block.
bool FirstFencedBlock(std::string_view text, std::string* body, int* body_first_line);

}  // namespace kf::extract
