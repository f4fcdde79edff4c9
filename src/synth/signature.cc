// Op signatures of problem sources, and the benchmark index that finds the nearest problem.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "extract/python_parse.h"
#include "problems/registry.h"
#include "similarity/similarity.h"
#include "synth/synth.h"

namespace kf::synth {
namespace {
using extract::ParsedModule;
using extract::Token;
using extract::TokenKind;

// Lower case, underscores dropped: "LayerNorm", "layer_norm" -> "layernorm".
std::string Key(const std::string& name) {
  std::string k;
  for (char c : name) {
    if (c != '_') k += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return k;
}

// Compute ops by normalised name; anything else a call names is plumbing or unknown.
const std::map<std::string, std::string>& Vocabulary() {
  static const std::map<std::string, std::string> kVocab = [] {
    std::map<std::string, std::string> m;
    for (const char* same :
         {"relu",         "relu6",     "gelu",        "silu",      "sigmoid",  "tanh",
          "elu",          "selu",      "celu",        "softplus",  "softsign", "hardtanh",
          "mish",         "hardswish", "hardsigmoid", "clamp",     "abs",      "exp",
          "log",          "sqrt",      "rsqrt",       "pow",       "erf",      "reciprocal",
          "neg",          "sin",       "cos",         "add",       "mul",      "sub",
          "div",          "maximum",   "minimum",     "where",     "sum",      "mean",
          "max",          "min",       "var",         "std",       "norm",     "prod",
          "argmax",       "argmin",    "softmax",     "logsumexp", "matmul",   "bmm",
          "linear",       "bilinear",  "conv1d",      "conv2d",    "conv3d",   "gather",
          "scatter",      "embedding", "cumsum",      "cumprod",   "cummax",   "cummin",
          "logcumsumexp", "concat",    "stack",       "lstm",      "gru",      "rnn"}) {
      m[same] = same;
    }
    const std::pair<const char*, const char*> kAliases[] = {
        {"swish", "silu"},
        {"leakyrelu", "leaky_relu"},
        {"clip", "clamp"},
        {"clampmin", "clamp"},
        {"clampmax", "clamp"},
        {"square", "pow"},
        {"multiply", "mul"},
        {"subtract", "sub"},
        {"divide", "div"},
        {"truediv", "div"},
        {"maskedfill", "where"},
        {"amax", "max"},
        {"amin", "min"},
        {"vectornorm", "norm"},
        {"logsoftmax", "log_softmax"},
        {"mm", "matmul"},
        {"einsum", "matmul"},
        {"baddbmm", "bmm"},
        {"addmm", "linear"},
        {"layernorm", "layer_norm"},
        {"batchnorm", "batch_norm"},
        {"batchnorm1d", "batch_norm"},
        {"batchnorm2d", "batch_norm"},
        {"batchnorm3d", "batch_norm"},
        {"groupnorm", "group_norm"},
        {"instancenorm", "instance_norm"},
        {"instancenorm1d", "instance_norm"},
        {"instancenorm2d", "instance_norm"},
        {"instancenorm3d", "instance_norm"},
        {"rmsnorm", "rms_norm"},
        {"localresponsenorm", "local_response_norm"},
        {"scaleddotproductattention", "attention"},
        {"multiheadattention", "self_attention"},
        {"takealongdim", "gather"},
        {"scatteradd", "scatter_add"},
        {"indexselect", "index_select"},
        {"indexadd", "index_add"},
        {"cat", "concat"},
        {"concatenate", "concat"},
        {"crossentropy", "cross_entropy"},
        {"crossentropyloss", "cross_entropy"},
        {"mseloss", "mse_loss"},
        {"smoothl1loss", "smooth_l1_loss"},
        {"huberloss", "huber_loss"},
        {"kldiv", "kl_div"},
        {"kldivloss", "kl_div"},
        {"cosinesimilarity", "cosine_similarity"},
        {"tripletmarginloss", "triplet_margin_loss"},
        {"hingeembeddingloss", "hinge_embedding_loss"},
        {"nllloss", "nll_loss"}};
    for (const auto& [k, v] : kAliases) m[k] = v;
    for (int nd = 1; nd <= 3; ++nd) {
      std::string d = std::to_string(nd) + "d";
      m["convtranspose" + d] = "conv_transpose" + d;
      m["maxpool" + d] = "max_pool" + d;
      m["avgpool" + d] = "avg_pool" + d;
      m["adaptiveavgpool" + d] = "adaptive_avg_pool" + d;
      m["adaptivemaxpool" + d] = "adaptive_max_pool" + d;
    }
    return m;
  }();
  return kVocab;
}

const std::map<std::string, std::string>& Operators() {
  static const std::map<std::string, std::string> kOps = {
      {"+", "add"},  {"-", "sub"},  {"*", "mul"},  {"/", "div"},  {"@", "matmul"}, {"**", "pow"},
      {"+=", "add"}, {"-=", "sub"}, {"*=", "mul"}, {"/=", "div"}, {"@=", "matmul"}};
  return kOps;
}

// Calls whose arguments are sizes, not tensors: operators inside them are shape arithmetic.
bool IsPlumbing(const std::string& key) {
  static const std::set<std::string> kPlumbing = {
      "view",    "reshape",   "permute", "transpose", "size",  "expand",   "repeat",
      "flatten", "unsqueeze", "squeeze", "narrow",    "range", "arange",   "int",
      "float",   "len",       "full",    "zeros",     "ones",  "empty",    "randn",
      "rand",    "tensor",    "sqrt",    "split",     "chunk", "unflatten"};
  return kPlumbing.count(key) > 0;
}

bool EndsOperand(const Token& t) {
  return (t.kind == TokenKind::kName && !extract::IsPythonKeyword(t.text)) ||
         t.kind == TokenKind::kNumber || t.kind == TokenKind::kString || IsOp(t, ")") ||
         IsOp(t, "]") || IsOp(t, "}");
}

// The last token of the operand that starts at i (unary signs, a primary, its trailers).
int OperandEnd(const ParsedModule& m, int i, int end) {
  const auto& t = m.tokens;
  while (i < end && (IsOp(t[i], "-") || IsOp(t[i], "+") || IsOp(t[i], "~"))) ++i;
  if (i >= end) return end - 1;
  int last = IsOpen(t[i]) && m.partner[i] > i ? m.partner[i] : i;
  while (last + 1 < end) {
    const Token& n = t[last + 1];
    if (IsOp(n, ".") && last + 2 < end) {
      last += 2;
    } else if ((IsOp(n, "(") || IsOp(n, "[")) && m.partner[last + 1] > last + 1) {
      last = m.partner[last + 1];
    } else {
      break;
    }
  }
  return last;
}

struct Event {
  int at, kind, order;  // kind 0: a call, 1: an operator (after the calls that end there)
  std::vector<std::string> ops;
};

// Op events of tokens [b, e), `layers` naming what self.<attr>(...) computes.
// Operators count only when `operators` (a constructor's arithmetic is on sizes).
void Events(const ParsedModule& m, int b, int e,
            const std::map<std::string, std::vector<std::string>>& layers, bool operators,
            std::vector<Event>* out) {
  const auto& t = m.tokens;
  // Regions whose operators are size arithmetic: plumbing-call arguments and subscripts.
  std::vector<bool> quiet(t.size(), false);
  for (int i = b; i < e; ++i) {
    if (!IsOpen(t[i]) || m.partner[i] <= i) continue;
    bool subscript = IsOp(t[i], "[") && i > b && EndsOperand(t[i - 1]);
    bool plumbing = IsOp(t[i], "(") && i > b && t[i - 1].kind == TokenKind::kName &&
                    IsPlumbing(Key(t[i - 1].text));
    if (subscript || plumbing) {
      for (int j = i; j <= m.partner[i]; ++j) quiet[j] = true;
    }
  }
  for (int i = b; i < e; ++i) {
    const Token& tok = t[i];
    if (tok.kind == TokenKind::kName && i + 1 < e && IsOp(t[i + 1], "(") &&
        !extract::IsPythonKeyword(tok.text)) {
      int at = m.partner[i + 1] > i ? m.partner[i + 1] : i + 1;
      bool self_attr = i >= b + 2 && IsOp(t[i - 1], ".") && t[i - 2].text == "self" &&
                       !(i >= b + 3 && IsOp(t[i - 3], "."));
      if (self_attr) {
        auto it = layers.find(tok.text);
        if (it != layers.end()) out->push_back({at, 0, i, it->second});
        continue;
      }
      if (i >= b + 2 && IsOp(t[i - 1], ".") && t[i - 2].text == "math") continue;  // scalars
      auto v = Vocabulary().find(Key(tok.text));
      if (v != Vocabulary().end()) out->push_back({at, 0, i, {v->second}});
      continue;
    }
    if (!operators || tok.kind != TokenKind::kOp || quiet[i]) continue;
    auto op = Operators().find(tok.text);
    if (op == Operators().end()) continue;
    bool augmented = tok.text.back() == '=';
    if (!augmented && !(i > b && EndsOperand(t[i - 1]))) continue;  // unary, or *args
    out->push_back({OperandEnd(m, i + 1, e), 1, i, {op->second}});
  }
}

std::vector<std::string> Flatten(std::vector<Event> events) {
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return std::tie(a.at, a.kind, a.order) < std::tie(b.at, b.kind, b.order);
  });
  std::vector<std::string> out;
  for (auto& ev : events) out.insert(out.end(), ev.ops.begin(), ev.ops.end());
  return out;
}

const extract::ClassDef* ModelClass(const ParsedModule& m) {
  for (const auto& c : m.classes) {
    if (c.name == "Model") return &c;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> OpSignature(const std::string& source) {
  ParsedModule m;
  extract::SyntaxError err;
  if (!extract::ParseModule(source, &m, &err)) return {};
  const extract::ClassDef* cls = ModelClass(m);
  if (cls == nullptr) return {};
  const extract::FunctionDef *init = nullptr, *forward = nullptr;
  for (const auto& f : cls->methods) {
    if (f.name == "__init__") init = &f;
    if (f.name == "forward") forward = &f;
  }
  if (forward == nullptr) return {};
  std::map<std::string, std::vector<std::string>> layers;
  if (init != nullptr) {
    for (const auto& s : m.statements) {
      if (s.scope != init->stmt || s.end - s.begin < 5) continue;
      const auto& t = m.tokens;
      if (t[s.begin].text != "self" || !IsOp(t[s.begin + 1], ".") || !IsOp(t[s.begin + 3], "=")) {
        continue;
      }
      std::vector<Event> calls;
      Events(m, s.begin + 4, s.end, {}, false, &calls);
      layers[t[s.begin + 2].text] = Flatten(calls);
    }
  }
  std::vector<Event> events;
  for (const auto& s : m.statements) {
    if (s.scope == forward->stmt) Events(m, s.begin, s.end, layers, true, &events);
  }
  return Flatten(std::move(events));
}

std::vector<uint64_t> SourceShingles(const std::string& source) {
  ParsedModule m;
  extract::SyntaxError err;
  std::string text = source;
  if (extract::ParseModule(source, &m, &err)) {
    if (const auto* cls = ModelClass(m)) {
      std::istringstream in(source);
      std::string line, body;
      for (int n = 1; std::getline(in, line); ++n) {
        if (n >= cls->line && n <= cls->end_line) body += line + "\n";
      }
      text = body;
    }
  }
  return similarity::Shingles(similarity::NormalizedPythonTokens(text), 5);
}

void BenchmarkIndex::Add(const std::string& name, const std::string& source) {
  entries_.push_back(Entry{name, OpSignature(source), SourceShingles(source)});
}

Result<BenchmarkIndex> BenchmarkIndex::FromFolder(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return Status::Invalid("--against: not a folder: " + dir.string());
  }
  auto files = problems::ProblemFiles(dir);
  if (!files.ok()) return Status::Invalid("--against: " + files.status().message());
  BenchmarkIndex idx;
  for (const auto& f : *files) idx.Add(std::filesystem::relative(f.path, dir).string(), f.text);
  if (idx.size() == 0) return Status::Invalid("--against: no problem files under " + dir.string());
  return idx;
}

Nearest BenchmarkIndex::BySignature(const std::vector<std::string>& signature) const {
  Nearest best;
  for (const auto& e : entries_) {
    double d = similarity::NormalizedEditDistance(signature, e.signature);
    if (best.problem.empty() || d < best.distance) best = Nearest{e.name, d};
  }
  return best;
}

Nearest BenchmarkIndex::BySource(const std::string& source) const {
  Nearest best;
  auto sh = SourceShingles(source);
  for (const auto& e : entries_) {
    double d = 1.0 - similarity::Jaccard(sh, e.shingles);
    if (best.problem.empty() || d < best.distance) best = Nearest{e.name, d};
  }
  return best;
}

}  // namespace kf::synth
