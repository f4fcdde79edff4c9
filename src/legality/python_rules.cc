// Rules over the whole Python file, wherever the code sits (module level, __init__, helpers):
// banned modules and names (H07 H13 H15 H16 H17 H20), monkey-patching (H08), exception
// swallowing with no branch of its own (H03) and dynamic lookups on torch that would hide a
// fallback from the forward rule (H01). A try/except is only noted (H03_guard): whether its
// fallback runs is decided at run time (execute's CheckGuards).
#include <set>
#include <string>

#include "common/rules.h"
#include "extract/tokenizer.h"
#include "legality/context.h"
#include "legality/names.h"

namespace kf::legality {
namespace {

class PythonRules {
 public:
  explicit PythonRules(Context& ctx) : ctx_(ctx), t_(ctx.t()) {}

  void Run() {
    Imports();
    const auto& st = ctx_.m().statements;
    for (int si = 0; si < static_cast<int>(st.size()); ++si) Statement(si);
  }

 private:
  void Flag(const char* code, const Token& at, const std::string& message) {
    ctx_.Report(code, at.line, at.col, message + " (" + code + ")", ctx_.Hint(code));
  }
  // `use` ("using torch.cuda.Stream") of a banned name. Python's CUDA graphs stay H07 even where
  // the job allows graphs in kernel sources (docs/RULES.md, "CUDA graphs under the two
  // policies"): the message then says which graphs are allowed.
  void Ban(const Banned& b, const Token& at, const std::string& use) {
    Flag(b.code, at, use + " (" + b.what + ") is not allowed" + GraphsElsewhere(b));
  }
  std::string GraphsElsewhere(const Banned& b) const {
    if (!b.graph || !ctx_.opt().allow_graphs) return "";
    return ", not even under the kernelbench policy, which allows only graphs your kernel "
           "sources build and launch on the current stream";
  }

  void Imports() {
    for (const extract::Import& im : ctx_.m().imports) {
      std::string path = im.module;
      if (!im.name.empty() && im.name != "*") path += "." + im.name;
      Banned b = BannedPythonPath(path, ctx_.opt().fp32_problem);
      if (!b) b = BannedPythonPath(im.module, ctx_.opt().fp32_problem);
      if (!b) continue;
      // Importing autocast or a half dtype is not using it: the uses are judged (AtToken).
      if (b.code == std::string("H13")) continue;
      ctx_.Report(b.code, im.line, 0,
                  "importing " + path + " (" + b.what + ") is not allowed" + GraphsElsewhere(b) +
                      " (" + b.code + ")",
                  ctx_.Hint(b.code));
    }
  }

  void Statement(int si) {
    const extract::Statement& s = ctx_.m().statements[si];
    const Token& first = t_[s.begin];
    if (IsKeyword(first, "try")) {
      // Only a hint: honest candidates guard their build; the host watches its branches.
      ctx_.Report("H03_guard", first.line, first.col,
                  "try/except guard: its except and finally branches are watched at run time "
                  "(cheat H03 if one runs during a trial or timed call)",
                  ctx_.Hint("H03_guard"), Severity::kInfo);
    }
    if (IsKeyword(first, "import") || IsKeyword(first, "from")) return;  // see Imports()
    // Still proof on its own: __exit__ swallows exceptions without an except branch to watch.
    if (IsKeyword(first, "def") && s.begin + 1 < s.end && t_[s.begin + 1].text == "__exit__") {
      Flag("H03", first, "defining __exit__ (a context manager can swallow exceptions)");
    }
    // References first: `torch.backends.cuda.matmul.allow_tf32 = True` is H13 before H08.
    for (int i = s.begin; i < s.end; ++i) AtToken(i, s);
    Assignments(s);
  }

  // H08: `mod.attr = ...`, `mod.attr += ...`, `del mod.attr` where mod is anything imported.
  void Assignments(const extract::Statement& s) {
    std::vector<std::pair<int, int>> targets;
    if (IsKeyword(t_[s.begin], "del")) {
      targets.emplace_back(s.begin + 1, s.end);
    } else {
      int b = s.begin;
      for (int i = s.begin; i < s.end; ++i) {
        const Token& tk = t_[i];
        if (tk.kind == TokenKind::kOp && tk.text.size() >= 1 && tk.text.back() == '=' &&
            tk.text != "==" && tk.text != "<=" && tk.text != ">=" && tk.text != "!=") {
          targets.emplace_back(b, i);
          b = i + 1;
        }
        if (IsOp(tk, "(") || IsOp(tk, "[") || IsOp(tk, "{")) {
          const int p = ctx_.m().partner[i];
          if (p > i) i = p;
        }
      }
    }
    for (auto [b, e] : targets) {
      for (int i = b; i < e; ++i) {
        if (!ctx_.IsChainStart(i)) continue;
        int end = 0;
        const std::string chain = ctx_.Chain(i, &end);
        if (IsSetting(ctx_.Canonical(chain)) || BuildEnvironmentWrite(i, end)) {
          i = end - 1;
          continue;
        }
        const bool builtins = chain.rfind("__builtins__", 0) == 0;
        const bool attr = end > i + 1 || (end < e && IsOp(t_[end], "["));
        if (builtins || (attr && !ctx_.Canonical(chain).empty())) {
          Flag("H08", t_[i], "assigning to " + chain + " patches an imported module");
        }
        i = end - 1;
      }
    }
  }

  // Banned references, builtins, frame attributes and dynamic lookups at token i.
  void AtToken(int i, const extract::Statement& s) {
    const auto& tk = t_[i];
    if (tk.kind == TokenKind::kString) {
      StringToken(tk);
      return;
    }
    if (i > 0 && IsOp(t_[i - 1], ".") && tk.kind == TokenKind::kName) {
      Attribute(i);
      return;
    }
    if (!ctx_.IsChainStart(i)) return;
    if (i + 1 < s.end && IsOp(t_[i + 1], "=") && i > s.begin &&
        (IsOp(t_[i - 1], "(") || IsOp(t_[i - 1], ","))) {
      return;  // a keyword argument's name
    }
    int end = 0;
    const std::string chain = ctx_.Chain(i, &end);
    const std::string root = chain.substr(0, chain.find('.'));
    const std::string canon = ctx_.Canonical(chain);
    if (!canon.empty()) {
      // Imports of a banned module were reported at the import; do not repeat every use
      // (except H13's, which are reported where they are used).
      if (Banned ib = BannedPythonPath(ctx_.AliasTarget(root), ctx_.opt().fp32_problem);
          ib && ib.code != std::string("H13")) {
        return;
      }
      if (BuildEnvironmentWrite(i, end) || FolderNotProvablyOutside(canon, end) ||
          AutocastOff(canon, end) || SetToCurrentStream(canon, end)) {
        return;
      }
      if (Banned b = BannedPythonPath(canon, ctx_.opt().fp32_problem)) {
        // `x.dtype == torch.float16` asks what a tensor is; it computes nothing in half.
        if (b.code == std::string("H13") && Compared(i, end)) return;
        if (ExitOnErrorPath(b, s, tk, chain)) return;
        Ban(b, tk, "using " + chain);
        return;
      }
      if (chain.find(".__dict__") != std::string::npos) {
        const bool torch = canon.rfind("torch", 0) == 0;
        Flag(torch ? "H01" : "H16", tk,
             "reading " + chain + " looks names up dynamically to hide what is called");
      }
      if (chain.size() > 12 && (chain.find("__setattr__") != std::string::npos ||
                                chain.find("__delattr__") != std::string::npos)) {
        Flag("H08", tk, "calling " + chain + " patches an imported module");
      }
      return;
    }
    if (ctx_.Binds(root)) return;
    if (Banned b = BannedBuiltin(root)) {
      if (ExitOnErrorPath(b, s, tk, root)) return;
      Flag(b.code, tk, "using " + root + " (" + b.what + ") is not allowed");
      return;
    }
    if (end < static_cast<int>(t_.size()) && IsOp(t_[end], "(")) DynamicLookup(i, chain, end);
  }

  // An exit (sys.exit, os._exit, exit...) inside an except branch is an error path, not proof
  // of a forged result: noted (H17_note). If it runs during a call the process is gone before
  // it reports (runtime_error), and the branch running at all is watched (H03).
  bool ExitOnErrorPath(const Banned& b, const extract::Statement& s, const Token& at,
                       const std::string& name) {
    if (b.code != std::string("H17") || b.what != std::string("exiting the process")) return false;
    const auto& st = ctx_.m().statements;
    bool in_except = false;
    for (int p = s.parent; p >= 0 && p < static_cast<int>(st.size()); p = st[p].parent) {
      if (IsKeyword(t_[st[p].begin], "except")) {
        in_except = true;
        break;
      }
    }
    if (!in_except) return false;
    ctx_.Report("H17_note", at.line, at.col,
                "calling " + name + " in an except branch (an exit on an error path: a process "
                "that exits during a call is runtime_error)",
                ctx_.Hint("H17_note"), Severity::kInfo);
    return true;
  }

  // Assignments to these configure PyTorch without changing any result or timer: not H08.
  static bool IsSetting(const std::string& canon) {
    return canon == "torch.backends.cudnn.benchmark" ||
           canon == "torch.backends.cudnn.deterministic" || canon == "torch.backends.cudnn.enabled";
  }

  // `os.environ["NAME"] = ...` for a variable that only configures building the extension (seen
  // in released kernels: TORCH_CUDA_ARCH_LIST). Reading the environment stays H15, and so does
  // writing anything else (NVIDIA_TF32_OVERRIDE would change precision, say). `end` is one past
  // the chain starting at token i.
  bool BuildEnvironmentWrite(int i, int end) const {
    static const std::set<std::string> kBuild = {"TORCH_CUDA_ARCH_LIST", "TORCH_EXTENSIONS_DIR",
                                                 "MAX_JOBS", "TORCH_CUDA_VERBOSE",
                                                 "TORCH_USE_CUDA_DSA"};
    const int n = static_cast<int>(t_.size());
    int chain_end = 0;
    if (ctx_.Canonical(ctx_.Chain(i, &chain_end)) != "os.environ" || end + 3 >= n) return false;
    if (!IsOp(t_[end], "[") || t_[end + 1].kind != TokenKind::kString || !IsOp(t_[end + 2], "]") ||
        !IsOp(t_[end + 3], "=")) {
      return false;
    }
    return kBuild.count(extract::DecodeStringLiteral(t_[end + 1].text).value) > 0;
  }

  // `os.makedirs(PATH, ...)` / `os.mkdir(PATH)`: the source proves an escape only when PATH is a
  // literal outside the candidate's folder (absolute, ~ or ".."). A relative literal is inside
  // it; a computed path (CUDA-L1's `os.path.join(os.path.dirname(__file__), "build")`) is
  // left to the sandbox, which decides where a folder may be made.
  bool FolderNotProvablyOutside(const std::string& canon, int end) const {
    if (canon != "os.makedirs" && canon != "os.mkdir") return false;
    if (end + 2 >= static_cast<int>(t_.size()) || !IsOp(t_[end], "(")) return false;
    if (t_[end + 1].kind != TokenKind::kString ||
        !(IsOp(t_[end + 2], ",") || IsOp(t_[end + 2], ")"))) {
      return true;
    }
    const std::string path = extract::DecodeStringLiteral(t_[end + 1].text).value;
    return !path.empty() && path[0] != '/' && path[0] != '~' &&
           path.find("..") == std::string::npos;
  }

  // Whether the name at tokens [i, end) is an operand of a comparison: `x == NAME`,
  // `NAME != x`, `x is NAME`, `x in (NAME, ...)`.
  bool Compared(int i, int end) const {
    auto comparison = [&](int k) {
      if (k < 0 || k >= static_cast<int>(t_.size())) return false;
      const Token& tk = t_[k];
      return IsOp(tk, "==") || IsOp(tk, "!=") || IsKeyword(tk, "is") || IsKeyword(tk, "in");
    };
    if (comparison(i - 1) || comparison(end)) return true;
    // An element of a tuple, list or set that is itself compared: walk out to its bracket.
    int k = i - 1;
    while (k >= 0 && (IsOp(t_[k], ",") || t_[k].kind == TokenKind::kName ||
                      IsOp(t_[k], "."))) {
      --k;
    }
    if (k < 0 || !(IsOp(t_[k], "(") || IsOp(t_[k], "[") || IsOp(t_[k], "{"))) return false;
    const int close = ctx_.m().partner[k];
    return close > k && (comparison(k - 1) || comparison(close + 1));
  }

  // `autocast(enabled=False)` (a call or a decorator) turns autocast off: the opposite of H13.
  bool AutocastOff(const std::string& canon, int end) const {
    const bool autocast = canon == "torch.autocast" || canon == "torch.cuda.amp.autocast" ||
                          canon == "torch.amp.autocast" || canon == "torch.cpu.amp.autocast";
    if (!autocast || end >= static_cast<int>(t_.size()) || !IsOp(t_[end], "(")) return false;
    const int rparen = ctx_.m().partner[end];
    for (int k = end + 1; k + 2 < rparen; ++k) {
      if (t_[k].text == "enabled" && IsOp(t_[k + 1], "=") && t_[k + 2].text == "False" &&
          (k + 3 == rparen || IsOp(t_[k + 3], ","))) {
        return true;
      }
    }
    return false;
  }

  // `torch.cuda.set_stream(torch.cuda.current_stream())` makes the current stream current: it
  // switches nothing (a model-written ReLU does it, CUDA-L1's level1/19 sample 1). Any other
  // argument is a stream from elsewhere, still H07.
  bool SetToCurrentStream(const std::string& canon, int end) const {
    if (canon != "torch.cuda.set_stream" || end >= static_cast<int>(t_.size()) ||
        !IsOp(t_[end], "(")) {
      return false;
    }
    const int rparen = ctx_.m().partner[end];
    int k = end + 1;
    if (rparen < 0 || k >= rparen || !ctx_.IsChainStart(k)) return false;
    const std::string arg = ctx_.Canonical(ctx_.Chain(k, &k));
    if (arg != "torch.cuda.current_stream") return false;
    // current_stream() or current_stream(device): called, and nothing after the call.
    if (k >= rparen || !IsOp(t_[k], "(")) return false;
    const int inner = ctx_.m().partner[k];
    return inner >= 0 && inner + 1 == rparen;
  }

  // getattr/setattr/delattr/vars/object.__setattr__ on modules.
  void DynamicLookup(int i, const std::string& chain, int lparen) {
    const int rparen = ctx_.m().partner[lparen];
    if (rparen < 0) return;
    std::string target, canon;
    int after = lparen + 1;
    if (after < rparen && ctx_.IsChainStart(after)) {
      target = ctx_.Chain(after, &after);
      canon = ctx_.Canonical(target);
    }
    const bool module = !canon.empty();
    const bool torch = canon == "torch" || canon.rfind("torch.", 0) == 0;
    if (chain == "setattr" || chain == "delattr" || chain == "object.__setattr__" ||
        chain == "type.__setattr__") {
      if (module || target.rfind("__builtins__", 0) == 0) {
        Flag("H08", t_[i], chain + "(" + target + ", ...) patches an imported module");
      }
    } else if (chain == "vars") {
      Flag(torch ? "H01" : "H16", t_[i], "vars(" + target + ") reads names dynamically");
    } else if ((chain == "getattr" || chain == "hasattr") && module) {
      // A literal name is as visible as writing it out; anything else hides the callee.
      const bool literal =
          after + 1 < rparen && IsOp(t_[after], ",") && t_[after + 1].kind == TokenKind::kString &&
          (after + 2 == rparen || IsOp(t_[after + 2], ",") || IsOp(t_[after + 2], ")"));
      if (!literal) {
        Flag(torch ? "H01" : "H16", t_[i],
             chain + "(" + target + ", <computed name>) hides which function is used");
        return;
      }
      const extract::StringValue v = extract::DecodeStringLiteral(t_[after + 1].text);
      const std::string path = canon + "." + v.value;
      if (Banned b = BannedPythonPath(path, ctx_.opt().fp32_problem)) {
        Ban(b, t_[i], "using " + path);
      } else if (torch && !AllowedTorchPath(path) && IsComputeName(v.value)) {
        Flag("H01", t_[i],
             chain + "(" + target + ", \"" + v.value +
                 "\") fetches a PyTorch compute function dynamically");
      }
    }
  }

  // `x.half()`, frame and code attributes, `__builtins__` through an object.
  void Attribute(int i) {
    const std::string& name = t_[i].text;
    static const char* const kFrames[] = {"f_back",        "f_globals",   "f_locals", "f_code",
                                          "f_builtins",    "gi_frame",    "tb_frame", "cr_frame",
                                          "ag_frame",      "__globals__", "__code__", "__closure__",
                                          "__subclasses__"};
    for (const char* f : kFrames) {
      if (name == f) Flag("H16", t_[i], "accessing ." + name + " walks interpreter state");
    }
    if (name == "__builtins__") Flag("H08", t_[i], "accessing .__builtins__");
    const bool call = i + 1 < static_cast<int>(t_.size()) && IsOp(t_[i + 1], "(");
    if (call && ctx_.opt().fp32_problem &&
        (name == "half" || name == "bfloat16" || name.rfind("float8", 0) == 0)) {
      Flag("H13", t_[i], "casting with ." + name + "() downgrades fp32 precision");
    }
  }

  void StringToken(const extract::Token& tk) {
    if (!ctx_.opt().fp32_problem || tk.text.size() > 24) return;
    const extract::StringValue v = extract::DecodeStringLiteral(tk.text);
    static const char* const kLow[] = {"float16",       "half",       "bfloat16",
                                       "bf16",          "fp16",       "tf32",
                                       "torch.float16", "torch.half", "torch.bfloat16"};
    for (const char* low : kLow) {
      if (v.value == low) Flag("H13", tk, "the dtype name \"" + v.value + "\" downgrades fp32");
    }
  }

  Context& ctx_;
  const std::vector<extract::Token>& t_;
};

}  // namespace

void CheckPythonRules(Context& ctx) { PythonRules(ctx).Run(); }

}  // namespace kf::legality
