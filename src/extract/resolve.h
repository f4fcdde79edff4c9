// Static evaluation of the small subset of Python expressions that load_inline arguments are
// written in: string literals (implicit, `+` and `"sep".join([...])` concatenation), names bound
// to such expressions, lists, tuples, str->str dicts, True/False/None. Anything else (calls,
// f-strings with placeholders, attribute access, %-formatting, .format) is reported as
// unresolvable with a reason, never guessed.
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "extract/python_parse.h"

namespace kf::extract {

// A string value and the source line each of its lines came from.
struct LinedString {
  std::string text;
  // lines[i]: line (in the parsed text) of the i-th '\n'-separated segment of `text`; 0 when
  // unknown. Always count('\n') + 1 entries, so the empty text has one.
  std::vector<int> lines{0};

  // `a + b`: b's first segment continues a's last one.
  void Append(const LinedString& b);
  // One entry per line of `text` as SourceText counts them (a trailing '\n' ends the last line).
  std::vector<int> LineMap() const;
};

struct Value {
  enum class Kind { kNone, kBool, kStr, kList, kDict };
  Kind kind = Kind::kNone;
  bool boolean = false;
  LinedString str;
  std::vector<Value> items;       // kList: the items; kDict: the values
  std::vector<std::string> keys;  // kDict: the keys, in source order (parallel to items)
};

const char* KindName(Value::Kind kind);

class Evaluator {
 public:
  // `m` must outlive the evaluator.
  explicit Evaluator(const ParsedModule& m);

  // Evaluates tokens [begin, end) as written in statement `stmt`: names resolve to the last
  // binding before that statement in its own function scope, else (for code inside a function)
  // the last module-level binding in the file, else (for module-level code) the last
  // module-level binding before `stmt`. On failure `why` says what could not be resolved.
  bool Eval(int begin, int end, int stmt, Value* out, std::string* why) const;

 private:
  bool Expr(int b, int e, int stmt, int depth, Value* out, std::string* why) const;
  bool Primary(int b, int e, int stmt, int depth, Value* out, std::string* why) const;
  bool Strings(int b, int e, Value* out, std::string* why) const;
  bool Sequence(int b, int e, int stmt, int depth, Value* out, std::string* why) const;
  bool Dict(int b, int e, int stmt, int depth, Value* out, std::string* why) const;
  bool Name(const std::string& name, int stmt, int depth, Value* out, std::string* why) const;
  // The assignment `name` refers to from statement `stmt`, or nullptr.
  const Assignment* Binding(const std::string& name, int stmt) const;
  std::string Describe(int b, int e) const;  // why [b, e) is not something we evaluate

  const ParsedModule& m_;
  // Each name's assignments (indices into m_.assignments), in source order.
  std::unordered_map<std::string, std::vector<int>> by_name_;
  // Assignments already evaluated, failures included: chains like `a = a + a` repeated, or
  // thousands of calls naming one long `+=` chain, must not cost more than one evaluation.
  // Not thread-safe; an Evaluator belongs to one Extract call.
  struct Memo {
    bool ok = false;
    Value value;
    std::string why;
  };
  mutable std::unordered_map<const Assignment*, Memo> memo_;
};

}  // namespace kf::extract
