// Helpers for telling a model's reply from a bare Python file. Internal to extract;
// FirstFencedBlock itself is declared in extract.h.
#pragma once

#include <string_view>

namespace kf::extract {

// True when some line of `text` starts (after indentation) like Python does: import, from,
// def, class, a decorator, or `name = ...`. Used only to tell prose from code when a reply has
// no fenced block; the tokenizer decides whether the code is valid.
bool LooksLikePython(std::string_view text);

}  // namespace kf::extract
