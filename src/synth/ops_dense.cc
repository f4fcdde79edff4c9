// GEMM-shaped ops: matmul, bmm, linear, attention over given q/k/v, and a self-attention block
// with its projections.
#include "synth/ops.h"

namespace kf::synth {
namespace {

bool SameDim(const Dim& a, const Dim& b) { return a.n == b.n && a.deps == b.deps; }

OpSpec Matmul() {
  OpSpec s;
  s.name = "matmul";
  s.category = "matmul";
  s.ranks = {2};
  s.heavy = true;
  s.start = [](Builder& b, int) {
    int m = b.NewVar("m", VarRole::kBatch, b.rng().Pick<int64_t>({128, 256, 512}));
    int k = b.NewVar("k", VarRole::kFeature, b.rng().Pick<int64_t>({128, 256, 512, 1024}));
    return b.NewInput({m, k}, "a");
  };
  s.propose = [](Builder& b, int x, Node* n) {
    const Dim& k = b.shape(x)[1];
    if (k.var < 0) return false;
    int nv = b.NewVar("n", VarRole::kFeature, b.rng().Pick<int64_t>({128, 256, 512}));
    n->args = {x, b.NewInput({k.var, nv}, "b")};
    return true;
  };
  s.infer = [](const Node&, const InferArgs& a, Shape* out) {
    if (!SameDim(a.in[0][1], a.in[1][0])) return Status::Invalid("inner dimensions differ");
    *out = {a.in[0][0], a.in[1][1]};
    return Status::Ok();
  };
  s.emit = [](const Node&, const EmitCtx& c) {
    return Emitted{{}, {}, "torch.matmul(" + c.args[0] + ", " + c.args[1] + ")"};
  };
  s.cost = [](const Node&, const std::vector<Shape>& in, const Shape& out, int eb) {
    Cost c = PointwiseCost(in, out, eb);
    c.flops = 2.0 * static_cast<double>(Numel(out)) * static_cast<double>(in[0][1].n);
    return c;
  };
  return s;
}

OpSpec Bmm() {
  OpSpec s;
  s.name = "bmm";
  s.category = "matmul";
  s.ranks = {3};
  s.heavy = true;
  s.start = [](Builder& b, int) {
    int bs = b.NewVar("batch_size", VarRole::kBatch, b.rng().Pick<int64_t>({4, 8, 16}));
    int m = b.NewVar("m", VarRole::kSequence, b.rng().Pick<int64_t>({64, 128, 256}));
    int k = b.NewVar("k", VarRole::kFeature, b.rng().Pick<int64_t>({64, 128, 256}));
    return b.NewInput({bs, m, k}, "a");
  };
  s.propose = [](Builder& b, int x, Node* n) {
    const Shape& sx = b.shape(x);
    if (sx[0].var < 0 || sx[2].var < 0) return false;
    int nv = b.NewVar("n", VarRole::kFeature, b.rng().Pick<int64_t>({64, 128, 256}));
    n->args = {x, b.NewInput({sx[0].var, sx[2].var, nv}, "b")};
    return true;
  };
  s.infer = [](const Node&, const InferArgs& a, Shape* out) {
    const Shape &p = a.in[0], &q = a.in[1];
    if (!SameDim(p[0], q[0]) || !SameDim(p[2], q[1])) return Status::Invalid("shapes differ");
    *out = {p[0], p[1], q[2]};
    return Status::Ok();
  };
  s.emit = [](const Node&, const EmitCtx& c) {
    return Emitted{{}, {}, "torch.bmm(" + c.args[0] + ", " + c.args[1] + ")"};
  };
  s.cost = [](const Node&, const std::vector<Shape>& in, const Shape& out, int eb) {
    Cost c = PointwiseCost(in, out, eb);
    c.flops = 2.0 * static_cast<double>(Numel(out)) * static_cast<double>(in[0][2].n);
    return c;
  };
  return s;
}

OpSpec Linear() {
  OpSpec s;
  s.name = "linear";
  s.category = "matmul";
  s.ranks = {2, 3};
  s.heavy = true;
  s.propose = [](Builder& b, int x, Node* n) {
    const Dim& f = b.shape(x).back();
    if (f.var < 0) return false;
    n->args = {x};
    n->vars["in_features"] = f.var;
    n->vars["out_features"] =
        b.NewVar("out_features", VarRole::kFeature, b.rng().Pick<int64_t>({128, 256, 512, 1024}));
    n->ints["bias"] = b.rng().Chance(0.8) ? 1 : 0;
    return true;
  };
  s.infer = [](const Node& n, const InferArgs& a, Shape* out) {
    *a.bound |= a.in[0].back().deps;
    *out = a.in[0];
    out->back() = a.Var(n.vars.at("out_features"));
    return Status::Ok();
  };
  s.emit = [](const Node& n, const EmitCtx& c) {
    Emitted e;
    e.init.push_back("self." + c.attr + " = nn.Linear(" + c.var(n.vars.at("in_features")) + ", " +
                     c.var(n.vars.at("out_features")) + (n.ints.at("bias") ? "" : ", bias=False") +
                     ")");
    e.expr = "self." + c.attr + "(" + c.args[0] + ")";
    return e;
  };
  s.cost = [](const Node&, const std::vector<Shape>& in, const Shape& out, int eb) {
    Cost c = PointwiseCost(in, out, eb);
    double k = static_cast<double>(in[0].back().n);
    c.flops = 2.0 * static_cast<double>(Numel(out)) * k;
    c.params = k * static_cast<double>(out.back().n);
    c.bytes += c.params * eb;
    return c;
  };
  return s;
}

// softmax(q k^T / sqrt(d)) v over given (batch, heads, seq, head_dim) tensors.
OpSpec Attention() {
  OpSpec s;
  s.name = "attention";
  s.category = "attention";
  s.ranks = {4};
  s.heavy = true;
  s.start = [](Builder& b, int) {
    Rng& r = b.rng();
    int bs = b.NewVar("batch_size", VarRole::kBatch, r.Pick<int64_t>({2, 4, 8}));
    int h = b.NewVar("heads", VarRole::kChannel, r.Pick<int64_t>({4, 8}));
    int sl = b.NewVar("seq_len", VarRole::kSequence, r.Pick<int64_t>({64, 128, 256}));
    int d = b.NewVar("head_dim", VarRole::kFeature, r.Pick<int64_t>({32, 64}));
    return b.NewInput({bs, h, sl, d}, "q");
  };
  s.propose = [](Builder& b, int x, Node* n) {
    auto dims = b.DimVars(x);
    if (dims.empty()) return false;
    n->args = {x, b.NewInput(dims, "k"), b.NewInput(dims, "v")};
    return true;
  };
  s.infer = [](const Node&, const InferArgs& a, Shape* out) {
    for (int i = 1; i < 3; ++i) {
      for (size_t d = 0; d < 4; ++d) {
        if (!SameDim(a.in[0][d], a.in[i][d])) return Status::Invalid("q, k and v differ");
      }
    }
    *out = a.in[0];
    return Status::Ok();
  };
  s.emit = [](const Node&, const EmitCtx& c) {
    const auto& q = c.args[0];
    return Emitted{{},
                   {},
                   "torch.softmax(" + q + " @ " + c.args[1] + ".transpose(-2, -1) * " + q +
                       ".shape[-1] ** -0.5, dim=-1) @ " + c.args[2]};
  };
  s.cost = [](const Node&, const std::vector<Shape>& in, const Shape& out, int eb) {
    const Shape& q = in[0];
    double bh = static_cast<double>(q[0].n * q[1].n), sl = static_cast<double>(q[2].n);
    Cost c = PointwiseCost(in, out, eb);
    c.flops = 4.0 * bh * sl * sl * static_cast<double>(q[3].n);
    c.bytes += 3.0 * bh * sl * sl * eb;  // the scores, written, softmaxed and read
    return c;
  };
  return s;
}

// Multi-head self-attention on (batch, seq, d_model) with a fused QKV and an output projection.
OpSpec SelfAttention() {
  OpSpec s;
  s.name = "self_attention";
  s.category = "attention";
  s.ranks = {3};
  s.heavy = true;
  s.start = [](Builder& b, int) {
    Rng& r = b.rng();
    int bs = b.NewVar("batch_size", VarRole::kBatch, r.Pick<int64_t>({2, 4, 8}));
    int sl = b.NewVar("seq_len", VarRole::kSequence, r.Pick<int64_t>({64, 128, 256}));
    int d = b.NewVar("d_model", VarRole::kFeature, r.Pick<int64_t>({128, 256, 512}));
    return b.NewInput({bs, sl, d});
  };
  s.propose = [](Builder& b, int x, Node* n) {
    const Dim& d = b.shape(x).back();
    if (d.var < 0) return false;
    std::vector<int64_t> heads;
    for (int64_t h : {2, 4, 8}) {
      if (d.n % h == 0 && d.n / h >= 8) heads.push_back(h);
    }
    if (heads.empty()) return false;
    n->args = {x};
    n->vars["d_model"] = d.var;
    n->ints["heads"] = b.rng().Pick(heads);
    return true;
  };
  s.infer = [](const Node& n, const InferArgs& a, Shape* out) {
    const Dim& d = a.in[0].back();
    if (d.n % n.ints.at("heads") != 0) return Status::Invalid("d_model not divisible by heads");
    *a.bound |= d.deps;
    *out = a.in[0];
    return Status::Ok();
  };
  s.emit = [](const Node& n, const EmitCtx& c) {
    Emitted e;
    std::string d = c.var(n.vars.at("d_model")), h = Int(n.ints.at("heads")), t = c.tag;
    std::string qkv = "qkv" + t, att = "att" + t, bs = "b" + t, sl = "s" + t;
    e.init.push_back("self." + c.attr + "_qkv = nn.Linear(" + d + ", 3 * " + d + ")");
    e.init.push_back("self." + c.attr + "_proj = nn.Linear(" + d + ", " + d + ")");
    e.pre.push_back(bs + ", " + sl + ", _ = " + c.args[0] + ".shape");
    e.pre.push_back(qkv + " = self." + c.attr + "_qkv(" + c.args[0] + ").view(" + bs + ", " + sl +
                    ", 3, " + h + ", -1).permute(2, 0, 3, 1, 4)");
    e.pre.push_back(att + " = torch.softmax(" + qkv + "[0] @ " + qkv + "[1].transpose(-2, -1) * " +
                    qkv + ".shape[-1] ** -0.5, dim=-1)");
    e.expr = "self." + c.attr + "_proj((" + att + " @ " + qkv + "[2]).transpose(1, 2).reshape(" +
             bs + ", " + sl + ", -1))";
    return e;
  };
  s.cost = [](const Node& n, const std::vector<Shape>& in, const Shape& out, int eb) {
    const Shape& x = in[0];
    double h = static_cast<double>(n.ints.at("heads"));
    double bs = static_cast<double>(x[0].n), sl = static_cast<double>(x[1].n),
           d = static_cast<double>(x[2].n);
    Cost c = PointwiseCost(in, out, eb);
    c.flops = 8.0 * bs * sl * d * d + 4.0 * bs * sl * sl * d;
    c.params = 4.0 * d * d;
    c.bytes += (c.params + 6.0 * bs * sl * d + 3.0 * bs * h * sl * sl) * eb;
    return c;
  };
  return s;
}

}  // namespace

void AddDenseOps(std::vector<OpSpec>* t) {
  t->push_back(Matmul());
  t->push_back(Bmm());
  t->push_back(Linear());
  t->push_back(Attention());
  t->push_back(SelfAttention());
}

}  // namespace kf::synth
