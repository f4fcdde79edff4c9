// A graph as a KernelBench-format problem file, and as the manifest's JSON.
#include <map>
#include <set>
#include <sstream>

#include "synth/internal.h"
#include "synth/ops.h"

namespace kf::synth {
namespace {

// Variables a layer's size is made of, in the order the layers use them: the model's init
// arguments.
std::vector<int> InitVars(const Graph& g) {
  std::vector<int> out;
  for (const auto& n : g.nodes) {
    for (const auto& [name, v] : n.vars) {
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
  }
  return out;
}

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? sep : "") + parts[i];
  return s;
}

}  // namespace

std::string EmitProblem(const Graph& g, const std::vector<Variant>& variants,
                        const std::string& docstring) {
  std::ostringstream o;
  o << "\"\"\"" << docstring << "\"\"\"\n"
    << "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n";
  for (const auto& v : g.vars) o << v.name << " = " << v.value << "\n";
  bool typed = g.dtype != DType::kF32;
  if (typed) o << "dtype = " << TorchDType(g.dtype) << "\n";
  if (!variants.empty()) {
    o << "# Other sizes this problem is valid for: kforge runs one extra correctness trial on "
         "each.\n"
      << "KFORGE_SHAPE_VARIANTS = [";
    for (size_t i = 0; i < variants.size(); ++i) {
      std::vector<std::string> kv;
      for (const auto& [var, val] : variants[i]) {
        kv.push_back("\"" + g.vars[static_cast<size_t>(var)].name + "\": " + std::to_string(val));
      }
      o << (i ? ", " : "") << "{" << Join(kv, ", ") << "}";
    }
    o << "]\n";
  }

  // Forward: a node's result takes its primary operand's name when nothing reads that operand
  // later (x = torch.relu(x)), else a fresh one.
  std::vector<int> last_use(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (int a : g.nodes[i].args) last_use[a] = static_cast<int>(i);
  }
  std::vector<std::string> name(g.values.size());
  std::vector<std::string> args;
  for (const auto& in : g.inputs) {
    name[in.value] = in.name;
    args.push_back(in.name);
  }
  std::vector<std::string> init, forward;
  std::map<std::string, int> layer_count;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    EmitCtx c;
    c.g = &g;
    for (int a : n.args) c.args.push_back(name[a]);
    c.attr = n.op + std::to_string(++layer_count[n.op]);
    c.tag = std::to_string(i + 1);
    Emitted e = FindOp(n.op)->emit(n, c);
    init.insert(init.end(), e.init.begin(), e.init.end());
    forward.insert(forward.end(), e.pre.begin(), e.pre.end());
    if (n.value == g.output && i + 1 == g.nodes.size()) {
      forward.push_back("return " + e.expr);
      break;
    }
    int primary = n.args[0];
    name[n.value] = last_use[primary] == static_cast<int>(i) ? name[primary] : "h" + c.tag;
    forward.push_back(name[n.value] + " = " + e.expr);
  }

  std::vector<std::string> init_args;
  for (int v : InitVars(g)) init_args.push_back(g.vars[static_cast<size_t>(v)].name);
  o << "\n\nclass Model(nn.Module):\n"
    << "    def __init__(self" << (init_args.empty() ? "" : ", " + Join(init_args, ", "))
    << "):\n        super().__init__()\n";
  for (const auto& line : init) o << "        " << line << "\n";
  if (typed && !init.empty()) o << "        self.to(dtype)\n";
  o << "\n    def forward(self, " << Join(args, ", ") << "):\n";
  for (const auto& line : forward) o << "        " << line << "\n";

  o << "\n\ndef get_inputs():\n";
  for (const auto& in : g.inputs) {
    std::vector<std::string> dims;
    for (int v : in.dims) dims.push_back(g.vars[static_cast<size_t>(v)].name);
    if (in.index) {
      std::string shape = dims.size() == 1 ? "(" + dims[0] + ",)" : "(" + Join(dims, ", ") + ")";
      o << "    " << in.name << " = torch.randint(0, "
        << g.vars[static_cast<size_t>(in.bound_var)].name << ", " << shape << ")\n";
    } else {
      o << "    " << in.name << " = torch.randn(" << Join(dims, ", ")
        << (typed ? ", dtype=dtype" : "") << ")\n";
    }
  }
  o << "    return [" << Join(args, ", ") << "]\n";
  o << "\n\ndef get_init_inputs():\n    return [" << Join(init_args, ", ") << "]\n";
  return o.str();
}

nlohmann::json GraphJson(const Graph& g) {
  using nlohmann::json;
  json inputs = json::array(), nodes = json::array();
  auto value_name = [&](int v) {
    auto [is_input, idx] = g.values[v];
    return is_input ? g.inputs[idx].name : "%" + std::to_string(idx);
  };
  for (const auto& in : g.inputs) {
    json dims = json::array();
    for (int v : in.dims) dims.push_back(g.vars[static_cast<size_t>(v)].name);
    json j = {{"name", in.name}, {"dims", dims}, {"kind", in.index ? "index" : "float"}};
    if (in.index) j["bound"] = g.vars[static_cast<size_t>(in.bound_var)].name;
    inputs.push_back(j);
  }
  for (const auto& n : g.nodes) {
    json args = json::array(), sizes = json::object();
    for (int a : n.args) args.push_back(value_name(a));
    for (const auto& [k, v] : n.vars) sizes[k] = g.vars[static_cast<size_t>(v)].name;
    json params = json::object();
    for (const auto& [k, v] : n.ints) params[k] = v;
    for (const auto& [k, v] : n.reals) params[k] = v;
    nodes.push_back({{"op", n.op}, {"args", args}, {"params", params}, {"sizes", sizes}});
  }
  return {{"dtype", DTypeName(g.dtype)},
          {"inputs", inputs},
          {"nodes", nodes},
          {"output", g.output < 0 ? "" : value_name(g.output)}};
}

}  // namespace kf::synth
