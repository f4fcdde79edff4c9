// Ops along one dimension: reductions, the softmax family, cumulative ops; and the norms.
#include "synth/ops.h"

namespace kf::synth {
namespace {

// A dimension other than the batch's: the last one more often than not.
int64_t DrawDim(Rng& r, size_t rank) {
  if (r.Chance(0.5)) return static_cast<int64_t>(rank) - 1;
  return r.Uniform(1, static_cast<int64_t>(rank) - 1);
}

// "-1" for the last dimension, else its index: how problems usually write it.
std::string DimText(const Node& n, int64_t rank) {
  int64_t d = n.ints.at("dim");
  return d == rank - 1 ? "-1" : Int(d);
}

struct AlongDim {
  bool reduces = false;  // the dimension goes away (or becomes 1 with keepdim)
  bool keepdim = false;  // the op takes a keepdim argument
  uint8_t dtypes = kAllDTypes;
  double flops = 1;
};

// f(x, dim=d[, keepdim=k]) + suffix, e.g. "torch.cummax" with suffix ".values".
OpSpec Along(std::string name, std::string category, const std::string& fn, AlongDim how,
             const std::string& suffix = "") {
  OpSpec s;
  s.name = std::move(name);
  s.category = std::move(category);
  s.ranks = {2, 3, 4, 5};
  s.dtypes = how.dtypes;
  s.propose = [how](Builder& b, int x, Node* n) {
    n->args = {x};
    size_t rank = b.shape(x).size();
    n->ints["rank"] = static_cast<int64_t>(rank);
    n->ints["dim"] = DrawDim(b.rng(), rank);
    if (how.keepdim) n->ints["keepdim"] = b.rng().Chance(0.4) ? 1 : 0;
    return true;
  };
  s.infer = [how](const Node& n, const InferArgs& a, Shape* out) {
    *out = a.in[0];
    if (!how.reduces) return Status::Ok();
    auto d = static_cast<size_t>(n.ints.at("dim"));
    if (d >= out->size()) return Status::Invalid("no such dimension");
    if (n.ints.count("keepdim") && n.ints.at("keepdim")) {
      (*out)[d] = Dim{1, 0, -1};
    } else {
      out->erase(out->begin() + static_cast<long>(d));
    }
    return Status::Ok();
  };
  s.emit = [fn, suffix](const Node& n, const EmitCtx& c) {
    Emitted e;
    e.expr = fn + "(" + c.args[0] + ", dim=" + DimText(n, n.ints.at("rank"));
    if (n.ints.count("keepdim") && n.ints.at("keepdim")) e.expr += ", keepdim=True";
    e.expr += ")" + suffix;
    return e;
  };
  s.cost = [how](const Node&, const std::vector<Shape>& in, const Shape& out, int eb) {
    return PointwiseCost(in, out, eb, how.flops);
  };
  return s;
}

// A norm over the last dim or over the channels (dim 1), with its layer built in __init__.
OpSpec Norm(std::string name, std::vector<int> ranks, bool channels) {
  OpSpec s;
  s.name = std::move(name);
  s.category = "norm";
  s.ranks = std::move(ranks);
  s.propose = [channels, nm = s.name](Builder& b, int x, Node* n) {
    const Shape& sx = b.shape(x);
    const Dim& d = channels ? sx[1] : sx.back();
    if (d.var < 0) return false;
    n->args = {x};
    n->vars["features"] = d.var;
    n->ints["rank"] = static_cast<int64_t>(sx.size());
    if (nm == "group_norm") {
      std::vector<int64_t> groups;
      for (int64_t g : {2, 4, 8, 16}) {
        if (d.n % g == 0 && g < d.n) groups.push_back(g);
      }
      if (groups.empty()) return false;
      n->ints["groups"] = b.rng().Pick(groups);
    }
    return true;
  };
  s.infer = [channels, nm = s.name](const Node& n, const InferArgs& a, Shape* out) {
    const Dim& d = channels ? a.in[0][1] : a.in[0].back();
    *a.bound |= d.deps;
    // PyTorch refuses batch statistics of a single value per channel.
    if (nm == "batch_norm" && Numel(a.in[0]) / d.n < 2) {
      return Status::Invalid("one value per channel");
    }
    if (n.ints.count("groups") && d.n % n.ints.at("groups") != 0) {
      return Status::Invalid("channels not divisible by the groups");
    }
    *out = a.in[0];
    return Status::Ok();
  };
  s.emit = [nm = s.name](const Node& n, const EmitCtx& c) {
    Emitted e;
    std::string f = c.var(n.vars.at("features"));
    std::string nd = Int(n.ints.at("rank") - 2) + "d";
    if (nm == "layer_norm") {
      e.init.push_back("self." + c.attr + " = nn.LayerNorm(" + f + ")");
    } else if (nm == "batch_norm") {
      // Batch statistics in train and eval mode alike, and no running state to drift.
      e.init.push_back("self." + c.attr + " = nn.BatchNorm" + nd + "(" + f +
                       ", track_running_stats=False)");
    } else {
      e.init.push_back("self." + c.attr + " = nn.GroupNorm(" + Int(n.ints.at("groups")) + ", " + f +
                       ")");
    }
    e.expr = "self." + c.attr + "(" + c.args[0] + ")";
    return e;
  };
  s.cost = [](const Node&, const std::vector<Shape>& in, const Shape& out, int eb) {
    Cost c = PointwiseCost(in, out, eb, 8);
    c.bytes *= 1.5;  // statistics first, then the normalised values
    return c;
  };
  return s;
}

// Norms without parameters, in functional form (nothing in __init__, no size fixed).
OpSpec FunctionalNorm(std::string name, std::vector<int> ranks,
                      const std::function<std::string(const std::string&)>& expr) {
  OpSpec s;
  s.name = std::move(name);
  s.category = "norm";
  s.ranks = std::move(ranks);
  s.propose = [](Builder&, int x, Node* n) {
    n->args = {x};
    return true;
  };
  s.infer = [nm = s.name](const Node&, const InferArgs& a, Shape* out) {
    // Instance statistics of a single spatial element are refused too.
    if (nm == "instance_norm" && Numel(a.in[0]) / (a.in[0][0].n * a.in[0][1].n) < 2) {
      return Status::Invalid("one spatial element");
    }
    *out = a.in[0];
    return Status::Ok();
  };
  s.emit = [expr](const Node&, const EmitCtx& c) {
    Emitted e;
    e.expr = expr(c.args[0]);
    return e;
  };
  s.cost = [](const Node&, const std::vector<Shape>& in, const Shape& out, int eb) {
    Cost c = PointwiseCost(in, out, eb, 6);
    c.bytes *= 1.5;
    return c;
  };
  return s;
}

}  // namespace

void AddReduceOps(std::vector<OpSpec>* t) {
  AlongDim reduce{.reduces = true, .keepdim = true};
  t->push_back(Along("sum", "reduction", "torch.sum", reduce));
  t->push_back(Along("mean", "reduction", "torch.mean", reduce));
  t->push_back(Along("amax", "reduction", "torch.amax", reduce));
  t->push_back(Along("amin", "reduction", "torch.amin", reduce));
  t->push_back(Along("var", "reduction", "torch.var",
                     AlongDim{.reduces = true, .keepdim = true, .dtypes = kNotF16, .flops = 3}));
  t->push_back(Along("norm", "reduction", "torch.linalg.vector_norm",
                     AlongDim{.reduces = true, .keepdim = true, .flops = 2}));
  t->push_back(Along("softmax", "softmax", "torch.softmax", AlongDim{.flops = 5}));
  t->push_back(Along("log_softmax", "softmax", "torch.log_softmax", AlongDim{.flops = 5}));
  t->push_back(Along("logsumexp", "softmax", "torch.logsumexp",
                     AlongDim{.reduces = true, .keepdim = true, .flops = 5}));
  t->push_back(Along("cumsum", "cumulative", "torch.cumsum", AlongDim{}));
  t->push_back(Along("cummax", "cumulative", "torch.cummax", AlongDim{}, ".values"));
  t->push_back(Along("logcumsumexp", "cumulative", "torch.logcumsumexp",
                     AlongDim{.dtypes = kNotF16, .flops = 5}));
  t->push_back(Norm("layer_norm", {2, 3, 4}, false));
  t->push_back(Norm("batch_norm", {3, 4, 5}, true));
  t->push_back(Norm("group_norm", {3, 4, 5}, true));
  t->push_back(FunctionalNorm("instance_norm", {3, 4, 5},
                              [](const std::string& x) { return "F.instance_norm(" + x + ")"; }));
  t->push_back(FunctionalNorm("rms_norm", {2, 3, 4}, [](const std::string& x) {
    return x + " * torch.rsqrt(" + x + ".pow(2).mean(dim=-1, keepdim=True) + 1e-06)";
  }));
}

}  // namespace kf::synth
