// split: which part of a trainer's text is the model's answer, so that only the answer is
// evaluated. OpenRLHF posts the whole decoded sequence (left padding, special tokens, the chat
// template and the prompt, then the response) as `query`; a repair prompt carries the previous
// program, which must never earn the new response's reward. slime posts the response alone, but
// a response may still echo its prompt or hold a template.
//
// Pure functions of strings; offsets and lengths are in bytes of the UTF-8 text given.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace kf::serve {

struct Span {
  enum class Method {
    kAfterPrompt,    // after the last occurrence of the trainer's prompt
    kAfterMarker,    // after the last assistant-turn marker of a chat template
    kWholeResponse,  // slime's response as sent (nothing to cut)
    kNone,           // the answer cannot be told from the prompt: evaluate nothing
  };
  Method method = Method::kNone;
  size_t offset_bytes = 0;     // where the answer starts in the text given
  size_t length_bytes = 0;     // to the first end-of-turn text after it, or the text's end
  std::string marker;          // the assistant marker the answer follows, if one was used
  std::string end_marker;      // the end-of-turn text (<|im_end|>, <|eot_id|>...) it ends at
  size_t reasoning_bytes = 0;  // reasoning (<think>...</think>) skipped at the answer's start
  std::string why;             // kNone: why no answer could be found

  bool found() const { return method != Method::kNone; }
  std::string_view Of(std::string_view text) const {
    return text.substr(offset_bytes, length_bytes);
  }
};

const char* MethodName(Span::Method m);  // "after_prompt", "after_marker", "response", "none"

// OpenRLHF: `query` is prompt + response as the trainer decoded it (special tokens kept);
// `prompt` the prompt it generated from (may be empty when the trainer sent none).
//  1. The prompt, wherever it occurs: the answer follows its LAST occurrence. The query is
//     prefix + prompt + response, so any occurrence ends at or after the true boundary: the
//     text after the last one is a suffix of the response and can hold nothing of the prompt.
//     The first occurrence would be wrong: a response that repeats the prompt (and with it
//     the earlier program of a repair prompt) would bring that program into the answer.
//  2. Without the prompt in the query: the text after the last assistant-turn marker (ChatML
//     `<|im_start|>assistant`, Llama 3 `<|start_header_id|>assistant<|end_header_id|>`, ...),
//     provided no other turn starts after it (otherwise the query may end in a user turn whose
//     last assistant turn is the prompt's earlier answer: nothing is evaluated).
//  3. Neither: kNone.
// After 1 an assistant marker inside the remainder moves the start past it. In every case the
// answer ends at the first end-of-turn text (`<|im_end|>`, `<|eot_id|>`, `<|endoftext|>`,
// `</s>`, ...; padding and unasked-for turns follow it), and reasoning is skipped: the answer
// is what follows the first `</think>`; a `<think>` that opens the answer (or that the
// template opened) and never closes means the model never answered (kNone).
Span SplitQuery(std::string_view query, std::string_view prompt);

// slime: `response` is the model's output; it is all answer unless it echoes `prompt` (then
// what follows the echo's last occurrence) or holds an assistant marker or reasoning (as
// above).
Span SplitResponse(std::string_view response, std::string_view prompt);

// {"method", "offset_bytes", "length_bytes", "marker"?, "reasoning_bytes"?, "why"?}
nlohmann::json SpanJson(const Span& s);

}  // namespace kf::serve
