#include "problems/registry.h"

#include <algorithm>

#include "common/files.h"
#include "common/hash.h"
#include "eval/eval.h"
#include "queue/job.h"

namespace kf::problems {
namespace fs = std::filesystem;

bool DefinesModel(std::string_view source) {
  size_t start = 0;
  while (start < source.size()) {
    size_t end = source.find('\n', start);
    std::string_view line = source.substr(start, end == std::string_view::npos ? end : end - start);
    if (line.rfind("class Model(", 0) == 0 || line.rfind("class Model:", 0) == 0) return true;
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return false;
}

Result<std::vector<FoundProblem>> ProblemFiles(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".py") files.push_back(it->path());
  }
  if (ec) return Status::IoError("cannot list " + dir.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());
  std::vector<FoundProblem> problems;
  for (const auto& f : files) {
    auto read = ReadFile(f);
    if (read.ok() && DefinesModel(*read)) problems.push_back({f, std::move(*read)});
  }
  return problems;
}

Status Registry::AddFolder(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound("no problem folder " + dir.string());
  size_t before = by_path_.size();
  auto files = ProblemFiles(dir);
  if (!files.ok()) return files.status();
  for (auto& [f, text] : *files) {
    std::string rel = fs::relative(f, dir).replace_extension().generic_string();
    fs::path canonical = fs::canonical(f, ec);
    if (ec || !queue::ValidProblemId(rel)) continue;
    std::string hash = Sha256Hex(text);
    Problem p{rel, fs::absolute(f), canonical, std::move(text), std::move(hash)};
    std::string key = canonical.string();
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

const Problem* Registry::Find(const std::string& id) const {
  auto it = ids_.find(id);
  if (it == ids_.end()) return nullptr;
  return &by_path_.at(it->second);
}

const Problem* Registry::FindFile(const fs::path& path) const {
  std::error_code ec;
  fs::path canonical = fs::canonical(path, ec);  // fails for a file that does not exist
  if (ec) return nullptr;
  auto it = by_path_.find(canonical.string());
  return it == by_path_.end() ? nullptr : &it->second;
}

const Problem* Registry::Resolve(const std::string& id_or_path) const {
  if (id_or_path.empty()) return nullptr;
  if (const Problem* p = Find(id_or_path)) return p;
  return FindFile(id_or_path);
}

std::vector<const Problem*> Registry::List() const {
  std::map<std::string, const Problem*> by_id;
  for (const auto& [path, p] : by_path_) by_id[p.id] = &p;
  std::vector<const Problem*> out;
  out.reserve(by_id.size());
  for (const auto& [id, p] : by_id) out.push_back(p);
  return out;
}

}  // namespace kf::problems
