#include "serve/problems.h"

namespace kf::serve {

Result<queue::JobSpec> ProblemRegistry::MakeJob(const ItemRequest& item,
                                                const std::string& backend,
                                                const std::string& settings) const {
  if (!item.problem.empty()) {
    const Problem* p = Find(item.problem);
    if (!p) {
      // Advise only what this service takes: a problem's text only where it is allowed.
      return Status::NotFound(
          "unknown problem '" + item.problem + "' in '" + item.field +
          "' (GET /v1/problems lists the registered ones" +
          (allow_inline_ ? "; or send the problem's text as problem_source)" : ")"));
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
