// problems: the problems the reward service knows by id (registered from folders at start-up),
// and the turning of a request item into a job.
//
// Thread-safety: filled before the server starts, then read-only (any number of threads).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "queue/job.h"
#include "serve/api.h"

namespace kf::serve {

struct Problem {
  std::string id;  // "level1/relu"
  std::filesystem::path path;
  std::string text;
  std::string hash;
};

class ProblemRegistry {
 public:
  // Registers every *.py under `dir` that defines `class Model`, by its path relative to `dir`
  // without ".py" ("level1/relu" for DIR/level1/relu.py), and also by eval::ProblemId of its
  // path when that differs and is free. Fails if `dir` is not a folder or holds no problem.
  Status AddFolder(const std::filesystem::path& dir);
  const Problem* Find(const std::string& id) const;
  std::vector<const Problem*> List() const;  // each problem once, by id
  size_t size() const { return by_path_.size(); }

  // Problems sent as text (problem_source, or a label holding a problem's source) are refused
  // unless allowed; allowed, they are untrusted jobs (queue::JobSpec::problem_trusted false).
  void AllowInline(bool allow) { allow_inline_ = allow; }
  bool allows_inline() const { return allow_inline_; }

  // The job for one item: a registered problem, or an inline one (id "inline"). kNotFound
  // names an unknown id; kInvalidArgument an inline source that is no problem, or any inline
  // source when they are not allowed.
  Result<queue::JobSpec> MakeJob(const ItemRequest& item, const std::string& backend,
                                 const std::string& settings) const;

 private:
  std::map<std::string, Problem> by_path_;  // path -> problem
  std::map<std::string, std::string> ids_;  // id (and alias) -> path
  bool allow_inline_ = false;
};

}  // namespace kf::serve
