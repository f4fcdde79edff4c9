// Indexing and scatter ops (with int64 index inputs), concatenation and layout ops.
#include "synth/ops.h"

namespace kf::synth {
namespace {

bool SameDim(const Dim& a, const Dim& b) { return a.n == b.n && a.deps == b.deps; }

int64_t DrawDim(Builder& b, int x) {
  return b.rng().Uniform(1, static_cast<int64_t>(b.shape(x).size()) - 1);
}

// gather and scatter_add: an index tensor of x's own shape, values in [0, x.size(dim)).
OpSpec SameShapeIndex(std::string name,
                      const std::function<std::string(const EmitCtx&, int64_t)>& expr,
                      double bytes_factor) {
  OpSpec s;
  s.name = std::move(name);
  s.category = "index";
  s.ranks = {2, 3, 4};
  s.propose = [](Builder& b, int x, Node* n) {
    auto dims = b.DimVars(x);
    if (dims.empty()) return false;
    int64_t d = DrawDim(b, x);
    n->ints["dim"] = d;
    n->args = {x, b.NewInput(dims, "idx", true, dims[static_cast<size_t>(d)])};
    return true;
  };
  s.infer = [](const Node&, const InferArgs& a, Shape* out) {
    if (a.in[0].size() != a.in[1].size()) return Status::Invalid("index rank differs");
    for (size_t i = 0; i < a.in[0].size(); ++i) {
      if (!SameDim(a.in[0][i], a.in[1][i])) return Status::Invalid("index shape differs");
    }
    *out = a.in[0];
    return Status::Ok();
  };
  s.emit = [expr](const Node& n, const EmitCtx& c) {
    return Emitted{{}, {}, expr(c, n.ints.at("dim"))};
  };
  s.cost = [bytes_factor](const Node&, const std::vector<Shape>& in, const Shape& out, int eb) {
    Cost c = PointwiseCost({in[0]}, out, eb);
    c.bytes = c.bytes * bytes_factor + static_cast<double>(Numel(in[1])) * 8;
    return c;
  };
  return s;
}

OpSpec IndexSelect() {
  OpSpec s;
  s.name = "index_select";
  s.category = "index";
  s.ranks = {2, 3, 4};
  s.propose = [](Builder& b, int x, Node* n) {
    int64_t d = DrawDim(b, x);
    const Dim& dim = b.shape(x)[static_cast<size_t>(d)];
    if (dim.var < 0) return false;
    int64_t count = std::max<int64_t>(1, dim.n * b.rng().Pick<int64_t>({1, 2, 4}) / 2);
    int num = b.NewVar("num_indices", VarRole::kCount, count);
    n->ints["dim"] = d;
    n->args = {x, b.NewInput({num}, "idx", true, dim.var)};
    return true;
  };
  s.infer = [](const Node& n, const InferArgs& a, Shape* out) {
    *out = a.in[0];
    auto d = static_cast<size_t>(n.ints.at("dim"));
    if (d >= out->size()) return Status::Invalid("no such dimension");
    (*out)[d] = a.in[1][0];
    return Status::Ok();
  };
  s.emit = [](const Node& n, const EmitCtx& c) {
    return Emitted{
        {},
        {},
        "torch.index_select(" + c.args[0] + ", " + Int(n.ints.at("dim")) + ", " + c.args[1] + ")"};
  };
  s.cost = [](const Node&, const std::vector<Shape>& in, const Shape& out, int eb) {
    Cost c = PointwiseCost({}, out, eb);
    c.bytes = 2.0 * static_cast<double>(Numel(out)) * eb + static_cast<double>(Numel(in[1])) * 8;
    return c;
  };
  return s;
}

OpSpec Concat() {
  OpSpec s;
  s.name = "concat";
  s.category = "shape";
  s.ranks = {2, 3, 4, 5};
  s.level1 = false;
  s.propose = [](Builder& b, int x, Node* n) {
    auto same = b.SameShape(x);
    int other = -1;
    if (!same.empty() && b.rng().Chance(0.6)) {
      other = b.rng().Pick(same);
    } else {
      auto dims = b.DimVars(x);
      if (dims.empty()) return false;
      other = b.NewInput(dims);
    }
    n->ints["dim"] = DrawDim(b, x);
    n->args = {x, other};
    return true;
  };
  s.infer = [](const Node& n, const InferArgs& a, Shape* out) {
    const Shape &p = a.in[0], &q = a.in[1];
    auto d = static_cast<size_t>(n.ints.at("dim"));
    if (p.size() != q.size() || d >= p.size()) return Status::Invalid("ranks differ");
    *out = p;
    for (size_t i = 0; i < p.size(); ++i) {
      if (i == d) {
        (*out)[i] = Dim{p[i].n + q[i].n, p[i].deps | q[i].deps, -1};
      } else if (!SameDim(p[i], q[i])) {
        return Status::Invalid("shapes differ outside the concatenated dimension");
      }
    }
    return Status::Ok();
  };
  s.emit = [](const Node& n, const EmitCtx& c) {
    return Emitted{
        {},
        {},
        "torch.cat([" + c.args[0] + ", " + c.args[1] + "], dim=" + Int(n.ints.at("dim")) + ")"};
  };
  s.cost = [](const Node&, const std::vector<Shape>& in, const Shape& out, int eb) {
    return PointwiseCost(in, out, eb);
  };
  return s;
}

OpSpec Transpose() {
  OpSpec s;
  s.name = "transpose";
  s.category = "shape";
  s.ranks = {3, 4};
  s.level1 = false;
  s.propose = [](Builder& b, int x, Node* n) {
    int64_t rank = static_cast<int64_t>(b.shape(x).size());
    int64_t a = b.rng().Uniform(1, rank - 2);
    n->ints["dim0"] = a;
    n->ints["dim1"] = b.rng().Uniform(a + 1, rank - 1);
    n->args = {x};
    return true;
  };
  s.infer = [](const Node& n, const InferArgs& a, Shape* out) {
    *out = a.in[0];
    std::swap((*out)[static_cast<size_t>(n.ints.at("dim0"))],
              (*out)[static_cast<size_t>(n.ints.at("dim1"))]);
    return Status::Ok();
  };
  s.emit = [](const Node& n, const EmitCtx& c) {
    return Emitted{{},
                   {},
                   c.args[0] + ".transpose(" + Int(n.ints.at("dim0")) + ", " +
                       Int(n.ints.at("dim1")) + ").contiguous()"};
  };
  s.cost = [](const Node&, const std::vector<Shape>& in, const Shape& out, int eb) {
    return PointwiseCost(in, out, eb);
  };
  return s;
}

OpSpec Flatten() {
  OpSpec s;
  s.name = "flatten";
  s.category = "shape";
  s.ranks = {3, 4, 5};
  s.level1 = false;
  s.propose = [](Builder&, int x, Node* n) {
    n->args = {x};
    return true;
  };
  s.infer = [](const Node&, const InferArgs& a, Shape* out) {
    Dim rest{1, 0, -1};
    for (size_t i = 1; i < a.in[0].size(); ++i) {
      rest.n *= a.in[0][i].n;
      rest.deps |= a.in[0][i].deps;
    }
    *out = {a.in[0][0], rest};
    return Status::Ok();
  };
  s.emit = [](const Node&, const EmitCtx& c) {
    return Emitted{{}, {}, "torch.flatten(" + c.args[0] + ", 1)"};
  };
  s.cost = [](const Node&, const std::vector<Shape>&, const Shape&, int) { return Cost{}; };
  return s;
}

}  // namespace

void AddIndexOps(std::vector<OpSpec>* t) {
  t->push_back(SameShapeIndex(
      "gather",
      [](const EmitCtx& c, int64_t d) {
        return "torch.gather(" + c.args[0] + ", " + Int(d) + ", " + c.args[1] + ")";
      },
      1.0));
  t->push_back(SameShapeIndex(
      "scatter_add",
      [](const EmitCtx& c, int64_t d) {
        return "torch.zeros_like(" + c.args[0] + ").scatter_add(" + Int(d) + ", " + c.args[1] +
               ", " + c.args[0] + ")";
      },
      1.5));
  t->push_back(IndexSelect());
  t->push_back(Concat());
  t->push_back(Transpose());
  t->push_back(Flatten());
}

}  // namespace kf::synth
