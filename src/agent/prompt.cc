// Prompts: editable template files with {{placeholder}} substitution, and the shape text that
// tells the model exactly what the judge will pass in and expect back.
#include <set>
#include <sstream>

#include "agent/agent.h"
#include "common/files.h"

#ifndef KFORGE_SOURCE_DIR
#define KFORGE_SOURCE_DIR ""
#endif

namespace kf::agent {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Every placeholder a template may use; a name outside this list is a typo.
const std::set<std::string>& KnownNames() {
  static const std::set<std::string> kNames = {
      "problem_id", "problem_source",     "io_shapes", "backend",  "device", "output_format",
      "turn",       "previous_candidate", "status",    "feedback", "goal"};
  return kNames;
}

std::string Join(const json& list) {
  std::string out;
  if (!list.is_array()) {
    return list.dump();
  }
  for (size_t i = 0; i < list.size(); ++i) {
    out += (i ? ", " : "") + list[i].dump();
  }
  return out;
}

bool Contiguous(const json& shape, const json& stride) {
  if (!shape.is_array() || !stride.is_array() || shape.size() != stride.size()) {
    return false;
  }
  int64_t expect = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    int64_t n = shape[i].get<int64_t>();
    if (n != 1 && stride[i].get<int64_t>() != expect) {
      return false;
    }
    expect *= n;
  }
  return true;
}

void DescribeList(const json& items, const std::string& prefix, std::string* out) {
  if (!items.is_array()) {
    return;
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const json& m = items[i];
    *out += "  " + prefix + std::to_string(i) + ": ";
    if (m.contains("shape")) {
      *out += m.value("dtype", "?") + " tensor, shape [" + Join(m["shape"]) + "], stride [" +
              Join(m.value("stride", json::array())) + "], " +
              (Contiguous(m["shape"], m.value("stride", json::array())) ? "contiguous"
                                                                        : "not contiguous") +
              ", on " + m.value("device", "?") + "\n";
    } else {
      *out += "Python value " + m.value("value", m.dump()) + "\n";
    }
  }
}

}  // namespace

std::string Substitute(const std::string& tmpl, const std::map<std::string, std::string>& vars,
                       std::vector<std::string>* unknown) {
  std::string out;
  out.reserve(tmpl.size());
  size_t pos = 0;
  while (pos < tmpl.size()) {
    size_t open = tmpl.find("{{", pos);
    if (open == std::string::npos) {
      break;
    }
    size_t close = tmpl.find("}}", open + 2);
    if (close == std::string::npos) {
      break;
    }
    std::string name = tmpl.substr(open + 2, close - open - 2);
    // Trim, so {{ name }} works too.
    size_t b = name.find_first_not_of(" \t"), e = name.find_last_not_of(" \t");
    name = b == std::string::npos ? "" : name.substr(b, e - b + 1);
    out.append(tmpl, pos, open - pos);
    auto it = vars.find(name);
    if (it != vars.end()) {
      out += it->second;
    } else {
      out.append(tmpl, open, close + 2 - open);
      if (unknown) {
        unknown->push_back(name);
      }
    }
    pos = close + 2;
  }
  out.append(tmpl, pos, std::string::npos);
  return out;
}

Result<PromptTemplates> LoadTemplates(const fs::path& dir, const std::string& format) {
  PromptTemplates t;
  struct Entry {
    std::string file;
    std::string* into;
  };
  // A format may bring its own system message (system_triton.txt: the kernels are not
  // load_inline's); the others share system.txt.
  std::error_code ec;
  const std::string system =
      fs::exists(dir / ("system_" + format + ".txt"), ec) ? "system_" + format + ".txt" : "system.txt";
  for (const Entry& e :
       {Entry{system, &t.system}, Entry{"task.txt", &t.task}, Entry{"repair.txt", &t.repair},
        Entry{"format_" + format + ".txt", &t.format}}) {
    auto text = ReadFile(dir / e.file);
    if (!text.ok()) {
      return Status::NotFound("cannot read prompt template " + (dir / e.file).string());
    }
    std::vector<std::string> names;
    Substitute(*text, {}, &names);
    for (const auto& n : names) {
      if (!KnownNames().count(n)) {
        std::string known;
        for (const auto& k : KnownNames()) {
          known += (known.empty() ? "" : ", ") + k;
        }
        return Status::Invalid((dir / e.file).string() + ": unknown placeholder {{" + n +
                               "}} (known: " + known + ")");
      }
    }
    *e.into = std::move(*text);
  }
  return t;
}

fs::path DefaultPromptDir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path dir = exe.parent_path(); !dir.empty() && dir != dir.root_path();
         dir = dir.parent_path()) {
      if (fs::exists(dir / "prompts" / "task.txt")) {
        return dir / "prompts";
      }
    }
  }
  return fs::path(KFORGE_SOURCE_DIR) / "prompts";
}

std::string DescribeShapes(const execute::ProblemInfo& info) {
  std::string out =
      "Inputs (what get_inputs() returns; ModelNew.forward receives them in this order):\n";
  DescribeList(info.inputs, "input", &out);
  out += "Outputs (what Model.forward returns; ModelNew.forward must return the same):\n";
  DescribeList(info.outputs, "output", &out);
  out += "Constructor arguments (get_init_inputs(); ModelNew(*init_inputs) is built with them): " +
         (info.init_inputs.is_null() ? std::string("[]") : info.init_inputs.dump()) + "\n";
  return out;
}

namespace {

std::map<std::string, std::string> Vars(const PromptTemplates& t, const ProblemContext& c) {
  std::map<std::string, std::string> v = {{"problem_id", c.problem_id},
                                          {"problem_source", c.source},
                                          {"io_shapes", c.shapes},
                                          {"backend", c.backend},
                                          {"device", c.device}};
  v["output_format"] = Substitute(t.format, v);
  return v;
}

}  // namespace

std::vector<model::Message> FirstPrompt(const PromptTemplates& t, const ProblemContext& c) {
  auto v = Vars(t, c);
  return {{"system", Substitute(t.system, v)}, {"user", Substitute(t.task, v)}};
}

std::vector<model::Message> RepairPrompt(const PromptTemplates& t, const ProblemContext& c,
                                         int turn, const std::string& previous_candidate,
                                         const Verdict& previous, std::optional<double> target) {
  auto v = Vars(t, c);
  v["turn"] = std::to_string(turn);
  v["previous_candidate"] = previous_candidate;
  v["status"] = StatusName(previous.status);
  v["feedback"] = previous.feedback;
  if (previous.status != VerdictStatus::kOk) {
    v["goal"] = "Fix the problem described above and reply with the complete corrected program.";
  } else {
    std::ostringstream goal;
    goal << "It is correct. Make it faster";
    if (target) {
      goal << ": the goal is at least " << *target << "x the speed of eager PyTorch";
    }
    goal << ". Reply with the complete improved program.";
    v["goal"] = goal.str();
  }
  return {{"system", Substitute(t.system, v)},
          {"user", Substitute(t.task, v) + "\n\n" + Substitute(t.repair, v)}};
}

}  // namespace kf::agent
