// A forgiving C++/CUDA lexer for kernel sources: identifiers (with `::` qualification joined),
// strings, #include paths and punctuation, comments dropped. Never fails. Internal to legality;
// src/similarity lexes kernel sources with it too (token n-grams for kforge synth and data).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kf::legality {

struct CppToken {
  enum class Kind { kIdent, kNumber, kString, kInclude, kPunct };
  Kind kind = Kind::kPunct;
  std::string text;  // kIdent: "at::cuda::getCurrentCUDAStream"; kString: the contents;
                     // kInclude: the path between <> or ""
  int line = 0;      // 1-based line in the source text
  int col = 0;       // 1-based
  size_t offset = 0;  // the same place as line and col, as an index into the source text
};

std::vector<CppToken> LexCpp(std::string_view src);

}  // namespace kf::legality
