// Test helpers: run extract and the static rules on a snippet, summarise findings compactly.
#pragma once

#include <string>
#include <vector>

#include "extract/extract.h"
#include "legality/legality.h"

namespace kf::legality::testing {

// Eight lines that every snippet starts with: imports and one honest extension `ext`.
inline constexpr char kPrelude[] =
    "import torch\n"                                                       // 1
    "import torch.nn as nn\n"                                              // 2
    "from torch.utils.cpp_extension import load_inline\n"                  // 3
    "src = r'''\n"                                                         // 4
    "torch::Tensor f(torch::Tensor x) { return torch::empty_like(x); }\n"  // 5
    "'''\n"                                                                // 6
    "ext = load_inline(name='e', cpp_sources=src, functions=['f'])\n"      // 7
    "\n";                                                                  // 8

// "H01:12 H03:14": code and submitted line of each finding, in order.
inline std::string Summary(const std::vector<Diagnostic>& ds) {
  std::string s;
  for (const Diagnostic& d : ds)
    s += (s.empty() ? "" : " ") + d.code + ":" + std::to_string(d.line);
  return s;
}

// Findings for kPrelude + `body` (so the body's first line is line 9).
inline std::vector<Diagnostic> CheckBody(const std::string& body, LegalityOptions opt = {}) {
  return Check(extract::Extract(std::string(kPrelude) + body), opt);
}
inline std::string Findings(const std::string& body, LegalityOptions opt = {}) {
  return Summary(CheckBody(body, opt));
}

// A ModelNew whose forward(self, x, y) body is `forward` (already indented 8 spaces); the
// body's first line is line 13.
inline std::string WithForward(const std::string& forward, const std::string& extra = "") {
  return "class ModelNew(nn.Module):\n"      // 9
         "    def __init__(self):\n"         // 10
         "        super().__init__()\n"      // 11
         "    def forward(self, x, y):\n" +  // 12 -> body starts at 13
         forward +
         extra;
}

}  // namespace kf::legality::testing
