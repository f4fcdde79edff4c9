// The H01 analysis: which code ModelNew.forward reaches, which of its values are tensors, and
// where that code computes with PyTorch. Internal to legality; the class is split in two
// files: forward_values.cc (what an expression is) and forward_rules.cc (reach and report).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "legality/context.h"

namespace kf::legality {

// What a name or expression holds, as far as the rules can tell.
enum class Kind {
  kUnknown,
  kTensor,  // a torch.Tensor (inputs, parameters, allocations, extension results)
  kLayer,   // an nn module or a torch compute function: calling it computes in PyTorch
  kExt,     // the candidate's own extension (a load_inline result) or one of its functions
  kClass,   // an instance of a class the candidate defines (its methods are reached)
  kPlain,   // a number, string, container or metadata value
  kPath,    // an imported module path (internal to evaluation)
};

// A function or method reached from ModelNew.forward.
struct Scope {
  std::string label;  // "ModelNew.forward", "ModelNew._launch", "function helper"
  std::string cls;    // owning class, "" for module-level functions
  std::string name;   // the def's name ("forward", "_launch", "helper")
  int header = -1;    // the def statement
  int first = 0;      // body statements [first, last]
  int last = -1;
  std::vector<std::string> params;  // without self/cls
  std::set<std::string> tensor_params;
  std::map<std::string, Kind> locals;
};

class ForwardRules {
 public:
  explicit ForwardRules(Context& ctx);
  void Run();

 private:
  // forward_values.cc
  // Start of the primary expression that ends just before token `op`, or -1.
  int PrimaryStartBefore(int op, int lo) const;
  // End (exclusive) of the primary starting at `*begin` (unary operators skipped, *begin
  // moved past them), not beyond `hi`.
  int PrimaryEnd(int* begin, int hi) const;
  Kind PrimaryKind(int b, int e, const Scope& s) const;
  bool ExprIsTensor(int b, int e, const Scope& s) const;
  Kind NameKind(const std::string& name, const Scope& s) const;
  void ComputeLocals(Scope* s) const;
  std::string Text(int b, int e) const;

  // forward_rules.cc
  void CollectExtensions();
  void CollectSelfAttributes(const extract::ClassDef& k);
  Scope* Reach(const std::string& cls, const extract::FunctionDef& d);
  void ReachFrom(Scope* s);
  void PropagateTensorParams(const Scope& s);
  void Report(const Scope& s);
  void ReportToken(const Scope& s, int i, int sb, int se);
  void ReportOperator(const Scope& s, int i, int sb, int se);
  void Flag(const Scope& s, int tok, const std::string& what);
  const extract::ClassDef* FindClass(const std::string& name) const;
  const extract::FunctionDef* FindFunction(const std::string& name) const;
  // Whether `chain` (a call's callee) is torch's extension builder (load_inline, load).
  bool IsBuildCall(const std::string& chain) const;

  // forward_guards.cc: branches chosen only by whether the extension built.
  void CollectGuards();
  void MarkGuardedBranches(const Scope& s);
  void MarkGuardedScopes();
  int LastOf(int header) const;
  bool BuildsExtension(int first, int last) const;
  std::string SimpleTarget(int stmt) const;
  bool GuardOnly(int b, int e) const;
  int HeaderColon(int stmt) const;

  Context& ctx_;
  const std::vector<Token>& t_;
  std::set<std::string> ext_names_;
  std::map<std::string, Kind> self_attrs_;
  std::map<std::string, std::string> self_classes_;  // self.X -> candidate class name
  // The class ModelNew names (extract::Candidate::model_new_class), and its candidate bases.
  std::string model_;
  std::vector<std::string> family_;
  std::vector<std::string> torch_bases_;  // ModelNew's nn bases other than Module
  std::map<int, Scope> scopes_;           // by def statement
  std::vector<int> order_;                // scopes_ keys in reach order
  // Build guards: names ("ext") and attributes ("self.use_kernel") fixed once the module and
  // ModelNew are loaded, by whether the extension built; statements of a branch that only
  // they choose, mapped to the line of the `if` that chooses it.
  std::set<std::string> guards_;
  std::map<int, int> guarded_;
  int current_stmt_ = -1;  // the statement Report is in
};

}  // namespace kf::legality
