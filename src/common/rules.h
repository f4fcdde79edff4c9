// rules: the catalog of kforge's legality rules, one entry per code a verdict can name (the
// tricks H01..H20 and the notes beside them): what it catches, what stops it, and the hint a
// model is shown; and, where a rule reads differently for Triton candidates (their kernels are
// @triton.jit functions, not load_inline sources), how it reads for them. The static rules, the runtime rules and the timing checks take their hints
// from here, and docs/RULES.md is this table (`kforge rules --markdown`, checked by a test).
//
// Thread-safety: immutable data.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kf {

struct Rule {
  const char* code;     // "H01", or a note's code ("H03_guard")
  const char* name;     // "torch-fallback"
  const char* catches;  // the trick, in one sentence
  const char* stops;    // what ends it (cheat or incorrect) in kforge
  const char* hint;     // what the candidate should do instead, shown with every finding
  bool note = false;    // an info diagnostic that ends nothing
};

const std::vector<Rule>& Rules();

// A rule as it applies to Triton candidates, where that differs from load_inline's wording. A
// code without an entry reads the same for both families.
struct TritonRule {
  const char* code;     // a code of Rules()
  const char* catches;  // the trick as a Triton candidate plays it
  const char* stops;
  const char* hint;
};
const std::vector<TritonRule>& TritonRules();

// The rule of `code`, or nullptr.
const Rule* FindRule(std::string_view code);
// Its hint; "" for a code that is not in the catalog. `family` "triton" gives Triton's wording
// where it has one (backend::FamilyName; common cannot name the enum).
std::string RuleHint(std::string_view code, std::string_view family = "");
// The catalog as docs/RULES.md.
std::string RulesMarkdown();

}  // namespace kf
