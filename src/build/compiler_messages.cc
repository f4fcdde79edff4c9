#include <regex>
#include <sstream>

#include "build/build.h"

namespace kf::build {
namespace {

int CountLines(const std::string& s) {
  int n = 1;
  for (char c : s) n += c == '\n';
  if (!s.empty() && s.back() == '\n') --n;
  return n;
}

}  // namespace

std::vector<CompilerMessage> ParseCompilerOutput(const std::string& text) {
  // gcc/clang: /path/main.cpp:12:5: error: message
  static const std::regex kGcc(R"(^(?:.*/)?([^/\s:]+\.(?:cpp|cu|cuh|h|hpp)):(\d+):(\d+): (fatal error|error|warning|note): (.*)$)");
  // nvcc front end: /path/cuda.cu(12): error: message   (also "error #20: ...")
  static const std::regex kNvcc(R"(^(?:.*/)?([^/\s(]+\.(?:cu|cuh|cpp|h))\((\d+)\): (error|warning|remark)(?: #[\w-]+(?:-D)?)?: (.*)$)");
  static const std::regex kLink(R"((undefined (?:reference to|symbol:?) .*)$)");
  std::vector<CompilerMessage> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::smatch m;
    CompilerMessage msg;
    if (std::regex_search(line, m, kGcc)) {
      msg.file = m[1];
      msg.line = std::stoi(m[2]);
      msg.col = std::stoi(m[3]);
      msg.severity = m[4] == "fatal error" ? "error" : std::string(m[4]);
      msg.text = m[5];
    } else if (std::regex_search(line, m, kNvcc)) {
      msg.file = m[1];
      msg.line = std::stoi(m[2]);
      msg.severity = m[3] == "remark" ? "note" : std::string(m[3]);
      msg.text = m[4];
    } else if (std::regex_search(line, m, kLink)) {
      msg.severity = "error";
      msg.text = m[1];
    } else {
      continue;
    }
    msg.cuda = msg.file == "cuda.cu";
    out.push_back(std::move(msg));
  }
  return out;
}

void LocateMessages(const nlohmann::json& layout, const ExtensionSpec& spec,
                    std::vector<CompilerMessage>* messages) {
  for (auto& m : *messages) {
    if (m.file != "main.cpp" && m.file != "cuda.cu") continue;
    const auto& sources = m.cuda ? spec.cuda_sources : spec.cpp_sources;
    if (!layout.contains(m.file) || !layout[m.file].is_array()) continue;
    const auto& starts = layout[m.file];
    for (size_t i = 0; i < starts.size() && i < sources.size(); ++i) {
      int start = starts[i].is_number_integer() ? starts[i].get<int>() : 0;
      if (start <= 0) continue;
      int len = CountLines(sources[i]);
      if (m.line >= start && m.line < start + len) {
        m.source_index = static_cast<int>(i);
        m.source_line = m.line - start + 1;
        break;
      }
    }
  }
}

}  // namespace kf::build
