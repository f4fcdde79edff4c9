// Build guards (issue 28): model-written kernels often build their extension inside a
// try/except and keep a PyTorch fallback for when the build fails (`if ext is None: return
// torch.relu(x)`, `if self.use_kernel: ... else: ...`). Which branch runs is fixed once the
// module and ModelNew are loaded, so what the profiled forward runs is what every call runs:
// PyTorch compute in a branch that only the build chooses is judged by what runs (the profiled
// forward's ATen ops under --policy strict, H01, and the ablation, H02), not by its syntax.
//
// A guard is a name or `self.attr` assigned in a try statement that builds the extension (its
// body or its handlers), or assigned elsewhere from guards alone (`self.use = ext is not None`),
// and never assigned by the code forward reaches. Nothing is deferred in a candidate that could
// change a guard behind the analysis's back (setattr, __dict__, vars, globals, global, forward
// hooks).
#include "legality/forward.h"

namespace kf::legality {
namespace {

bool IsBranchKeyword(const Token& t) {
  return IsKeyword(t, "except") || IsKeyword(t, "else") || IsKeyword(t, "finally");
}

}  // namespace

int ForwardRules::LastOf(int header) const {
  const auto& st = ctx_.m().statements;
  int last = header;
  while (last + 1 < static_cast<int>(st.size()) && st[last + 1].line <= st[header].end_line) {
    ++last;
  }
  return last;
}

// The ':' that ends a block header (a body may follow it on the same line).
int ForwardRules::HeaderColon(int stmt) const {
  const auto& s = ctx_.m().statements[stmt];
  const auto& partner = ctx_.m().partner;
  for (int i = s.begin; i < s.end; ++i) {
    if (IsOpen(t_[i]) && partner[i] > i) {
      i = partner[i];
      continue;
    }
    if (IsOp(t_[i], ":")) return i;
  }
  return -1;
}

bool ForwardRules::BuildsExtension(int first, int last) const {
  const auto& m = ctx_.m();
  // A function or method of the candidate whose own body calls the builder (one level down).
  auto body_builds = [&](const extract::FunctionDef& d) {
    const int end = LastOf(d.stmt);
    for (int k = d.stmt + 1; k <= end; ++k) {
      for (int j = m.statements[k].begin; j < m.statements[k].end; ++j) {
        int e = 0;
        if (ctx_.IsChainStart(j) && IsBuildCall(ctx_.Chain(j, &e))) return true;
      }
    }
    return false;
  };
  for (int si = first; si <= last && si < static_cast<int>(m.statements.size()); ++si) {
    for (int i = m.statements[si].begin; i < m.statements[si].end; ++i) {
      if (!ctx_.IsChainStart(i)) continue;
      int end = 0;
      const std::string chain = ctx_.Chain(i, &end);
      if (IsBuildCall(chain) || ext_names_.count(chain)) return true;
      if (end >= m.statements[si].end || !IsOp(t_[end], "(")) continue;
      const std::string name = chain.substr(chain.rfind('.') + 1);
      if (chain.find('.') == std::string::npos) {
        if (const extract::FunctionDef* f = FindFunction(name); f && body_builds(*f)) return true;
      }
      if (chain.rfind("self.", 0) == 0) {
        for (const auto& k : m.classes) {
          for (const auto& d : k.methods) {
            if (d.name == name && body_builds(d)) return true;
          }
        }
      }
    }
  }
  return false;
}

// "name" for `name = ...`, "self.attr" for `self.attr = ...`, "" otherwise.
std::string ForwardRules::SimpleTarget(int stmt) const {
  const auto& s = ctx_.m().statements[stmt];
  const int b = s.begin, e = s.end;
  if (e - b >= 3 && IsName(t_[b]) && IsOp(t_[b + 1], "=")) return t_[b].text;
  if (e - b >= 5 && t_[b].text == "self" && IsOp(t_[b + 1], ".") && IsName(t_[b + 2]) &&
      IsOp(t_[b + 3], "=")) {
    return "self." + t_[b + 2].text;
  }
  return "";
}

// Tokens [b, e) test guards alone, at least one: guard names, `X.is_cuda`,
// torch.cuda.is_available(), None, True, False, not, and, or, is, ==, != and parentheses.
bool ForwardRules::GuardOnly(int b, int e) const {
  bool guard = false;
  if (b >= e) return false;
  for (int i = b; i < e; ++i) {
    const Token& tk = t_[i];
    if (IsOp(tk, "(") || IsOp(tk, ")") || IsOp(tk, "==") || IsOp(tk, "!=")) continue;
    if (IsKeyword(tk, "not") || IsKeyword(tk, "and") || IsKeyword(tk, "or") ||
        IsKeyword(tk, "is") || IsKeyword(tk, "None") || IsKeyword(tk, "True") ||
        IsKeyword(tk, "False")) {
      continue;
    }
    if (!ctx_.IsChainStart(i)) return false;
    int end = 0;
    const std::string chain = ctx_.Chain(i, &end);
    if (guards_.count(chain)) {
      guard = true;
    } else if (ctx_.Canonical(chain) == "torch.cuda.is_available") {
      if (end + 1 >= e || !IsOp(t_[end], "(") || !IsOp(t_[end + 1], ")")) return false;
      end += 2;
    } else if (chain.size() <= 8 || chain.compare(chain.size() - 8, 8, ".is_cuda") != 0) {
      return false;
    }
    i = end - 1;
  }
  return guard;
}

void ForwardRules::CollectGuards() {
  const auto& m = ctx_.m();
  const auto& st = m.statements;
  const int n = static_cast<int>(st.size());
  // What a try statement that builds the extension assigns, in its body and its handlers.
  for (int ti = 0; ti < n; ++ti) {
    if (!st[ti].is_header || !IsKeyword(t_[st[ti].begin], "try")) continue;
    const int last = LastOf(ti);
    if (!BuildsExtension(ti + 1, last)) continue;
    int stop = last;
    for (int k = last + 1; k < n && st[k].parent == st[ti].parent && st[k].is_header &&
                           IsBranchKeyword(t_[st[k].begin]);) {
      stop = LastOf(k);
      k = stop + 1;
    }
    for (int si = ti + 1; si <= stop; ++si) {
      const std::string target = SimpleTarget(si);
      if (!target.empty()) guards_.insert(target);
    }
  }
  if (guards_.empty()) return;
  // Ways to change a guard that the analysis cannot follow: defer nothing.
  for (const Token& tk : t_) {
    static const std::set<std::string> kUnfollowed = {"setattr",
                                                      "__setattr__",
                                                      "__dict__",
                                                      "vars",
                                                      "globals",
                                                      "locals",
                                                      "__globals__",
                                                      "register_forward_pre_hook",
                                                      "register_forward_hook"};
    if (kUnfollowed.count(tk.text) || IsKeyword(tk, "global") || IsKeyword(tk, "nonlocal")) {
      guards_.clear();
      return;
    }
  }
  // What is assigned from guards alone, a few rounds.
  for (int round = 0; round < 3; ++round) {
    for (int si = 0; si < n; ++si) {
      const std::string target = SimpleTarget(si);
      if (target.empty() || guards_.count(target)) continue;
      const int value = st[si].begin + (target.rfind("self.", 0) == 0 ? 4 : 2);
      if (GuardOnly(value, st[si].end)) guards_.insert(target);
    }
  }
  // A guard the reached code assigns (or may: a tuple target, `for`, `with ... as`) is not
  // fixed at load.
  for (int key : order_) {
    const Scope& s = scopes_.at(key);
    for (int si = s.first; si <= s.last; ++si) {
      for (int i = st[si].begin; i < st[si].end; ++i) {
        if (!ctx_.IsChainStart(i)) continue;
        int end = 0;
        const std::string chain = ctx_.Chain(i, &end);
        if (!guards_.count(chain)) continue;
        const bool before =
            i > st[si].begin && (IsKeyword(t_[i - 1], "as") || IsKeyword(t_[i - 1], "for"));
        const bool after = end < st[si].end && t_[end].kind == TokenKind::kOp &&
                           (t_[end].text == "," ||
                            (t_[end].text.back() == '=' && t_[end].text != "==" &&
                             t_[end].text != "!=" && t_[end].text != "<=" && t_[end].text != ">="));
        if (before || after) guards_.erase(chain);
      }
    }
  }
}

// The statements of each if/elif/else chain in `s` whose every condition tests guards alone.
void ForwardRules::MarkGuardedBranches(const Scope& s) {
  if (guards_.empty()) return;
  const auto& st = ctx_.m().statements;
  for (int si = s.first; si <= s.last; ++si) {
    if (!st[si].is_header || !IsKeyword(t_[st[si].begin], "if")) continue;
    std::vector<int> headers = {si};
    int k = LastOf(si) + 1;
    while (k <= s.last && st[k].parent == st[si].parent && st[k].is_header &&
           (IsKeyword(t_[st[k].begin], "elif") || IsKeyword(t_[st[k].begin], "else"))) {
      headers.push_back(k);
      k = LastOf(k) + 1;
    }
    bool all = true;
    for (int h : headers) {
      if (IsKeyword(t_[st[h].begin], "else")) continue;
      const int colon = HeaderColon(h);
      all = all && colon > st[h].begin && GuardOnly(st[h].begin + 1, colon);
    }
    if (!all) continue;
    for (int h : headers) {
      for (int b = h; b <= LastOf(h); ++b) guarded_.emplace(b, st[si].line);
    }
  }
}

// A function or method that reached code calls only from guarded branches is a fallback too
// (`else: return self._fallback(x)`): its statements are guarded by the same `if`.
void ForwardRules::MarkGuardedScopes() {
  if (guarded_.empty()) return;
  const auto& st = ctx_.m().statements;
  for (int round = 0; round < 3; ++round) {
    for (int key : order_) {
      const Scope& callee = scopes_.at(key);
      if (guarded_.count(callee.first)) continue;
      if (callee.name == "forward" || callee.name == "__call__") continue;
      int line = -1;
      bool referenced = false, only_guarded = true;
      for (int other : order_) {
        const Scope& s = scopes_.at(other);
        for (int si = s.first; si <= s.last; ++si) {
          for (int i = st[si].begin; i < st[si].end; ++i) {
            if (t_[i].text != callee.name) continue;
            const bool method = i >= 2 && IsOp(t_[i - 1], ".") && t_[i - 2].text == "self";
            const bool function = callee.cls.empty() && ctx_.IsChainStart(i);
            if (!(callee.cls.empty() ? function : method)) continue;
            referenced = true;
            auto g = guarded_.find(si);
            if (g == guarded_.end()) {
              only_guarded = false;
            } else {
              line = g->second;
            }
          }
        }
      }
      if (!referenced || !only_guarded) continue;
      for (int si = callee.first; si <= callee.last; ++si) guarded_.emplace(si, line);
    }
  }
}

}  // namespace kf::legality
