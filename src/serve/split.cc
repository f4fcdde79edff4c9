#include "serve/split.h"

#include <array>

namespace kf::serve {
namespace {

// The text that opens the assistant's turn in common chat templates; what follows the last
// one is the model's. (Plain-text roles such as "Assistant:" are left out: a prompt or an
// answer may say that in prose.)
constexpr std::array<std::string_view, 10> kAssistantMarkers = {
    "<|im_start|>assistant",                          // ChatML: Qwen, Yi, InternLM, Phi-4
    "<|start_header_id|>assistant<|end_header_id|>",  // Llama 3.x
    "<|header_start|>assistant<|header_end|>",        // Llama 4
    "[/INST]",                                        // Llama 2, Mistral, Mixtral
    "<\xEF\xBD\x9C"
    "Assistant\xEF\xBD\x9C>",                     // DeepSeek V3/R1: <｜Assistant｜>
    "<start_of_turn>model",                       // Gemma
    "<|assistant|>",                              // Phi-3, GLM-4, Zephyr
    "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",   // Command R
    "<|start_of_role|>assistant<|end_of_role|>",  // Granite
    "<|Assistant|>",                              // DeepSeek, as some tokenizers decode it
};

// The text that opens any turn (of any role) in the same templates. After the last assistant
// marker, one of these means a later turn of another role.
constexpr std::array<std::string_view, 14> kTurnStarts = {
    "<|im_start|>",
    "<|start_header_id|>",
    "<|header_start|>",
    "[INST]",
    "<\xEF\xBD\x9C"
    "User\xEF\xBD\x9C>",  // <｜User｜>
    "<start_of_turn>",
    "<|user|>",
    "<|system|>",
    "<|observation|>",
    "<|START_OF_TURN_TOKEN|>",
    "<|start_of_role|>",
    "<|User|>",
    "<|tool|>",
    "<|function|>",
};

// The text that ends a turn, or the whole sequence, in the same templates. The answer ends at
// the first one: what follows is padding (OpenRLHF pads on the right too) or turns the model
// was not asked for. Cutting there also lets a fence closed right before it ("```<|im_end|>",
// as models write it) close.
constexpr std::array<std::string_view, 13> kTurnEnds = {
    "<|im_end|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|end_of_text|>",
    "<|eot|>",
    "</s>",
    "<end_of_turn>",
    "<eos>",
    "<|end|>",
    "<\xEF\xBD\x9C"
    "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",  // DeepSeek
    "<|END_OF_TURN_TOKEN|>",
    "<|end_of_role|>",
};

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// The last assistant marker starting at or after `from`; npos when there is none.
size_t LastMarker(std::string_view text, size_t from, std::string_view* which) {
  size_t best = std::string_view::npos;
  for (std::string_view m : kAssistantMarkers) {
    size_t p = text.rfind(m);
    if (p == std::string_view::npos || p < from) continue;
    // Prefer the later start; at the same start the longer marker (it holds the shorter).
    if (best == std::string_view::npos || p > best || (p == best && m.size() > which->size())) {
      best = p;
      *which = m;
    }
  }
  return best;
}

// The first turn start at or after `from`, or npos.
size_t FirstTurnStart(std::string_view text, size_t from, std::string_view* which) {
  size_t best = std::string_view::npos;
  for (std::string_view t : kTurnStarts) {
    size_t p = text.find(t, from);
    if (p != std::string_view::npos && (best == std::string_view::npos || p < best)) {
      best = p;
      *which = t;
    }
  }
  return best;
}

// Whether `text` ends with "<think>" and whitespace: the template opened the model's
// reasoning for it (DeepSeek R1, Qwen3), so the answer begins inside a think block.
bool EndsInOpenThink(std::string_view text) {
  size_t end = text.size();
  while (end > 0 && IsSpace(text[end - 1])) --end;
  return end >= kThinkOpen.size() &&
         text.substr(end - kThinkOpen.size(), kThinkOpen.size()) == kThinkOpen;
}

// Moves the span past reasoning: the answer follows the first "</think>"; a think block that
// opens the answer and never closes leaves no answer.
void SkipReasoning(std::string_view text, std::string_view before, Span* s) {
  std::string_view body = s->Of(text);
  size_t close = body.find(kThinkClose);
  if (close != std::string_view::npos) {
    size_t skip = close + kThinkClose.size();
    s->reasoning_bytes = skip;
    s->offset_bytes += skip;
    s->length_bytes -= skip;
    return;
  }
  size_t first = 0;
  while (first < body.size() && IsSpace(body[first])) ++first;
  if (body.substr(first, kThinkOpen.size()) == kThinkOpen || EndsInOpenThink(before)) {
    s->method = Span::Method::kNone;
    s->length_bytes = 0;
    s->why = "the response's reasoning (<think>) never ended: there is no answer after it";
  }
}

Span From(Span::Method m, size_t offset, size_t size) {
  Span s;
  s.method = m;
  s.offset_bytes = offset;
  s.length_bytes = size - offset;
  return s;
}

// An assistant marker inside an answer moves its start past the marker (what follows is still
// the model's, and text before it may be a quoted conversation).
void PastInnerMarker(std::string_view text, Span* s) {
  std::string_view m;
  size_t p = LastMarker(text, s->offset_bytes, &m);
  if (p == std::string_view::npos) return;
  s->marker = std::string(m);
  s->offset_bytes = p + m.size();
  s->length_bytes = text.size() - s->offset_bytes;
}

// Ends the answer at the first end-of-turn text in it.
void CutAtTurnEnd(std::string_view text, Span* s) {
  std::string_view body = s->Of(text);
  size_t best = std::string_view::npos;
  std::string_view which;
  for (std::string_view e : kTurnEnds) {
    size_t p = body.find(e);
    if (p != std::string_view::npos && p < best) {
      best = p;
      which = e;
    }
  }
  if (best == std::string_view::npos) return;
  s->end_marker = std::string(which);
  s->length_bytes = best;
}

}  // namespace

const char* MethodName(Span::Method m) {
  switch (m) {
    case Span::Method::kAfterPrompt:
      return "after_prompt";
    case Span::Method::kAfterMarker:
      return "after_marker";
    case Span::Method::kWholeResponse:
      return "response";
    case Span::Method::kNone:
      break;
  }
  return "none";
}

Span SplitQuery(std::string_view query, std::string_view prompt) {
  Span s;
  size_t p = prompt.empty() ? std::string_view::npos : query.rfind(prompt);
  if (p != std::string_view::npos) {
    s = From(Span::Method::kAfterPrompt, p + prompt.size(), query.size());
    PastInnerMarker(query, &s);
  } else {
    std::string_view m;
    size_t a = LastMarker(query, 0, &m);
    const std::string lead = prompt.empty()
                                 ? "no prompt was sent"
                                 : "the prompt does not occur in the query (were both decoded "
                                   "the same way?)";
    if (a == std::string_view::npos) {
      s.why = lead + " and the query holds no assistant-turn marker of a known chat template";
      return s;
    }
    s = From(Span::Method::kAfterMarker, a + m.size(), query.size());
    s.marker = std::string(m);
    std::string_view t;
    if (FirstTurnStart(query, s.offset_bytes, &t) != std::string_view::npos) {
      Span none;
      none.why = lead + ", and a '" + std::string(t) + "' turn follows the last '" +
                 std::string(m) + "': the query may end in a prompt turn";
      return none;
    }
  }
  CutAtTurnEnd(query, &s);
  SkipReasoning(query, query.substr(0, s.offset_bytes), &s);
  return s;
}

Span SplitResponse(std::string_view response, std::string_view prompt) {
  Span s = From(Span::Method::kWholeResponse, 0, response.size());
  size_t p = prompt.empty() ? std::string_view::npos : response.rfind(prompt);
  if (p != std::string_view::npos)
    s = From(Span::Method::kAfterPrompt, p + prompt.size(), response.size());
  PastInnerMarker(response, &s);
  if (!s.marker.empty() && s.method == Span::Method::kWholeResponse) {
    s.method = Span::Method::kAfterMarker;
  }
  CutAtTurnEnd(response, &s);
  // The prompt's end tells whether the template opened a think block for the response.
  SkipReasoning(response, s.offset_bytes == 0 ? prompt : response.substr(0, s.offset_bytes), &s);
  return s;
}

nlohmann::json SpanJson(const Span& s) {
  nlohmann::json j = {{"method", MethodName(s.method)},
                      {"offset_bytes", s.offset_bytes},
                      {"length_bytes", s.length_bytes}};
  if (!s.marker.empty()) j["marker"] = s.marker;
  if (!s.end_marker.empty()) j["end_marker"] = s.end_marker;
  if (s.reasoning_bytes > 0) j["reasoning_bytes"] = s.reasoning_bytes;
  if (!s.why.empty()) j["why"] = s.why;
  return j;
}

}  // namespace kf::serve
