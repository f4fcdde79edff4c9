// Convolutions (1d/2d/3d and transposed) and pooling.
#include "synth/ops.h"

namespace kf::synth {
namespace {

enum class Kind { kConv, kConvTranspose, kMaxPool, kAvgPool };

// Output size of one spatial dim; the dim keeps its variable only when the size is unchanged
// by construction (kernel 1, stride 1, no padding).
Dim Spatial(Kind kind, const Dim& in, int64_t k, int64_t s, int64_t p) {
  int64_t n =
      kind == Kind::kConvTranspose ? (in.n - 1) * s - 2 * p + k : (in.n + 2 * p - k) / s + 1;
  if (kind != Kind::kConvTranspose && in.n + 2 * p < k) n = 0;
  bool same = kind == Kind::kConv && k == 1 && s == 1 && p == 0;
  return Dim{n, in.deps, same ? in.var : -1};
}

double Prod(const Shape& s, size_t from) {
  double p = 1;
  for (size_t i = from; i < s.size(); ++i) p *= static_cast<double>(s[i].n);
  return p;
}

OpSpec Conv(Kind kind, int nd) {
  OpSpec s;
  std::string d = std::to_string(nd) + "d";
  bool transposed = kind == Kind::kConvTranspose;
  s.name = (transposed ? "conv_transpose" : "conv") + d;
  s.category = "conv";
  s.ranks = {nd + 2};
  s.heavy = true;
  s.propose = [kind, nd](Builder& b, int x, Node* n) {
    const Dim& c = b.shape(x)[1];
    if (c.var < 0) return false;
    Rng& r = b.rng();
    int64_t k;
    if (kind == Kind::kConvTranspose) {
      k = nd == 3 ? r.Pick<int64_t>({2, 3}) : r.Pick<int64_t>({2, 3, 4});
      n->ints["padding"] = k > 2 ? r.Pick<int64_t>({0, 1}) : 0;
    } else {
      k = nd == 1   ? r.Pick<int64_t>({3, 5, 7})
          : nd == 2 ? r.Pick<int64_t>({1, 3, 5})
                    : r.Pick<int64_t>({1, 3});
      n->ints["padding"] = r.Chance(0.5) ? k / 2 : 0;
    }
    n->ints["kernel"] = k;
    n->ints["stride"] = r.Chance(0.3) ? 2 : 1;
    n->ints["bias"] = r.Chance(0.7) ? 1 : 0;
    n->args = {x};
    n->vars["in_channels"] = c.var;
    n->vars["out_channels"] =
        b.NewVar("out_channels", VarRole::kChannel, r.Pick<int64_t>({8, 16, 32, 64}));
    return true;
  };
  s.infer = [kind](const Node& n, const InferArgs& a, Shape* out) {
    const Shape& x = a.in[0];
    *a.bound |= x[1].deps;
    *out = {x[0], a.Var(n.vars.at("out_channels"))};
    for (size_t i = 2; i < x.size(); ++i) {
      out->push_back(
          Spatial(kind, x[i], n.ints.at("kernel"), n.ints.at("stride"), n.ints.at("padding")));
    }
    return Status::Ok();
  };
  std::string cls = std::string(transposed ? "nn.ConvTranspose" : "nn.Conv") + d;
  s.emit = [cls](const Node& n, const EmitCtx& c) {
    Emitted e;
    std::string line = "self." + c.attr + " = " + cls + "(" + c.var(n.vars.at("in_channels")) +
                       ", " + c.var(n.vars.at("out_channels")) +
                       ", kernel_size=" + Int(n.ints.at("kernel"));
    if (n.ints.at("stride") != 1) line += ", stride=" + Int(n.ints.at("stride"));
    if (n.ints.at("padding") != 0) line += ", padding=" + Int(n.ints.at("padding"));
    if (!n.ints.at("bias")) line += ", bias=False";
    e.init.push_back(line + ")");
    e.expr = "self." + c.attr + "(" + c.args[0] + ")";
    return e;
  };
  s.cost = [kind, nd](const Node& n, const std::vector<Shape>& in, const Shape& out, int eb) {
    Cost c = PointwiseCost(in, out, eb);
    double kvol = 1;
    for (int i = 0; i < nd; ++i) kvol *= static_cast<double>(n.ints.at("kernel"));
    double cin = static_cast<double>(in[0][1].n), cout = static_cast<double>(out[1].n);
    // Every output (conv) or input (transposed) position meets cin * kvol weights per channel.
    const Shape& positions = kind == Kind::kConvTranspose ? in[0] : out;
    c.flops = 2.0 * static_cast<double>(positions[0].n) * Prod(positions, 2) * cin * cout * kvol;
    c.params = cin * cout * kvol;
    c.bytes += c.params * eb;
    return c;
  };
  return s;
}

OpSpec Pool(Kind kind, int nd) {
  OpSpec s;
  std::string d = std::to_string(nd) + "d";
  std::string fn = std::string(kind == Kind::kMaxPool ? "max_pool" : "avg_pool") + d;
  s.name = fn;
  s.category = "pool";
  s.ranks = {nd + 2};
  s.propose = [](Builder& b, int x, Node* n) {
    int64_t k = b.rng().Pick<int64_t>({2, 3});
    n->ints["kernel"] = k;
    n->ints["stride"] = b.rng().Chance(0.7) ? k : 1;
    n->args = {x};
    return true;
  };
  s.infer = [kind](const Node& n, const InferArgs& a, Shape* out) {
    const Shape& x = a.in[0];
    *out = {x[0], x[1]};
    for (size_t i = 2; i < x.size(); ++i) {
      out->push_back(Spatial(kind, x[i], n.ints.at("kernel"), n.ints.at("stride"), 0));
    }
    return Status::Ok();
  };
  s.emit = [fn](const Node& n, const EmitCtx& c) {
    std::string e = "F." + fn + "(" + c.args[0] + ", kernel_size=" + Int(n.ints.at("kernel"));
    if (n.ints.at("stride") != n.ints.at("kernel")) e += ", stride=" + Int(n.ints.at("stride"));
    return Emitted{{}, {}, e + ")"};
  };
  s.cost = [](const Node& n, const std::vector<Shape>& in, const Shape& out, int eb) {
    return PointwiseCost(in, out, eb, static_cast<double>(n.ints.at("kernel")));
  };
  return s;
}

OpSpec AdaptiveAvgPool2d() {
  OpSpec s;
  s.name = "adaptive_avg_pool2d";
  s.category = "pool";
  s.ranks = {4};
  s.propose = [](Builder& b, int x, Node* n) {
    n->ints["size"] = b.rng().Pick<int64_t>({1, 2, 4});
    n->args = {x};
    return true;
  };
  s.infer = [](const Node& n, const InferArgs& a, Shape* out) {
    const Shape& x = a.in[0];
    int64_t o = n.ints.at("size");
    if (x[2].n < o || x[3].n < o) return Status::Invalid("input smaller than the output");
    *out = {x[0], x[1], Dim{o, 0, -1}, Dim{o, 0, -1}};
    return Status::Ok();
  };
  s.emit = [](const Node& n, const EmitCtx& c) {
    return Emitted{
        {}, {}, "F.adaptive_avg_pool2d(" + c.args[0] + ", " + Int(n.ints.at("size")) + ")"};
  };
  s.cost = [](const Node&, const std::vector<Shape>& in, const Shape& out, int eb) {
    return PointwiseCost(in, out, eb);
  };
  return s;
}

}  // namespace

void AddConvOps(std::vector<OpSpec>* t) {
  for (int nd = 1; nd <= 3; ++nd) t->push_back(Conv(Kind::kConv, nd));
  for (int nd = 1; nd <= 3; ++nd) t->push_back(Conv(Kind::kConvTranspose, nd));
  for (int nd = 1; nd <= 3; ++nd) t->push_back(Pool(Kind::kMaxPool, nd));
  for (int nd = 1; nd <= 3; ++nd) t->push_back(Pool(Kind::kAvgPool, nd));
  t->push_back(AdaptiveAvgPool2d());
}

}  // namespace kf::synth
