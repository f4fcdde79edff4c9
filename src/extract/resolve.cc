#include "extract/resolve.h"

#include <algorithm>

namespace kf::extract {
namespace {

// Bounds recursion through brackets and chains of names (each costs a few stack frames).
constexpr int kMaxDepth = 400;
// A candidate could build a huge string by doubling (`a = a + a` many times); refuse instead.
constexpr size_t kMaxValueBytes = 16u << 20;

bool Add(Value* a, const Value& b, std::string* why) {
  if (a->kind == Value::Kind::kStr && b.kind == Value::Kind::kStr) {
    if (a->str.text.size() + b.str.text.size() > kMaxValueBytes) {
      *why = "a string longer than 16 MiB";
      return false;
    }
    a->str.Append(b.str);
    return true;
  }
  if (a->kind == Value::Kind::kList && b.kind == Value::Kind::kList) {
    a->items.insert(a->items.end(), b.items.begin(), b.items.end());
    return true;
  }
  *why = std::string("adding ") + KindName(a->kind) + " and " + KindName(b.kind);
  return false;
}

}  // namespace

void LinedString::Append(const LinedString& b) {
  // An empty last segment has no text of its own: the joined line starts where b's does.
  if (text.empty() || text.back() == '\n') {
    lines.pop_back();
    lines.insert(lines.end(), b.lines.begin(), b.lines.end());
  } else {
    lines.insert(lines.end(), b.lines.begin() + 1, b.lines.end());
  }
  text += b.text;
}

std::vector<int> LinedString::LineMap() const {
  std::vector<int> map = lines;
  if (text.empty() || text.back() == '\n') map.pop_back();
  return map;
}

const char* KindName(Value::Kind kind) {
  switch (kind) {
    case Value::Kind::kNone:
      return "None";
    case Value::Kind::kBool:
      return "a bool";
    case Value::Kind::kStr:
      return "a str";
    case Value::Kind::kList:
      return "a list";
    case Value::Kind::kDict:
      return "a dict";
  }
  return "?";
}

bool Evaluator::Eval(int begin, int end, int stmt, Value* out, std::string* why) const {
  return Expr(begin, end, stmt, 0, out, why);
}

// expr := primary ('+' primary)*
bool Evaluator::Expr(int b, int e, int stmt, int depth, Value* out, std::string* why) const {
  if (depth > kMaxDepth) {
    *why = "an expression nested too deeply";
    return false;
  }
  if (b >= e) {
    *why = "an empty expression";
    return false;
  }
  const auto& t = m_.tokens;
  bool first = true;
  for (int pb = b; pb <= e;) {
    int pe = pb;
    while (pe < e && !IsOp(t[pe], "+")) {
      if (IsOpen(t[pe]) && m_.partner[pe] > pe) pe = m_.partner[pe];
      ++pe;
    }
    Value v;
    if (!Primary(pb, pe, stmt, depth + 1, &v, why)) return false;
    if (first) {
      *out = std::move(v);
      first = false;
    } else if (!Add(out, v, why)) {
      return false;
    }
    pb = pe + 1;
  }
  return true;
}

bool Evaluator::Primary(int b, int e, int stmt, int depth, Value* out, std::string* why) const {
  const auto& t = m_.tokens;
  if (b >= e) {
    *why = "an incomplete '+' expression";
    return false;
  }
  if (std::all_of(t.begin() + b, t.begin() + e,
                  [](const Token& k) { return k.kind == TokenKind::kString; })) {
    return Strings(b, e, out, why);
  }
  if (e - b == 1 && t[b].kind == TokenKind::kName) {
    if (t[b].text == "None") return *out = Value{}, true;
    if (t[b].text == "True" || t[b].text == "False") {
      out->kind = Value::Kind::kBool;
      out->boolean = t[b].text == "True";
      return true;
    }
    return Name(t[b].text, stmt, depth, out, why);
  }
  if (IsOpen(t[b]) && m_.partner[b] == e - 1) {
    if (t[b].text == "{") return Dict(b + 1, e - 1, stmt, depth, out, why);
    return Sequence(b, e, stmt, depth, out, why);
  }
  // sep.join(items): the separator is a string expression, the items a list of strings.
  if (IsOp(t[e - 1], ")") && m_.partner[e - 1] >= b + 2) {
    const int lp = m_.partner[e - 1];
    if (t[lp - 1].kind == TokenKind::kName && t[lp - 1].text == "join" && IsOp(t[lp - 2], ".") &&
        lp - 2 > b) {
      Value sep, items;
      if (!Primary(b, lp - 2, stmt, depth + 1, &sep, why)) {
        *why = Describe(b, e);  // not a string's join: say `os.path.join()`, not `.path`
        return false;
      }
      if (!Expr(lp + 1, e - 1, stmt, depth + 1, &items, why)) return false;
      if (sep.kind != Value::Kind::kStr || items.kind != Value::Kind::kList) {
        *why = "a .join() that is not str.join(list of str)";
        return false;
      }
      out->kind = Value::Kind::kStr;
      for (size_t i = 0; i < items.items.size(); ++i) {
        if (items.items[i].kind != Value::Kind::kStr) {
          *why = "a .join() of something other than strings";
          return false;
        }
        if ((i > 0 && !Add(out, sep, why)) || !Add(out, items.items[i], why)) return false;
      }
      return true;
    }
  }
  *why = Describe(b, e);
  return false;
}

bool Evaluator::Strings(int b, int e, Value* out, std::string* why) const {
  out->kind = Value::Kind::kStr;
  for (int i = b; i < e; ++i) {
    const StringValue sv = DecodeStringLiteral(m_.tokens[i].text);
    if (!sv.resolved) {
      *why = sv.why + " at line " + std::to_string(m_.tokens[i].line);
      return false;
    }
    if (sv.is_bytes) {
      *why = "a bytes literal at line " + std::to_string(m_.tokens[i].line);
      return false;
    }
    LinedString piece;
    piece.text = sv.value;
    piece.lines.clear();
    for (int off : sv.line_offsets) piece.lines.push_back(m_.tokens[i].line + off);
    if (i == b) {
      out->str = std::move(piece);
    } else {
      out->str.Append(piece);
    }
  }
  return true;
}

// `( ... )` or `[ ... ]` spanning [b, e): a parenthesised expression, a tuple or a list.
bool Evaluator::Sequence(int b, int e, int stmt, int depth, Value* out, std::string* why) const {
  const auto& t = m_.tokens;
  const bool paren = t[b].text == "(";
  std::vector<std::pair<int, int>> parts;
  bool trailing_comma = false;
  for (int pb = b + 1; pb < e - 1;) {
    int pe = pb;
    while (pe < e - 1 && !IsOp(t[pe], ",")) {
      if (t[pe].kind == TokenKind::kName && (t[pe].text == "for" || t[pe].text == "async")) {
        *why = "a comprehension at line " + std::to_string(t[pe].line);
        return false;
      }
      if (IsOpen(t[pe]) && m_.partner[pe] > pe) pe = m_.partner[pe];
      ++pe;
    }
    parts.emplace_back(pb, pe);
    trailing_comma = pe < e - 1;
    pb = pe + 1;
  }
  if (paren && parts.size() == 1 && !trailing_comma) {
    return Expr(parts[0].first, parts[0].second, stmt, depth + 1, out, why);
  }
  out->kind = Value::Kind::kList;
  for (const auto& [pb, pe] : parts) {
    if (pb < pe && IsOp(t[pb], "*")) {
      *why = "a starred item at line " + std::to_string(t[pb].line);
      return false;
    }
    Value v;
    if (!Expr(pb, pe, stmt, depth + 1, &v, why)) return false;
    out->items.push_back(std::move(v));
  }
  return true;
}

bool Evaluator::Dict(int b, int e, int stmt, int depth, Value* out, std::string* why) const {
  const auto& t = m_.tokens;
  out->kind = Value::Kind::kDict;
  for (int pb = b; pb < e;) {
    int colon = -1, pe = pb;
    while (pe < e && !IsOp(t[pe], ",")) {
      if (IsOp(t[pe], ":") && colon < 0) colon = pe;
      if (IsOpen(t[pe]) && m_.partner[pe] > pe) pe = m_.partner[pe];
      ++pe;
    }
    if (pe > pb) {
      if (colon < 0) {
        *why = "a set or dict unpacking at line " + std::to_string(t[pb].line);
        return false;
      }
      Value k, v;
      if (!Expr(pb, colon, stmt, depth + 1, &k, why) ||
          !Expr(colon + 1, pe, stmt, depth + 1, &v, why)) {
        return false;
      }
      if (k.kind != Value::Kind::kStr) {
        *why = "a dict key that is not a string at line " + std::to_string(t[pb].line);
        return false;
      }
      out->keys.push_back(k.str.text);
      out->items.push_back(std::move(v));
    }
    pb = pe + 1;
  }
  return true;
}

Evaluator::Evaluator(const ParsedModule& m) : m_(m) {
  for (int i = 0; i < static_cast<int>(m.assignments.size()); ++i) {
    by_name_[m.assignments[i].name].push_back(i);
  }
}

const Assignment* Evaluator::Binding(const std::string& name, int stmt) const {
  const auto it = by_name_.find(name);
  if (it == by_name_.end()) return nullptr;
  const std::vector<int>& all = it->second;
  const int scope = m_.statements[stmt].scope;
  // Bindings before `stmt`, latest first: a local one wins, then a module-level one.
  auto before = std::lower_bound(all.begin(), all.end(), stmt,
                                 [&](int a, int s) { return m_.assignments[a].stmt < s; });
  const Assignment* global = nullptr;
  for (auto k = before; k != all.begin();) {
    const Assignment& a = m_.assignments[*--k];
    if (scope >= 0 && a.scope == scope) return &a;
    if (a.scope == -1 && global == nullptr) {
      global = &a;
      if (scope < 0) break;
    }
  }
  if (scope < 0) return global;
  // A function body runs after the module body: the last module-level binding anywhere.
  for (auto k = all.end(); k != all.begin();) {
    const Assignment& a = m_.assignments[*--k];
    if (a.scope == -1) return &a;
  }
  return nullptr;
}

bool Evaluator::Name(const std::string& name, int stmt, int depth, Value* out,
                     std::string* why) const {
  const Assignment* a = Binding(name, stmt);
  if (a == nullptr) {
    *why = "name '" + name + "', which is not assigned before line " +
           std::to_string(m_.statements[stmt].line);
    return false;
  }
  if (auto it = memo_.find(a); it != memo_.end()) {
    if (it->second.ok) {
      *out = it->second.value;
    } else {
      *why = it->second.why;
    }
    return it->second.ok;
  }
  Memo memo;
  if (depth > kMaxDepth) {
    memo.why = "names bound through too many assignments";
  } else if (a->value_begin < 0) {
    memo.why =
        "name '" + name + "', bound by an unpacking assignment at line " + std::to_string(a->line);
  } else if (a->augmented) {
    Value more;
    memo.ok = Name(name, a->stmt, depth + 1, &memo.value, &memo.why) &&
              Expr(a->value_begin, a->value_end, a->stmt, depth + 1, &more, &memo.why) &&
              Add(&memo.value, more, &memo.why);
  } else {
    memo.ok = Expr(a->value_begin, a->value_end, a->stmt, depth + 1, &memo.value, &memo.why);
  }
  if (memo.ok) {
    *out = memo.value;
  } else {
    *why = memo.why;
  }
  const bool ok = memo.ok;
  memo_.emplace(a, std::move(memo));
  return ok;
}

std::string Evaluator::Describe(int b, int e) const {
  const auto& t = m_.tokens;
  const std::string at = " at line " + std::to_string(t[b].line);
  for (int i = b; i < e; ++i) {
    if (IsOp(t[i], "(") && i > b && t[i - 1].kind == TokenKind::kName) {
      int k = i - 1;
      while (k - 2 >= b && IsOp(t[k - 1], ".") && t[k - 2].kind == TokenKind::kName) k -= 2;
      std::string callee;
      for (int j = k; j < i; ++j) callee += t[j].text;
      if (k > b && IsOp(t[k - 1], ".")) callee = "." + callee;
      return "a call to " + callee + "()" + at;
    }
  }
  for (int i = b; i < e; ++i) {
    if (IsOp(t[i], "%")) return "%-formatting" + at;
    if (t[i].kind == TokenKind::kString && !DecodeStringLiteral(t[i].text).resolved) {
      return DecodeStringLiteral(t[i].text).why + at;
    }
  }
  for (int i = b; i < e; ++i) {
    if (IsOp(t[i], ".") && i + 1 < e) return "attribute access '." + t[i + 1].text + "'" + at;
  }
  std::string text;
  for (int i = b; i < e && text.size() < 40; ++i) text += (i > b ? " " : "") + t[i].text;
  return "the expression `" + text + "`" + at;
}

}  // namespace kf::extract
