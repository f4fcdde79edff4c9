// A small structural parser for candidate Python: statements, blocks, classes, functions,
// module-level assignments, imports and calls. It does not check full Python grammar; it finds
// what extract and the static rules need and keeps the token stream for rules to walk.
// Internal to kforge: other components (the static rules) may include it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "extract/tokenizer.h"

namespace kf::extract {

// One simple statement or compound-statement header, e.g. `x = 1` or `def f(a):`. Statements
// separated by ';' are separate. Lines are lines of the parsed text.
struct Statement {
  int begin = 0;  // token range [begin, end) in ParsedModule::tokens, without NEWLINE or ';'
  int end = 0;
  int line = 0;
  int end_line = 0;        // for a block header: the last line of its body
  int parent = -1;         // the enclosing block header's statement index; -1 at module level
  int scope = -1;          // the innermost enclosing `def` or `class` header; -1 at module level
  bool is_header = false;  // ends with ':' and opens an indented block
};

struct FunctionDef {
  std::string name;
  int line = 0;
  int end_line = 0;
  int stmt = -1;  // its header in ParsedModule::statements
};

struct ClassDef {
  std::string name;
  int line = 0;
  int end_line = 0;
  int stmt = -1;
  std::vector<FunctionDef> methods;  // defs directly in the class body
};

// `name = value`, `name: T = value`, `a = name = value` (one entry per name) or `name += value`.
// Names bound by a tuple target (`a, b = ...`) are recorded with value_begin = -1, so resolution
// knows the name was rebound to something it cannot see. Attribute and subscript targets bind
// no name and are not recorded.
struct Assignment {
  std::string name;
  int line = 0;
  int stmt = -1;
  int scope = -1;        // as Statement::scope
  int value_begin = -1;  // token range of the value; -1: bound to something we cannot see
  int value_end = -1;
  bool augmented = false;  // `+=`
};

// `import a.b as c` gives module "a.b", name "", alias "c". `from a.b import c as d` gives
// module "a.b", name "c", alias "d". Without `as`, alias is what the import binds ("a" for
// `import a.b`, "c" for `from a.b import c`).
struct Import {
  std::string module;
  std::string name;
  std::string alias;
  int line = 0;
  int scope = -1;
};

struct Argument {
  std::string keyword;  // empty for positional
  int star = 0;         // 1 for *args, 2 for **kwargs
  int begin = 0;        // token range of the value expression
  int end = 0;
};

// A call whose callee is a dotted name: `f(...)`, `a.b.f(...)`.
struct Call {
  std::string callee;  // "a.b.f"
  int line = 0;        // of the callee's first token
  int col = 0;
  int callee_begin = 0;  // token index of the callee's first name
  int lparen = 0;
  int rparen = 0;
  int stmt = -1;
  int scope = -1;
  std::vector<Argument> args;
};

struct ParsedModule {
  std::vector<Token> tokens;            // all tokens except comments; ends with kEndMarker
  std::vector<Token> comments;          // kept apart so walkers need not skip them
  std::vector<int> partner;             // per token: index of the matching bracket, or -1
  std::vector<Statement> statements;    // in source order
  std::vector<ClassDef> classes;        // module-level only
  std::vector<FunctionDef> functions;   // module-level only
  std::vector<Assignment> assignments;  // everywhere, in source order
  std::vector<Import> imports;          // everywhere, in source order
  std::vector<Call> calls;              // everywhere, in source order of their '('
};

// Tokenizes and parses `src`. Fails (with a located error) on tokenizer errors, an unexpected
// indent, or a block header with no indented body.
bool ParseModule(std::string_view src, ParsedModule* out, SyntaxError* error);

bool IsPythonKeyword(std::string_view word);

}  // namespace kf::extract
