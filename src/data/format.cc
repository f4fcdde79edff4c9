// The two layouts of an example line: OpenAI chat, or the columns verl's datasets read.
#include "data/data.h"

namespace kf::data {
using nlohmann::json;

std::string ToJsonl(const Output& out, Format format, bool rl) {
  std::string text;
  for (const auto& e : out.examples) {
    json line;
    if (format == Format::kChat) {
      line = {{"messages", model::ToJson(e.messages)}, {"metadata", e.metadata}};
    } else if (rl) {
      json extra = e.metadata;
      for (const char* k : {"data_source", "ability", "ground_truth"}) extra.erase(k);
      extra["split"] = "train";
      line = {{"data_source", e.metadata.value("data_source", "kforge")},
              {"prompt", model::ToJson(e.messages)},
              {"ability", e.metadata.value("ability", "kernel_generation")},
              {"reward_model",
               {{"style", "rule"}, {"ground_truth", e.metadata.value("ground_truth", "")}}},
              {"extra_info", extra}};
    } else {
      json extra = e.metadata;
      extra["split"] = "train";
      line = {{"messages", model::ToJson(e.messages)}, {"extra_info", extra}};
    }
    text += line.dump() + "\n";
  }
  return text;
}

}  // namespace kf::data
