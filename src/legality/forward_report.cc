// H01 findings in one reached scope: PyTorch calls, layer calls, tensor compute methods and
// tensor operators.
#include "legality/forward.h"
#include "legality/names.h"

namespace kf::legality {
namespace {

bool IsArithmetic(const std::string& op) {
  static const std::set<std::string> kOps = {
      "+",   "-",  "*",   "/",  "//", "%",  "**",  "&",   "|",  "^",  "<<",
      ">>",  "<",  ">",   "<=", ">=", "==", "!=",  "+=",  "-=", "*=", "/=",
      "//=", "%=", "**=", "&=", "|=", "^=", "<<=", ">>=", "~"};
  return kOps.count(op) > 0;
}

bool StartsWith(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// Libraries whose every call in forward computes outside the candidate's extension. For a
// Triton candidate, triton's grid helpers are plumbing (its kernels are launched by name).
bool IsForeignCompute(const std::string& canon, bool triton) {
  if (triton && (canon == "triton.cdiv" || canon == "triton.next_power_of_2")) return false;
  for (const char* lib : {"scipy", "cupy", "numba", "jax", "tensorflow", "triton", "tinygrad"}) {
    const std::string l = lib;
    if (canon == l || StartsWith(canon, l + ".")) return true;
  }
  return false;
}

}  // namespace

void ForwardRules::Report(const Scope& s) {
  const auto& st = ctx_.m().statements;
  for (int si = s.first; si <= s.last; ++si) {
    current_stmt_ = si;
    const int sb = st[si].begin, se = st[si].end;
    for (int i = sb; i < se; ++i) {
      if (t_[i].kind == TokenKind::kOp) {
        ReportOperator(s, i, sb, se);
      } else {
        ReportToken(s, i, sb, se);
      }
    }
  }
}

void ForwardRules::ReportToken(const Scope& s, int i, int sb, int se) {
  const auto& partner = ctx_.m().partner;
  const bool call_next = [&](int k) { return k < se && IsOp(t_[k], "("); }(i + 1);
  // `.name(` where name computes: a tensor method, unless the receiver is the extension, a
  // module path (handled below by its full name) or a plain value.
  if (i >= 2 && IsOp(t_[i - 1], ".") && call_next && IsComputeName(t_[i].text)) {
    const int rb = PrimaryStartBefore(i - 1, sb);
    if (rb < 0) return;
    const std::string root = t_[rb].text;
    const Kind rk = PrimaryKind(rb, i - 1, s);
    const bool ext = ext_names_.count(root) > 0 || rk == Kind::kExt ||
                     (root == "self" && rb + 2 < i && self_attrs_.count(t_[rb + 2].text) &&
                      self_attrs_.at(t_[rb + 2].text) == Kind::kExt);
    const bool module =
        ctx_.IsChainStart(rb) && !ctx_.Canonical(root).empty() && NameKind(root, s) == Kind::kPath;
    if (ext || module || rk == Kind::kPlain || rk == Kind::kClass) return;
    Flag(s, i, "calls ." + t_[i].text + "() on " + Text(rb, i - 1));
    return;
  }
  if (!ctx_.IsChainStart(i)) return;
  if (i + 1 < se && IsOp(t_[i + 1], "=") && i > sb &&
      (IsOp(t_[i - 1], "(") || IsOp(t_[i - 1], ","))) {
    return;  // keyword argument name
  }
  int end = 0;
  const std::string chain = ctx_.Chain(i, &end);
  const bool call = end < se && IsOp(t_[end], "(");
  const std::string& name = t_[i].text;
  // Submodules and stored torch functions: self.conv(x), self.layers[0](x), self.conv.forward(x).
  if (name == "self" && i + 2 < se && IsOp(t_[i + 1], ".")) {
    const std::string& attr = t_[i + 2].text;
    auto it = self_attrs_.find(attr);
    if (it == self_attrs_.end() || it->second != Kind::kLayer) return;
    int k = i + 3;
    if (k < se && IsOp(t_[k], "[") && partner[k] > k) k = partner[k] + 1;
    const bool direct = k < se && IsOp(t_[k], "(");
    const bool method = k + 2 < se && IsOp(t_[k], ".") && IsOp(t_[k + 2], "(") &&
                        !IsModuleBookkeeping(t_[k + 1].text);
    if (direct || method) {
      Flag(s, i, "calls the PyTorch module self." + attr + (method ? "." + t_[k + 1].text : ""));
    }
    return;
  }
  const Kind nk = NameKind(name, s);
  if (nk == Kind::kLayer && call) {
    Flag(s, i, "calls the PyTorch module " + name);
    return;
  }
  std::string canon = ctx_.Canonical(chain);
  if (canon.empty() && !ctx_.Binds(name) && ctx_.StarImportsTorch() && IsComputeName(chain)) {
    canon = "torch." + chain;  // `from torch import *`
  }
  const std::string shown = chain == canon || canon.empty() ? chain : chain + " (" + canon + ")";
  auto tensor_arg = [&] { return call && ExprIsTensor(end + 1, partner[end], s); };
  if (canon == "torch" || StartsWith(canon, "torch.")) {
    if (BannedPythonPath(canon, ctx_.opt().fp32_problem) || AllowedTorchPath(canon)) return;
    const std::string last = canon.substr(canon.rfind('.') + 1);
    if (call) {
      Flag(s, i, "calls " + shown);
    } else if (IsComputeName(last)) {
      Flag(s, i, "uses " + shown);
    }
  } else if (IsForeignCompute(canon, ctx_.triton()) && call) {
    Flag(s, i, "calls " + shown);
  } else if ((canon == "numpy" || StartsWith(canon, "numpy.") || StartsWith(canon, "operator.")) &&
             tensor_arg()) {
    Flag(s, i, "calls " + shown + " on a tensor");
  } else if (canon.empty() && !ctx_.Binds(name) && end == i + 1 && tensor_arg()) {
    static const std::set<std::string> kBuiltins = {"sum",   "abs",    "max",    "min", "pow",
                                                    "round", "divmod", "sorted", "map"};
    if (kBuiltins.count(name)) Flag(s, i, "calls " + name + "() on a tensor");
  }
}

void ForwardRules::ReportOperator(const Scope& s, int i, int sb, int se) {
  const std::string& op = t_[i].text;
  if (op == "@" || op == "@=") {
    if (i != sb) Flag(s, i, "uses the matrix-multiply operator " + op);
    return;
  }
  if (!IsArithmetic(op)) return;
  const Token* prev = i > sb ? &t_[i - 1] : nullptr;
  const bool unary = prev == nullptr ||
                     (prev->kind == TokenKind::kOp && !IsOp(*prev, ")") && !IsOp(*prev, "]") &&
                      !IsOp(*prev, "}")) ||
                     (prev->kind == TokenKind::kName && extract::IsPythonKeyword(prev->text) &&
                      prev->text != "None" && prev->text != "True" && prev->text != "False");
  if (unary && op != "-" && op != "+" && op != "~") return;  // *args, **kwargs
  int rb = i + 1;
  const int re = PrimaryEnd(&rb, se);
  if (re > rb && PrimaryKind(rb, re, s) == Kind::kTensor) {
    Flag(s, i, "applies " + op + " to the tensor " + Text(rb, re));
    return;
  }
  if (unary) return;
  const int lb = PrimaryStartBefore(i, sb);
  if (lb >= 0 && PrimaryKind(lb, i, s) == Kind::kTensor) {
    Flag(s, i, "applies " + op + " to the tensor " + Text(lb, i));
  }
}

}  // namespace kf::legality
