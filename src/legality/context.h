// What every Python rule needs: the parsed candidate, import aliases resolved to full paths,
// and a sink for located findings. Internal to legality.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "extract/extract.h"
#include "extract/python_parse.h"
#include "legality/legality.h"

namespace kf::legality {

using extract::ParsedModule;
using extract::Token;
using extract::TokenKind;

using extract::IsClose;
using extract::IsOp;
using extract::IsOpen;
bool IsName(const Token& t);  // a name that is not a keyword
bool IsKeyword(const Token& t, std::string_view kw);

class Context {
 public:
  // `c`, `opt` and `out` must outlive the context.
  Context(const extract::Candidate& c, const LegalityOptions& opt, std::vector<Diagnostic>* out);

  // Parses the candidate's code; false when it does not parse (extract reported that already).
  bool Parse();

  const ParsedModule& m() const { return m_; }
  const std::vector<Token>& t() const { return m_.tokens; }
  const LegalityOptions& opt() const { return opt_; }

  // A non-keyword name that is not an attribute of something (`x` in `x.y`, not `y`).
  bool IsChainStart(int i) const;
  // The dotted name starting at token i ("a.b.c"); *end = one past its last token.
  std::string Chain(int i, int* end) const;
  // The chain with its first name replaced by what the candidate bound it to through imports
  // and plain aliases (`F = torch.nn.functional`): "F.relu" -> "torch.nn.functional.relu".
  // Returns "" when the first name is not bound to anything imported.
  std::string Canonical(const std::string& chain) const;
  // What `alias` (a first name) resolves to, or "".
  std::string AliasTarget(const std::string& alias) const;
  // Any binding of `name` by the candidate (def, class, import, assignment, parameter, loop).
  bool Binds(const std::string& name) const { return bound_.count(name) > 0; }
  // `from torch import *` (or torch.nn.functional, ...) somewhere in the candidate.
  bool StarImportsTorch() const { return star_torch_; }
  // Token index just past the end of statement `si`.
  int StatementEnd(int si) const { return m_.statements[si].end; }

  // Records a finding (an error unless told); `line` is a line of the code (mapped here to the
  // submitted text).
  void Report(const char* code, int line, int col, std::string message, std::string hint,
              Severity severity = Severity::kError);
  // Records a finding already located in the submitted text (kernel-source findings).
  void ReportSubmitted(const char* code, int line, int col, std::string message, std::string hint,
                       Severity severity = Severity::kError);

  // A CUDA graph in a kernel source (`use`: "kernel source uses cudaGraphLaunch"; `line` a
  // line of the submitted text): cheat H07, or the note H07_graph where the job allows graphs
  // (LegalityOptions::allow_graphs).
  void ReportKernelGraph(int line, int col, const std::string& use);

  const extract::Candidate& candidate() const { return c_; }
  bool triton() const { return c_.family == backend::Family::kTriton; }
  // A rule's hint in the words of the candidate's family (common/rules.h).
  std::string Hint(const char* code) const;

 private:
  std::string CodeLine(int line) const;
  void CollectBindings();

  const extract::Candidate& c_;
  const LegalityOptions& opt_;
  std::vector<Diagnostic>* out_;
  ParsedModule m_;
  std::map<std::string, std::string> alias_;  // first name -> full path
  std::set<std::string> bound_;
  bool star_torch_ = false;
};

// Rule passes, each appending to the context's findings.
void CheckPythonRules(Context& ctx);    // H03 H07 H08 H13 H15 H16 H17 H20, evasion (H01)
void CheckForward(Context& ctx);        // H01
void CheckKernelSources(Context& ctx);  // H03 H04 H07 H13 H15 H16 H17 H18 H20 in C++/CUDA
void CheckTritonKernels(Context& ctx);  // H04 H13 in @triton.jit bodies (triton family)

}  // namespace kf::legality
