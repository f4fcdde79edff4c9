#include "serve/problems.h"

#include <fstream>
#include <sstream>

#include "common/hash.h"
#include "eval/eval.h"

namespace kf::serve {
namespace fs = std::filesystem;

Status ProblemRegistry::AddFolder(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound("no problem folder " + dir.string());
  size_t before = by_path_.size();
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".py") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    if (text.find("class Model") == std::string::npos) continue;
    std::string rel = fs::relative(f, dir).replace_extension().generic_string();
    if (!queue::ValidProblemId(rel)) continue;
    Problem p{rel, fs::absolute(f), text, Sha256Hex(text)};
    std::string key = p.path.string();
    ids_[rel] = key;
    std::string alias = eval::ProblemId(f);
    if (alias != rel && ids_.count(alias) == 0 && queue::ValidProblemId(alias)) ids_[alias] = key;
    by_path_[key] = std::move(p);
  }
  if (by_path_.size() == before) {
    return Status::NotFound("no problem (a .py file defining class Model) under " + dir.string());
  }
  return Status::Ok();
}

const Problem* ProblemRegistry::Find(const std::string& id) const {
  auto it = ids_.find(id);
  if (it == ids_.end()) return nullptr;
  return &by_path_.at(it->second);
}

std::vector<const Problem*> ProblemRegistry::List() const {
  std::map<std::string, const Problem*> by_id;
  for (const auto& [path, p] : by_path_) by_id[p.id] = &p;
  std::vector<const Problem*> out;
  out.reserve(by_id.size());
  for (const auto& [id, p] : by_id) out.push_back(p);
  return out;
}

Result<queue::JobSpec> ProblemRegistry::MakeJob(const ItemRequest& item,
                                                const std::string& backend,
                                                const std::string& settings) const {
  if (!item.problem.empty()) {
    const Problem* p = Find(item.problem);
    if (!p) {
      return Status::NotFound("unknown problem '" + item.problem + "' in '" + item.field +
                              "' (GET /v1/problems lists the registered ones; or send the "
                              "problem's text as problem_source)");
    }
    // Registered under its own id, so verdicts say "level1/relu" whatever alias was used.
    queue::JobSpec job = queue::MakeJob(p->id, p->text, item.candidate, backend, settings);
    job.problem_trusted = true;
    return job;
  }
  if (!allow_inline_) {
    return Status::Invalid("'" + item.field +
                           "' sends a problem's text; this service evaluates only the problems "
                           "registered at start-up (GET /v1/problems lists them; send one's id). "
                           "The operator may allow problems sent as text with "
                           "--allow-inline-problems: they then run in a sandbox of their own");
  }
  if (item.problem_source.find("class Model") == std::string::npos ||
      item.problem_source.find("def get_inputs") == std::string::npos) {
    return Status::Invalid("the problem source in '" + item.field +
                           "' is not a KernelBench problem (it needs class Model and get_inputs)");
  }
  return queue::MakeJob("inline", item.problem_source, item.candidate, backend, settings);
}

}  // namespace kf::serve
