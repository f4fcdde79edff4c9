// problems: the problems the reward service knows by id (problems::Registry, registered from
// folders at start-up), and the turning of a request item into a job.
//
// Thread-safety: filled before the server starts, then read-only (any number of threads).
#pragma once

#include <string>

#include "common/status.h"
#include "problems/registry.h"
#include "queue/job.h"
#include "serve/api.h"

namespace kf::serve {

using problems::Problem;

// The registry (shared with `kforge mcp`) plus what only HTTP requests need: making jobs.
class ProblemRegistry : public problems::Registry {
 public:
  // Problems sent as text (problem_source, or a label holding a problem's source) are refused
  // unless allowed; allowed, they are untrusted jobs (queue::JobSpec::problem_trusted false).
  void AllowInline(bool allow) { allow_inline_ = allow; }
  bool allows_inline() const { return allow_inline_; }

  // The job for one item: a registered problem, or an inline one (id "inline"). kNotFound
  // names an unknown id (and suggests problem_source only where inline problems are allowed);
  // kInvalidArgument an inline source that is no problem, or any inline source when they are
  // not allowed.
  Result<queue::JobSpec> MakeJob(const ItemRequest& item, const std::string& backend,
                                 const std::string& settings) const;

 private:
  bool allow_inline_ = false;
};

}  // namespace kf::serve
