// What an expression in forward-reachable code holds: enough type inference to tell tensor
// arithmetic (`x * 2`) from arithmetic on sizes (`x.size(0) * 2`).
#include "legality/forward.h"
#include "legality/names.h"

namespace kf::legality {
namespace {

bool IsAtom(const Token& t) {
  return IsName(t) || t.kind == TokenKind::kNumber || t.kind == TokenKind::kString ||
         IsKeyword(t, "None") || IsKeyword(t, "True") || IsKeyword(t, "False");
}

// torch functions that return something other than a tensor.
bool TorchReturnsPlain(const std::string& path) {
  const std::string last = path.substr(path.rfind('.') + 1);
  return path.rfind("torch.cuda.", 0) == 0 || IsMetadataName(last) || last == "is_tensor" ||
         last == "Size" || last == "finfo" || last == "iinfo" || last == "no_grad" ||
         last == "inference_mode" || last == "result_type" || last == "promote_types" ||
         last == "broadcast_shapes" || last == "get_default_dtype" || last == "is_complex";
}

// Attributes of an nn layer that are configuration, not parameters.
bool IsLayerConfig(const std::string& n) {
  static const std::set<std::string> kConfig = {"stride",
                                                "padding",
                                                "dilation",
                                                "groups",
                                                "kernel_size",
                                                "in_features",
                                                "out_features",
                                                "in_channels",
                                                "out_channels",
                                                "eps",
                                                "momentum",
                                                "normalized_shape",
                                                "num_features",
                                                "training",
                                                "output_padding",
                                                "padding_mode",
                                                "p",
                                                "inplace",
                                                "negative_slope",
                                                "dim",
                                                "affine",
                                                "track_running_stats",
                                                "num_groups",
                                                "elementwise_affine",
                                                "approximate"};
  return kConfig.count(n) > 0;
}

}  // namespace

std::string ForwardRules::Text(int b, int e) const {
  std::string s;
  for (int i = b; i < e && s.size() < 40; ++i) s += t_[i].text;
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

int ForwardRules::PrimaryStartBefore(int op, int lo) const {
  const auto& partner = ctx_.m().partner;
  int j = op - 1, start = -1;
  while (j >= lo) {
    if (IsClose(t_[j])) {
      const int p = partner[j];
      if (p < lo) break;
      start = p;
      const bool trailer =
          (IsOp(t_[p], "(") || IsOp(t_[p], "[")) && p - 1 >= lo &&
          (IsName(t_[p - 1]) || IsClose(t_[p - 1]) || t_[p - 1].kind == TokenKind::kString);
      if (!trailer) break;
      j = p - 1;
    } else if (IsAtom(t_[j])) {
      start = j;
      if (j - 2 >= lo && IsOp(t_[j - 1], ".")) {
        j -= 2;
      } else {
        break;
      }
    } else {
      break;
    }
  }
  return start;
}

int ForwardRules::PrimaryEnd(int* begin, int hi) const {
  const auto& partner = ctx_.m().partner;
  int k = *begin;
  while (k < hi && (IsOp(t_[k], "-") || IsOp(t_[k], "+") || IsOp(t_[k], "~") ||
                    IsKeyword(t_[k], "not") || IsKeyword(t_[k], "await"))) {
    ++k;
  }
  *begin = k;
  if (k >= hi) return k;
  if (IsOpen(t_[k])) {
    if (partner[k] < k) return k;
    k = partner[k] + 1;
  } else if (IsAtom(t_[k])) {
    ++k;
    while (k < hi && t_[k - 1].kind == TokenKind::kString && t_[k].kind == TokenKind::kString) {
      ++k;
    }
  } else {
    return k;
  }
  while (k < hi) {
    if (IsOp(t_[k], ".") && k + 1 < hi && t_[k + 1].kind == TokenKind::kName) {
      k += 2;
    } else if ((IsOp(t_[k], "(") || IsOp(t_[k], "[")) && partner[k] > k) {
      k = partner[k] + 1;
    } else {
      break;
    }
  }
  return std::min(k, hi);
}

Kind ForwardRules::NameKind(const std::string& name, const Scope& s) const {
  if (s.tensor_params.count(name)) return Kind::kTensor;
  auto it = s.locals.find(name);
  if (it != s.locals.end()) return it->second;
  if (ext_names_.count(name)) return Kind::kExt;
  if (!ctx_.Canonical(name).empty()) return Kind::kPath;
  return Kind::kUnknown;
}

Kind ForwardRules::PrimaryKind(int b, int e, const Scope& s) const {
  const auto& partner = ctx_.m().partner;
  if (b >= e) return Kind::kUnknown;
  Kind k = Kind::kUnknown;
  std::string path;
  int i = b + 1;
  bool function = false;  // a candidate function: its result is a tensor when fed tensors
  const Token& tk = t_[b];
  if (IsOp(tk, "(")) {
    if (partner[b] <= b) return Kind::kUnknown;
    k = ExprIsTensor(b + 1, partner[b], s) ? Kind::kTensor : Kind::kUnknown;
    i = partner[b] + 1;
  } else if (IsOpen(tk) || !IsName(tk)) {
    return Kind::kPlain;  // literals, lists, dicts
  } else if (tk.text == "self" && i + 1 < e && IsOp(t_[i], ".")) {
    auto it = self_attrs_.find(t_[i + 1].text);
    k = it == self_attrs_.end() ? Kind::kUnknown : it->second;
    for (const std::string& c : family_) {
      for (const auto& d : FindClass(c)->methods) function |= d.name == t_[i + 1].text;
    }
    i += 2;
  } else {
    k = NameKind(tk.text, s);
    function = k == Kind::kUnknown && FindFunction(tk.text) != nullptr;
    if (k == Kind::kPath) path = ctx_.Canonical(tk.text);
    static const std::set<std::string> kPlainBuiltins = {
        "len",   "int",    "float",   "range", "isinstance", "str", "bool",
        "tuple", "list",   "dict",    "set",   "enumerate",  "zip", "min",
        "max",   "divmod", "hasattr", "id",    "type"};
    if (k == Kind::kUnknown && kPlainBuiltins.count(tk.text) && !ctx_.Binds(tk.text)) {
      k = Kind::kPlain;
    }
  }
  while (i < e) {
    if (IsOp(t_[i], ".") && i + 1 < e) {
      const std::string& n = t_[i + 1].text;
      if (k == Kind::kTensor && IsMetadataName(n)) k = Kind::kPlain;
      if (k == Kind::kLayer) k = IsLayerConfig(n) ? Kind::kPlain : Kind::kTensor;
      if (k == Kind::kPath) path += "." + n;
      i += 2;
    } else if (IsOp(t_[i], "(") && partner[i] > i) {
      if (k == Kind::kPath) {
        k = path.rfind("torch.", 0) == 0 && !TorchReturnsPlain(path) ? Kind::kTensor
                                                                     : Kind::kUnknown;
      } else if (k == Kind::kExt || k == Kind::kLayer) {
        k = Kind::kTensor;
      } else if (function && ExprIsTensor(i + 1, partner[i], s)) {
        k = Kind::kTensor;
      }
      function = false;
      i = partner[i] + 1;
    } else if (IsOp(t_[i], "[") && partner[i] > i) {
      if (k == Kind::kPath) k = Kind::kUnknown;
      i = partner[i] + 1;
    } else {
      break;
    }
  }
  return k;
}

bool ForwardRules::ExprIsTensor(int b, int e, const Scope& s) const {
  for (int i = b; i < e;) {
    if (IsKeyword(t_[i], "lambda")) return false;
    int start = i;
    const int end = PrimaryEnd(&start, e);
    if (end <= start) {
      i = std::max(i + 1, start + 1);
      continue;
    }
    if (PrimaryKind(start, end, s) == Kind::kTensor) return true;
    i = end;
  }
  return false;
}

void ForwardRules::ComputeLocals(Scope* s) const {
  const auto& st = ctx_.m().statements;
  // Three rounds settle chains like `y = x.view(-1); z = y[0]` written in any order.
  for (int round = 0; round < 3; ++round) {
    for (int si = s->first; si <= s->last; ++si) {
      const extract::Statement& stmt = st[si];
      if (IsKeyword(t_[stmt.begin], "for")) {
        // `for layer in self.layers:` makes `layer` a layer.
        int in = stmt.begin + 1;
        while (in < stmt.end && !IsKeyword(t_[in], "in")) ++in;
        if (in + 1 < stmt.end && in == stmt.begin + 2 && IsName(t_[stmt.begin + 1])) {
          int start = in + 1;
          const int end = PrimaryEnd(&start, stmt.end - 1);
          if (PrimaryKind(start, end, *s) == Kind::kLayer) {
            s->locals[t_[stmt.begin + 1].text] = Kind::kLayer;
          }
        }
        continue;
      }
      // Targets are the top-level segments before each '='; the value is the last segment.
      std::vector<int> eqs;
      for (int i = stmt.begin; i < stmt.end; ++i) {
        if (IsOp(t_[i], "=") || IsOp(t_[i], "+=") || IsOp(t_[i], "-=") || IsOp(t_[i], "*=") ||
            IsOp(t_[i], "/=")) {
          eqs.push_back(i);
        }
        if (IsOpen(t_[i]) && ctx_.m().partner[i] > i) i = ctx_.m().partner[i];
      }
      if (eqs.empty()) continue;
      const int vb = eqs.back() + 1, ve = stmt.end;
      int vstart = vb;
      const int vend = PrimaryEnd(&vstart, ve);
      Kind v = ExprIsTensor(vb, ve, *s) ? Kind::kTensor : Kind::kPlain;
      if (vend == ve && vstart == vb) {
        const Kind pk = PrimaryKind(vb, ve, *s);
        if (pk == Kind::kLayer || pk == Kind::kExt || pk == Kind::kTensor) v = pk;
      }
      int tb = stmt.begin;
      for (int eq : eqs) {
        for (int i = tb; i < eq; ++i) {
          if (!IsName(t_[i]) || (i > tb && IsOp(t_[i - 1], "."))) continue;
          if (i + 1 < eq && (IsOp(t_[i + 1], ".") || IsOp(t_[i + 1], "["))) continue;
          Kind& cur = s->locals[t_[i].text];
          if (cur != Kind::kTensor && cur != Kind::kLayer) cur = v;  // tensor wins
        }
        tb = eq + 1;
      }
    }
  }
}

}  // namespace kf::legality
