// H01: everything ModelNew.forward runs (its own body, ModelNew's other methods, module-level
// functions and candidate classes it refers to, transitively) may allocate, take views and
// metadata, and call the candidate's extension; any other PyTorch call, layer call, tensor
// compute method or tensor operator is computing with PyTorch instead of the kernel.
#include <algorithm>

#include "common/rules.h"
#include "legality/forward.h"
#include "legality/names.h"

namespace kf::legality {

ForwardRules::ForwardRules(Context& ctx)
    : ctx_(ctx), t_(ctx.t()), model_(ctx.candidate().model_new_class) {}

const extract::ClassDef* ForwardRules::FindClass(const std::string& name) const {
  for (const auto& k : ctx_.m().classes) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

const extract::FunctionDef* ForwardRules::FindFunction(const std::string& name) const {
  // A Triton candidate's kernels are its own kernels, not code forward runs in Python: their
  // bodies are judged by the Triton rules (triton_rules.cc).
  if (ctx_.triton()) {
    for (const auto& k : ctx_.candidate().triton_kernels) {
      if (k.name == name) return nullptr;
    }
  }
  for (const auto& f : ctx_.m().functions) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

bool ForwardRules::IsBuildCall(const std::string& chain) const {
  return ctx_.Canonical(chain).find("cpp_extension.load") != std::string::npos ||
         chain == "load_inline";
}

void ForwardRules::CollectExtensions() {
  const auto& m = ctx_.m();
  // Names bound to a load_inline result, to an attribute of one (`fn = ext.relu`), or to a
  // call of a candidate function that returns one; a few rounds settle chains of these.
  std::set<std::string> factories;
  for (int round = 0; round < 3; ++round) {
    for (const extract::Assignment& a : m.assignments) {
      if (a.value_begin < 0 || !ctx_.IsChainStart(a.value_begin)) continue;
      int end = 0;
      const std::string chain = ctx_.Chain(a.value_begin, &end);
      const std::string root = chain.substr(0, chain.find('.'));
      const bool call = end < a.value_end && IsOp(t_[end], "(");
      const bool builds = call && (IsBuildCall(chain) || factories.count(root));
      if (builds || ext_names_.count(root)) ext_names_.insert(a.name);
    }
    for (const extract::FunctionDef& f : m.functions) {
      for (int si = f.stmt + 1; si < static_cast<int>(m.statements.size()); ++si) {
        const extract::Statement& s = m.statements[si];
        if (s.line > f.end_line) break;
        if (IsKeyword(t_[s.begin], "return") && s.begin + 1 < s.end &&
            ctx_.IsChainStart(s.begin + 1)) {
          int end = 0;
          const std::string chain = ctx_.Chain(s.begin + 1, &end);
          if (ext_names_.count(chain) ||
              ctx_.Canonical(chain).find("cpp_extension.load") != std::string::npos) {
            factories.insert(f.name);
          }
        }
      }
    }
  }
  ext_names_.insert(factories.begin(), factories.end());
  // Launching a Triton kernel (kernel[grid](...)) is calling the candidate's own kernel.
  if (ctx_.triton()) {
    for (const auto& k : ctx_.candidate().triton_kernels) ext_names_.insert(k.name);
  }
}

void ForwardRules::CollectSelfAttributes(const extract::ClassDef& k) {
  const auto& st = ctx_.m().statements;
  for (int si = k.stmt + 1; si < static_cast<int>(st.size()) && st[si].line <= k.end_line; ++si) {
    const int b = st[si].begin, e = st[si].end;
    if (e - b >= 5 && t_[b].text == "self" && IsOp(t_[b + 1], ".") && IsOp(t_[b + 3], "=")) {
      const std::string attr = t_[b + 2].text;
      Kind kind = Kind::kUnknown;
      if (ctx_.IsChainStart(b + 4)) {
        int end = 0;
        const std::string chain = ctx_.Chain(b + 4, &end);
        const std::string root = chain.substr(0, chain.find('.'));
        const std::string canon = ctx_.Canonical(chain);
        const std::string last = chain.substr(chain.rfind('.') + 1);
        const bool call = end < e && IsOp(t_[end], "(");
        if (ext_names_.count(root) || canon.find("cpp_extension.load") != std::string::npos) {
          kind = Kind::kExt;
        } else if (canon.rfind("torch.nn.", 0) == 0) {
          kind = last == "Parameter" || last == "Buffer" ? Kind::kTensor : Kind::kLayer;
        } else if (canon.rfind("torch.", 0) == 0) {
          kind = call ? Kind::kTensor : IsComputeName(last) ? Kind::kLayer : Kind::kUnknown;
        } else if (FindClass(root) != nullptr) {
          kind = Kind::kClass;
          self_classes_[attr] = root;
        } else if (root == "self" && chain.size() > 5) {
          const size_t dot2 = chain.find('.', 5);
          auto it = self_attrs_.find(chain.substr(5, dot2 - 5));
          if (it != self_attrs_.end() && it->second == Kind::kLayer && dot2 != std::string::npos) {
            kind = Kind::kTensor;  // self.w = self.linear.weight
          }
        }
      }
      if (kind != Kind::kUnknown || !self_attrs_.count(attr)) self_attrs_[attr] = kind;
    }
    // self.register_buffer("name", ...), self.register_parameter("name", ...)
    if (e - b >= 6 && t_[b].text == "self" && IsOp(t_[b + 1], ".") &&
        (t_[b + 2].text == "register_buffer" || t_[b + 2].text == "register_parameter") &&
        t_[b + 4].kind == TokenKind::kString) {
      self_attrs_[extract::DecodeStringLiteral(t_[b + 4].text).value] = Kind::kTensor;
    }
  }
}

Scope* ForwardRules::Reach(const std::string& cls, const extract::FunctionDef& d) {
  auto [it, added] = scopes_.try_emplace(d.stmt);
  Scope& s = it->second;
  if (!added) return nullptr;
  order_.push_back(d.stmt);
  s.cls = cls;
  s.header = d.stmt;
  s.label = cls.empty() ? "function " + d.name : (cls == model_ ? "ModelNew" : cls) + "." + d.name;
  if (s.label != "ModelNew.forward") s.label += " (reached from ModelNew.forward)";
  const auto& st = ctx_.m().statements;
  s.name = d.name;
  s.first = d.stmt + 1;
  s.last = LastOf(d.stmt);
  // Parameters: names at depth one of the header's parentheses.
  const extract::Statement& h = st[d.stmt];
  int lp = h.begin;
  while (lp < h.end && !IsOp(t_[lp], "(")) ++lp;
  const int rp = lp < h.end ? ctx_.m().partner[lp] : -1;
  bool first = true;
  for (int i = lp + 1; rp > lp && i < rp; ++i) {
    if (IsOpen(t_[i]) && ctx_.m().partner[i] > i) {
      i = ctx_.m().partner[i];
      continue;
    }
    const bool starts = IsOp(t_[i - 1], "(") || IsOp(t_[i - 1], ",") || IsOp(t_[i - 1], "*") ||
                        IsOp(t_[i - 1], "**");
    if (!IsName(t_[i]) || !starts) continue;
    const bool self = first && !cls.empty();
    first = false;
    if (self) continue;
    s.params.push_back(t_[i].text);
    // A literal default says the parameter is a setting, not a tensor.
    const bool literal_default = i + 2 < rp && IsOp(t_[i + 1], "=") &&
                                 (t_[i + 2].kind != TokenKind::kName || !IsName(t_[i + 2]));
    const bool entry = d.name == "forward" || d.name == "__call__";
    if (entry && cls == model_ && !literal_default && !IsOp(t_[i - 1], "**")) {
      s.tensor_params.insert(t_[i].text);
    }
  }
  return &s;
}

void ForwardRules::ReachFrom(Scope* s) {
  const auto& st = ctx_.m().statements;
  auto reach_class = [&](const std::string& name) {
    if (const extract::ClassDef* k = FindClass(name)) {
      for (const auto& d : k->methods) {
        if (Scope* n = Reach(k->name, d)) ReachFrom(n);
      }
    }
  };
  for (int si = s->first; si <= s->last; ++si) {
    for (int i = st[si].begin; i < st[si].end; ++i) {
      if (!ctx_.IsChainStart(i)) continue;
      const std::string& name = t_[i].text;
      if (name == "self" && i + 2 < st[si].end && IsOp(t_[i + 1], ".")) {
        const std::string& attr = t_[i + 2].text;
        // A method of the scope's own class, or of ModelNew's family.
        std::vector<std::string> classes = {s->cls};
        if (s->cls == model_) classes = family_;
        for (const std::string& c : classes) {
          const extract::ClassDef* k = FindClass(c);
          for (const auto& d : k ? k->methods : std::vector<extract::FunctionDef>{}) {
            if (d.name == attr) {
              if (Scope* n = Reach(c, d)) ReachFrom(n);
            }
          }
        }
        auto it = self_classes_.find(attr);
        if (it != self_classes_.end()) reach_class(it->second);
      } else if (const extract::FunctionDef* f = FindFunction(name)) {
        if (Scope* n = Reach("", *f)) ReachFrom(n);
      } else if (name != model_ && FindClass(name) != nullptr) {
        reach_class(name);
      }
    }
  }
}

void ForwardRules::PropagateTensorParams(const Scope& s) {
  const auto& st = ctx_.m().statements;
  const auto& partner = ctx_.m().partner;
  for (int si = s.first; si <= s.last; ++si) {
    for (int i = st[si].begin; i + 1 < st[si].end; ++i) {
      if (!IsOp(t_[i + 1], "(") || !IsName(t_[i]) || partner[i + 1] < 0) continue;
      // Callee: `name(` (a module function) or `self.name(` (a method of the family).
      Scope* callee = nullptr;
      for (auto& entry : scopes_) {
        Scope& other = entry.second;
        if (other.name != t_[i].text) continue;
        const bool method_call = i >= 2 && IsOp(t_[i - 1], ".") && t_[i - 2].text == "self";
        if ((other.cls.empty() && ctx_.IsChainStart(i)) || (!other.cls.empty() && method_call)) {
          callee = &other;
        }
      }
      if (callee == nullptr) continue;
      const int rp = partner[i + 1];
      int pos = 0;
      for (int ab = i + 2; ab < rp;) {
        int ae = ab;
        while (ae < rp && !IsOp(t_[ae], ",")) ae = IsOpen(t_[ae]) ? partner[ae] + 1 : ae + 1;
        std::string param;
        int vb = ab;
        if (ae - ab >= 2 && IsName(t_[ab]) && IsOp(t_[ab + 1], "=")) {
          param = t_[ab].text;
          vb = ab + 2;
        } else if (pos < static_cast<int>(callee->params.size())) {
          param = callee->params[pos++];
        }
        if (!param.empty() && ExprIsTensor(vb, ae, s)) callee->tensor_params.insert(param);
        ab = ae + 1;
      }
    }
  }
}

void ForwardRules::Flag(const Scope& s, int tok, const std::string& what) {
  if (auto g = guarded_.find(current_stmt_); g != guarded_.end()) {
    // A fallback for a failed build: whether it runs is known from what runs.
    ctx_.Report("H01", t_[tok].line, t_[tok].col,
                s.label + " " + what +
                    " in a branch that only the extension's build chooses "
                    "(the if at line " +
                    std::to_string(g->second + ctx_.candidate().first_line - 1) +
                    "): judged by what runs, the "
                    "profiled forward's PyTorch ops (H01) and the ablation (H02)",
                ctx_.Hint("H01"), Severity::kInfo);
    return;
  }
  ctx_.Report(
      "H01", t_[tok].line, t_[tok].col,
      s.label + " " + what + ": computing with PyTorch instead of your kernel is not allowed (H01)",
      ctx_.Hint("H01"));
}

void ForwardRules::Run() {
  const extract::ClassDef* model = FindClass(model_);
  if (model == nullptr) return;
  CollectExtensions();
  // ModelNew's bases: candidate classes join its family; nn classes other than Module bring
  // their own forward.
  for (const extract::ClassDef* k = model; k != nullptr;) {
    family_.push_back(k->name);
    const extract::Statement& h = ctx_.m().statements[k->stmt];
    const extract::ClassDef* next = nullptr;
    for (int i = h.begin + 2; i < h.end; ++i) {
      if (!ctx_.IsChainStart(i)) continue;
      int end = 0;
      const std::string chain = ctx_.Chain(i, &end);
      const std::string canon = ctx_.Canonical(chain);
      if (canon.rfind("torch.nn.", 0) == 0 && canon != "torch.nn.Module") {
        torch_bases_.push_back(canon);
      }
      const extract::ClassDef* base = FindClass(chain);
      if (base != nullptr && base != k &&
          std::find(family_.begin(), family_.end(), chain) == family_.end()) {
        next = base;
      }
      i = end - 1;
    }
    k = next;
  }
  for (auto it = family_.rbegin(); it != family_.rend(); ++it) {
    CollectSelfAttributes(*FindClass(*it));
  }
  bool has_forward = false;
  for (const std::string& c : family_) {
    for (const auto& d : FindClass(c)->methods) {
      static const std::set<std::string> kEntries = {"forward", "__call__", "__getattr__",
                                                     "__getattribute__", "_call_impl"};
      if (!kEntries.count(d.name)) continue;
      has_forward |= d.name == "forward";
      if (Scope* s = Reach(c, d)) ReachFrom(s);
    }
  }
  if (!has_forward && !torch_bases_.empty()) {
    ctx_.Report("H01", model->line, 1,
                "ModelNew inherits forward from " + torch_bases_[0] +
                    ": computing with PyTorch instead of your kernel is not allowed (H01)",
                ctx_.Hint("H01"));
  }
  for (int round = 0; round < 3; ++round) {
    for (int key : order_) ComputeLocals(&scopes_[key]);
    for (int key : order_) PropagateTensorParams(scopes_[key]);
  }
  CollectGuards();
  for (int key : order_) MarkGuardedBranches(scopes_[key]);
  MarkGuardedScopes();
  for (int key : order_) Report(scopes_[key]);
}

void CheckForward(Context& ctx) { ForwardRules(ctx).Run(); }

}  // namespace kf::legality
