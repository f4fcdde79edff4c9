// Where a candidate's Python can fall back: the lines of every `except` and `finally` block.
// A try/except guard is only a hint (an honest candidate may guard its build and never need
// the guard); what decides H03 is whether one of these lines runs during a trial or timed call,
// which the candidate host observes and the runtime rules judge (src/execute/runtime_rules.h).
#pragma once

#include <string_view>
#include <vector>

namespace kf::extract {

struct GuardBlock {
  int header_line = 0;  // the `except ...:` or `finally:` line (lines of the parsed code)
  int last_line = 0;    // the block's last line; == header_line for `except E: x = y`
  bool is_finally = false;
};

// The except/finally blocks of `code`, in source order, nested ones included. Code that does
// not parse has none (it never runs either).
std::vector<GuardBlock> FallbackGuards(std::string_view code);

}  // namespace kf::extract
