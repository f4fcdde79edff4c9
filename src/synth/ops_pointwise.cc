// Elementwise ops: activations, constants, binary ops on two tensors of one shape, and
// per-channel parameters (bias, scale).
#include "synth/ops.h"

namespace kf::synth {
namespace {

using ExprFn = std::function<std::string(const Node&, const std::string& x)>;
using DrawFn = std::function<void(Rng&, Node*)>;

Status SameAsFirst(const Node&, const InferArgs& a, Shape* out) {
  *out = a.in[0];
  return Status::Ok();
}

OpSpec Unary(std::string name, std::string category, const ExprFn& expr, const DrawFn& draw = {},
             uint8_t dtypes = kAllDTypes, double flops = 1) {
  OpSpec s;
  s.name = std::move(name);
  s.category = std::move(category);
  s.ranks = {2, 3, 4, 5};
  s.dtypes = dtypes;
  s.propose = [draw](Builder& b, int x, Node* n) {
    n->args = {x};
    if (draw) draw(b.rng(), n);
    return true;
  };
  s.infer = SameAsFirst;
  s.emit = [expr](const Node& n, const EmitCtx& c) {
    Emitted e;
    e.expr = expr(n, c.args[0]);
    return e;
  };
  s.cost = [flops](const Node&, const std::vector<Shape>& in, const Shape& out, int eb) {
    return PointwiseCost(in, out, eb, flops);
  };
  return s;
}

// a (op) b for two tensors of one shape: b is an earlier value of that shape (a residual) or a
// new input.
OpSpec Binary(std::string name, bool commutative,
              const std::function<std::string(const std::string&, const std::string&)>& expr) {
  OpSpec s;
  s.name = std::move(name);
  s.category = "binary";
  s.ranks = {2, 3, 4, 5};
  s.commutative = commutative;
  s.propose = [](Builder& b, int x, Node* n) {
    auto same = b.SameShape(x);
    bool residual = !same.empty() && (b.graph().level >= 3 || b.rng().Chance(0.5));
    if (residual) {
      n->args = {x, b.rng().Pick(same)};
      return true;
    }
    auto dims = b.DimVars(x);
    if (dims.empty()) return false;
    n->args = {x, b.NewInput(dims)};
    return true;
  };
  s.infer = [](const Node&, const InferArgs& a, Shape* out) {
    const Shape &p = a.in[0], &q = a.in[1];
    bool same = p.size() == q.size();
    for (size_t i = 0; same && i < p.size(); ++i) same = p[i].n == q[i].n && p[i].deps == q[i].deps;
    if (!same) return Status::Invalid("operands of different shapes");
    *out = p;
    return Status::Ok();
  };
  s.emit = [expr](const Node&, const EmitCtx& c) {
    Emitted e;
    e.expr = expr(c.args[0], c.args[1]);
    return e;
  };
  s.cost = [](const Node&, const std::vector<Shape>& in, const Shape& out, int eb) {
    return PointwiseCost(in, out, eb);
  };
  return s;
}

// x (op) a learned parameter broadcast along dim 1: the channels (rank >= 3) or the features
// (rank 2); shape (C, 1, ...) so it broadcasts over the trailing dims.
OpSpec ChannelParam(std::string name, const std::string& op_text) {
  OpSpec s;
  s.name = std::move(name);
  s.category = "elementwise";
  s.ranks = {2, 3, 4, 5};
  s.propose = [](Builder& b, int x, Node* n) {
    const Shape& sx = b.shape(x);
    if (sx[1].var < 0) return false;
    n->args = {x};
    n->vars["channels"] = sx[1].var;
    n->ints["trailing"] = static_cast<int64_t>(sx.size()) - 2;
    return true;
  };
  s.infer = [](const Node&, const InferArgs& a, Shape* out) {
    *a.bound |= a.in[0][1].deps;
    *out = a.in[0];
    return Status::Ok();
  };
  s.emit = [op_text](const Node& n, const EmitCtx& c) {
    Emitted e;
    std::string shape = c.var(n.vars.at("channels"));
    for (int64_t i = 0; i < n.ints.at("trailing"); ++i) shape += ", 1";
    e.init.push_back("self." + c.attr + " = nn.Parameter(torch.randn(" + shape + "))");
    e.expr = c.args[0] + " " + op_text + " self." + c.attr;
    return e;
  };
  s.cost = [](const Node&, const std::vector<Shape>& in, const Shape& out, int eb) {
    Cost c = PointwiseCost(in, out, eb);
    c.params = static_cast<double>(in[0][1].n);
    return c;
  };
  return s;
}

}  // namespace

void AddPointwiseOps(std::vector<OpSpec>* t) {
  auto call = [](const std::string& f) {
    return [f](const Node&, const std::string& x) { return f + "(" + x + ")"; };
  };
  t->push_back(Unary("relu", "activation", call("torch.relu")));
  t->push_back(Unary("gelu", "activation", call("F.gelu"), {}, kAllDTypes, 8));
  t->push_back(Unary(
      "gelu_tanh", "activation",
      [](const Node&, const std::string& x) { return "F.gelu(" + x + ", approximate=\"tanh\")"; },
      {}, kAllDTypes, 8));
  t->push_back(Unary("silu", "activation", call("F.silu"), {}, kAllDTypes, 4));
  t->push_back(Unary("sigmoid", "activation", call("torch.sigmoid"), {}, kAllDTypes, 4));
  t->push_back(Unary("tanh", "activation", call("torch.tanh"), {}, kAllDTypes, 4));
  t->push_back(Unary("softplus", "activation", call("F.softplus"), {}, kAllDTypes, 4));
  t->push_back(Unary("mish", "activation", call("F.mish"), {}, kAllDTypes, 8));
  t->push_back(Unary("hardswish", "activation", call("F.hardswish")));
  t->push_back(Unary("abs", "elementwise", call("torch.abs")));
  t->push_back(Unary(
      "leaky_relu", "activation",
      [](const Node& n, const std::string& x) {
        return "F.leaky_relu(" + x + ", negative_slope=" + Num(n.reals.at("slope")) + ")";
      },
      [](Rng& r, Node* n) {
        n->reals["slope"] = r.Pick<double>({0.01, 0.1, 0.2});
      }));
  t->push_back(Unary(
      "elu", "activation",
      [](const Node& n, const std::string& x) {
        return "F.elu(" + x + ", alpha=" + Num(n.reals.at("alpha")) + ")";
      },
      [](Rng& r, Node* n) {
        n->reals["alpha"] = r.Pick<double>({0.5, 1.0});
      },
      kAllDTypes, 4));
  t->push_back(Unary(
      "hardtanh", "activation",
      [](const Node& n, const std::string& x) {
        double m = n.reals.at("limit");
        return "F.hardtanh(" + x + ", min_val=" + Num(-m) + ", max_val=" + Num(m) + ")";
      },
      [](Rng& r, Node* n) {
        n->reals["limit"] = r.Pick<double>({1.0, 2.0});
      }));
  t->push_back(Unary(
      "clamp", "elementwise",
      [](const Node& n, const std::string& x) {
        return "torch.clamp(" + x + ", min=" + Num(n.reals.at("lo")) +
               ", max=" + Num(n.reals.at("hi")) + ")";
      },
      [](Rng& r, Node* n) {
        n->reals["lo"] = r.Pick<double>({-1.0, -0.5});
        n->reals["hi"] = r.Pick<double>({0.5, 1.0, 2.0});
      }));
  t->push_back(Unary(
      "scale", "elementwise",
      [](const Node& n, const std::string& x) { return x + " * " + Num(n.reals.at("c")); },
      [](Rng& r, Node* n) {
        n->reals["c"] = r.Pick<double>({0.5, 1.5, 2.0, 3.0});
      }));
  t->push_back(Binary("add", true, [](auto& a, auto& b) { return a + " + " + b; }));
  t->push_back(Binary("mul", true, [](auto& a, auto& b) { return a + " * " + b; }));
  t->push_back(Binary("sub", false, [](auto& a, auto& b) { return a + " - " + b; }));
  t->push_back(Binary("maximum", true,
                      [](auto& a, auto& b) { return "torch.maximum(" + a + ", " + b + ")"; }));
  t->push_back(ChannelParam("bias_add", "+"));
  t->push_back(ChannelParam("channel_scale", "*"));
}

}  // namespace kf::synth
