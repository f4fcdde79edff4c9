// Rules over the bodies of a Triton candidate's @triton.jit kernels: what a kernel may use
// (triton.language, its other jit functions, plain arithmetic) and what precision it computes
// in. Only what the source proves: a library used in a kernel body (H04) and reduced precision
// asked for on an fp32 problem (H13). Whether the kernels do the work is decided at run time
// (launch counts and the ghost replay, src/execute), and what else Triton's compiler refuses
// (a call of a plain Python function, an unsupported construct) is a compile error.
#include <set>
#include <string>

#include "common/rules.h"
#include "legality/context.h"

namespace kf::legality {
namespace {

bool StartsWith(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// Paths a kernel body may name: triton.language (tl.*, libdevice under tl.extra) and the
// host helpers Triton folds on constants.
bool TritonLanguage(const std::string& canon) {
  return canon == "triton.language" || StartsWith(canon, "triton.language.") ||
         canon == "triton.cdiv" || canon == "triton.next_power_of_2" || canon == "triton.jit" ||
         canon == "triton";
}

bool ReducedDtype(const std::string& canon) {
  static const std::set<std::string> kReduced = {"float16", "bfloat16", "half"};
  if (!StartsWith(canon, "triton.language.")) return false;
  const std::string last = canon.substr(canon.rfind('.') + 1);
  return kReduced.count(last) > 0 || StartsWith(last, "float8") || StartsWith(last, "fp8");
}

class TritonRules {
 public:
  explicit TritonRules(Context& ctx) : ctx_(ctx), t_(ctx.t()) {}

  void Run() {
    for (const extract::TritonKernel& k : ctx_.candidate().triton_kernels) Kernel(k);
  }

 private:
  void Kernel(const extract::TritonKernel& k) {
    const auto& st = ctx_.m().statements;
    for (int si = k.stmt + 1; si < static_cast<int>(st.size()) && st[si].line <= k.end_line; ++si) {
      for (int i = st[si].begin; i < st[si].end; ++i) AtToken(k, i, st[si].end);
    }
  }

  // `x.dtype == tl.float16` asks what a value is; it computes nothing in half.
  bool Compared(int b, int e) const {
    auto cmp = [](const Token& t) {
      return IsOp(t, "==") || IsOp(t, "!=") || IsKeyword(t, "is") || IsKeyword(t, "in");
    };
    return (b > 0 && cmp(t_[b - 1])) || (e < static_cast<int>(t_.size()) && cmp(t_[e]));
  }

  void AtToken(const extract::TritonKernel& k, int i, int se) {
    if (!ctx_.IsChainStart(i)) return;
    int end = 0;
    const std::string chain = ctx_.Chain(i, &end);
    const std::string canon = ctx_.Canonical(chain);
    if (canon.empty()) return;  // locals, parameters, module constants, other jit functions
    const Token& at = t_[i];
    if (!TritonLanguage(canon)) {
      ctx_.Report("H04", at.line, at.col,
                  "the Triton kernel " + k.name + " uses " + chain +
                      (canon != chain ? " (" + canon + ")" : "") +
                      ": a @triton.jit body may use only triton.language, your other @triton.jit "
                      "functions and plain arithmetic (H04)",
                  ctx_.Hint("H04"));
      return;
    }
    if (!ctx_.opt().fp32_problem) return;
    if (ReducedDtype(canon) && !Compared(i, end)) {
      ctx_.Report("H13", at.line, at.col,
                  "the Triton kernel " + k.name + " uses " + chain +
                      " on a float32 problem: reduced-precision arithmetic (H13)",
                  ctx_.Hint("H13"));
    } else if (canon == "triton.language.dot" && end < se && IsOp(t_[end], "(")) {
      Dot(k, i, end);
    }
  }

  // tl.dot(a, b, ...): TF32 asked for is H13; the TF32 default left in place is a note.
  void Dot(const extract::TritonKernel& k, int i, int lparen) {
    const int rparen = ctx_.m().partner[lparen];
    if (rparen < 0) return;
    bool ieee = false, tf32 = false;
    for (int j = lparen + 1; j + 2 < rparen; ++j) {
      if (!IsOp(t_[j + 1], "=")) continue;
      const std::string& name = t_[j].text;
      const std::string& value = t_[j + 2].text;
      if (name == "input_precision" && t_[j + 2].kind == TokenKind::kString) {
        const bool is_ieee = value.find("ieee") != std::string::npos;
        ieee = ieee || is_ieee;
        tf32 = tf32 || !is_ieee;
      } else if (name == "allow_tf32") {
        ieee = ieee || value == "False";
        tf32 = tf32 || value == "True";
      }
    }
    const Token& at = t_[i];
    if (tf32) {
      ctx_.Report("H13", at.line, at.col,
                  "the Triton kernel " + k.name +
                      " asks tl.dot for TF32 on a float32 problem: reduced-precision matmul (H13)",
                  ctx_.Hint("H13"));
    } else if (!ieee) {
      ctx_.Report("H13_note", at.line, at.col,
                  "tl.dot in " + k.name +
                      " on float32 inputs uses TF32 by default on GPUs that have it; the fp32 "
                      "tolerance decides",
                  ctx_.Hint("H13_note"), Severity::kInfo);
    }
  }

  Context& ctx_;
  const std::vector<Token>& t_;
};

}  // namespace

void CheckTritonKernels(Context& ctx) { TritonRules(ctx).Run(); }

}  // namespace kf::legality
