// Reading generate trajectories and bench verdicts into Samples.
#include <algorithm>
#include <fstream>

#include "common/files.h"
#include "data/data.h"

namespace kf::data {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The JSONL files a path names: itself, or every `name` below it (sorted, so the order of
// the examples does not depend on the file system).
Result<std::vector<fs::path>> Files(const fs::path& p, const std::string& name) {
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) return std::vector<fs::path>{p};
  if (!fs::is_directory(p, ec)) return Status::Invalid("no such file or folder: " + p.string());
  std::vector<fs::path> out;
  for (auto it = fs::recursive_directory_iterator(p, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file() && it->path().filename() == name) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) return Status::Invalid("no " + name + " under " + p.string());
  return out;
}

std::string Str(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

std::vector<model::Message> Messages(const json& j) {
  std::vector<model::Message> out;
  if (!j.is_array()) return out;
  for (const auto& m : j) {
    if (m.is_object()) out.push_back({Str(m, "role"), Str(m, "content")});
  }
  return out;
}

// The verdict of a record; false (with why) when it has none or it does not parse.
bool ReadVerdict(const json& rec, Verdict* v, std::string* why) {
  if (!rec.contains("verdict") || !rec["verdict"].is_object()) {
    *why = "no verdict";
    return false;
  }
  return VerdictFromJson(rec["verdict"], v, why);
}

void LoadTrajectories(const fs::path& file, Corpus* c) {
  std::ifstream in(file, std::ios::binary);
  std::map<int, Conversation> by_sample;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::string origin = file.string() + ":" + std::to_string(n);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      c->warnings.push_back(origin + ": not a JSON object");
      continue;
    }
    if (Str(j, "type") != "turn") continue;  // trajectory summaries are recomputed from turns
    Sample s;
    s.origin = origin;
    s.turn = j.value("turn", 0);
    s.messages = Messages(j.value("messages", json::array()));
    s.reply = Str(j, "reply");
    s.reasoning = Str(j, "reasoning");
    s.candidate = Str(j, "candidate");
    std::string why;
    if (!ReadVerdict(j, &s.verdict, &why)) {
      s.verdict = Verdict{};  // a failed model call: infra_error, never counted
    }
    s.problem = s.verdict.problem_id;
    s.problem_hash = s.verdict.problem_hash;
    int sample = j.value("sample", 0);
    auto& conv = by_sample[sample];
    conv.key = file.string() + "#" + std::to_string(sample);
    conv.turns.push_back(std::move(s));
  }
  for (auto& [sample, conv] : by_sample) {
    std::stable_sort(conv.turns.begin(), conv.turns.end(),
                     [](const Sample& a, const Sample& b) { return a.turn < b.turn; });
    // Turns without a verdict name no problem: they take the conversation's.
    std::string id, hash;
    for (const auto& t : conv.turns) {
      if (!t.problem.empty()) id = t.problem, hash = t.problem_hash;
    }
    if (id.empty()) {
      c->warnings.push_back(conv.key + ": no turn has a verdict; left out");
      continue;
    }
    for (auto& t : conv.turns) {
      if (t.problem.empty()) t.problem = id, t.problem_hash = hash;
    }
    c->conversations.push_back(std::move(conv));
  }
}

fs::path Resolve(const std::string& p, const fs::path& base) {
  std::error_code ec;
  if (p.empty() || fs::path(p).is_absolute() || fs::exists(p, ec)) return p;
  return base / p;
}

void LoadVerdicts(const fs::path& file, Corpus* c) {
  std::ifstream in(file, std::ios::binary);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::string origin = file.string() + ":" + std::to_string(n);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json j = json::parse(line, nullptr, false);
    Sample s;
    s.origin = origin;
    std::string why;
    if (j.is_discarded() || !j.is_object() || !ReadVerdict(j, &s.verdict, &why)) {
      c->warnings.push_back(origin + ": not a verdict record" + (why.empty() ? "" : ": " + why));
      continue;
    }
    s.problem = s.verdict.problem_id;
    if (s.problem.empty()) {
      std::string level = Str(j, "level"), problem = Str(j, "problem");
      s.problem = level.empty() ? problem : level + "/" + problem;
    }
    s.problem_hash = s.verdict.problem_hash;
    s.problem_path = Resolve(Str(j, "problem_path"), file.parent_path());
    s.candidate = Str(j, "candidate");
    s.reply = Str(j, "reply");
    s.messages = Messages(j.value("messages", json::array()));
    std::string sample = Str(j, "sample");
    if (s.candidate.empty() && !sample.empty()) {
      auto text = ReadFile(Resolve(sample, file.parent_path()));
      if (text.ok()) {
        s.candidate = std::move(*text);
      } else {
        c->warnings.push_back(origin + ": cannot read the sample " + sample +
                              " (counted for difficulty, never an example)");
      }
    }
    c->bench.push_back(std::move(s));
  }
}

}  // namespace

Result<Corpus> Load(const std::vector<fs::path>& trajectories,
                    const std::vector<fs::path>& verdicts) {
  Corpus c;
  for (const auto& p : trajectories) {
    auto files = Files(p, "trajectories.jsonl");
    if (!files.ok()) return files.status();
    for (const auto& f : *files) LoadTrajectories(f, &c);
  }
  for (const auto& p : verdicts) {
    auto files = Files(p, "verdicts.jsonl");
    if (!files.ok()) return files.status();
    for (const auto& f : *files) LoadVerdicts(f, &c);
  }
  return c;
}

}  // namespace kf::data
