// rules: the catalog of kforge's legality rules, one entry per code a verdict can name (the
// tricks H01..H20 and the notes beside them): what it catches, what stops it, and the hint a
// model is shown. The static rules, the runtime rules and the timing checks take their hints
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
// The rule of `code`, or nullptr.
const Rule* FindRule(std::string_view code);
// Its hint; "" for a code that is not in the catalog.
std::string RuleHint(std::string_view code);
// The catalog as docs/RULES.md.
std::string RulesMarkdown();

}  // namespace kf
