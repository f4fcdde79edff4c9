#include "bench/discover.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "common/files.h"
#include "problems/registry.h"

namespace kf::bench {
namespace fs = std::filesystem;
namespace {

std::optional<int> TrailingNumber(const std::string& s) {
  size_t i = s.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(s[i - 1]))) --i;
  if (i == s.size() || s.size() - i > 6) return std::nullopt;
  return std::stoi(s.substr(i));
}

std::optional<int> LeadingNumber(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0 || i > 6 || (i < s.size() && s[i] != '_')) return std::nullopt;
  return std::stoi(s.substr(0, i));
}

bool DefinesModel(const fs::path& p) {
  auto text = ReadFile(p);
  return text.ok() && problems::DefinesModel(*text);
}

ProblemFile Describe(const fs::path& file) {
  ProblemFile p;
  p.path = file;
  p.level = file.parent_path().filename().string();
  if (p.level.empty()) p.level = ".";
  p.level_number = TrailingNumber(p.level);
  p.stem = file.stem().string();
  p.number = LeadingNumber(p.stem);
  return p;
}

bool SameLevel(const ProblemFile& p, const std::string& folder) {
  if (folder == p.level) return true;
  auto n = TrailingNumber(folder);
  return n && p.level_number && *n == *p.level_number;
}

}  // namespace

Result<std::vector<ProblemFile>> FindProblems(const std::vector<fs::path>& roots) {
  std::vector<ProblemFile> out;
  for (const auto& root : roots) {
    std::error_code ec;
    if (fs::is_regular_file(root, ec)) {
      out.push_back(Describe(root));
      continue;
    }
    if (!fs::is_directory(root, ec))
      return Status::NotFound("no such problem folder: " + root.string());
    std::vector<ProblemFile> here;
    for (const auto& e : fs::directory_iterator(root, ec)) {
      if (e.is_regular_file() && e.path().extension() == ".py" && DefinesModel(e.path())) {
        here.push_back(Describe(e.path()));
      }
    }
    if (ec) return Status::IoError("cannot list " + root.string() + ": " + ec.message());
    std::sort(here.begin(), here.end(), [](const ProblemFile& a, const ProblemFile& b) {
      if (a.number && b.number && *a.number != *b.number) return *a.number < *b.number;
      return a.stem < b.stem;
    });
    out.insert(out.end(), here.begin(), here.end());
  }
  return out;
}

Discovery MatchSamples(std::vector<ProblemFile> problems, const fs::path& samples_root) {
  Discovery d;
  d.problems = std::move(problems);
  static const std::regex kOurs(R"(sample_(\d+)(\..*)?)");
  static const std::regex kKernelBench(R"(level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py)");
  std::set<fs::path> seen;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(samples_root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    const fs::path& f = it->path();
    std::string name = f.filename().string();
    std::smatch m;
    std::vector<size_t> hits;
    int index = 0;
    if (std::regex_match(name, m, kKernelBench)) {
      int level = std::stoi(m[1]), number = std::stoi(m[2]);
      index = std::stoi(m[3]);
      for (size_t i = 0; i < d.problems.size(); ++i) {
        const auto& p = d.problems[i];
        if (p.level_number == level && p.number == number) hits.push_back(i);
      }
    } else if (std::regex_match(name, m, kOurs)) {
      index = std::stoi(m[1]);
      fs::path rel = fs::relative(f, samples_root, ec);
      auto parts = std::vector<fs::path>(rel.begin(), rel.end());
      if (parts.size() < 3) continue;
      std::string level = parts[parts.size() - 3].string();
      std::string pid = parts[parts.size() - 2].string();
      auto pid_number = LeadingNumber(pid);
      bool all_digits = pid_number && std::to_string(*pid_number) == pid;
      auto answers = [&](const ProblemFile& p) {
        return pid == p.stem || (all_digits && p.number == pid_number);
      };
      // A level folder named exactly like a problem folder is that folder, even when another
      // problem folder has the same level number (two KernelBench versions side by side:
      // v0-level1 and v01-level1); the number alone decides only when no name matches.
      for (size_t i = 0; i < d.problems.size(); ++i) {
        if (d.problems[i].level == level && answers(d.problems[i])) hits.push_back(i);
      }
      const bool named = !hits.empty();
      for (size_t i = 0; !named && i < d.problems.size(); ++i) {
        if (SameLevel(d.problems[i], level) && answers(d.problems[i])) hits.push_back(i);
      }
    } else {
      continue;
    }
    if (hits.empty()) {
      d.warnings.push_back("no problem for sample " + f.string());
    } else if (hits.size() > 1) {
      d.warnings.push_back("sample " + f.string() + " matches " + std::to_string(hits.size()) +
                           " problems (" + d.problems[hits[0]].path.string() + ", " +
                           d.problems[hits[1]].path.string() + "); skipped");
    } else if (seen.insert(f).second) {
      d.samples.push_back({f, hits[0], index});
    }
  }
  if (ec) d.warnings.push_back("cannot list " + samples_root.string() + ": " + ec.message());
  std::sort(d.samples.begin(), d.samples.end(), [](const SampleFile& a, const SampleFile& b) {
    if (a.problem != b.problem) return a.problem < b.problem;
    if (a.index != b.index) return a.index < b.index;
    return a.path < b.path;
  });
  return d;
}

}  // namespace kf::bench
