// The honest candidates shipped with kforge must pass every static rule: a false positive here
// would turn a correct kernel into a `cheat` verdict.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/rules.h"
#include "extract/extract.h"
#include "legality/legality.h"

namespace kf::legality {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> HonestExamples() {
  const fs::path root = KFORGE_SOURCE_DIR;
  std::vector<fs::path> files;
  for (const char* dir : {"examples/cpu", "examples/cuda", "examples/cpu/broken",
                          "examples/cuda/broken", "tests/integration/data"}) {
    if (!fs::is_directory(root / dir)) continue;
    for (const auto& e : fs::directory_iterator(root / dir)) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".py" || ext == ".md")) files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(LegalityExamplesTest, HonestExamplesHaveNoFindings) {
  const std::vector<fs::path> files = HonestExamples();
  ASSERT_GE(files.size(), 20u);  // the examples moved or the source dir is wrong
  for (const fs::path& p : files) {
    const extract::Candidate c = extract::Extract(ReadFile(p));
    for (const Diagnostic& d : Check(c)) {
      if (d.severity != Severity::kError) continue;  // notes (a watched guard) are not findings
      ADD_FAILURE() << p << ":" << d.line << ": " << d.code << " " << d.message << "\n  "
                    << d.excerpt;
    }
  }
}

// Every finding the static rules make on the red team (the cheats of docs/RULES.md) names a code
// of the rule catalog and carries that rule's hint: one text per rule, in one place. With
// kernel-source CUDA graphs allowed too (the kernelbench policy), whose notes are codes of the
// catalog as well.
TEST(LegalityExamplesTest, RedTeamFindingsUseTheRuleCatalog) {
  const fs::path root = KFORGE_SOURCE_DIR;
  LegalityOptions graphs;
  graphs.allow_graphs = true;
  int findings = 0, graph_notes = 0;
  for (const LegalityOptions& opt : {LegalityOptions{}, graphs}) {
    for (const char* dir : {"tests/redteam/cpu", "tests/redteam/cuda"}) {
      for (const auto& e : fs::directory_iterator(root / dir)) {
        if (e.path().extension() != ".py") continue;
        for (const Diagnostic& d : Check(extract::Extract(ReadFile(e.path())), opt)) {
          ++findings;
          if (d.code == "H07_graph") ++graph_notes;
          const Rule* r = FindRule(d.code);
          ASSERT_NE(r, nullptr) << e.path() << ": code " << d.code << " is not in the catalog";
          EXPECT_EQ(d.hint, r->hint) << e.path() << ": " << d.code;
          EXPECT_EQ(d.severity == Severity::kInfo, r->note) << e.path() << ": " << d.code;
        }
      }
    }
  }
  EXPECT_GE(findings, 80);
  EXPECT_GE(graph_notes, 3);  // the kernel-source graph cases of tests/redteam/cuda
}

}  // namespace
}  // namespace kf::legality
