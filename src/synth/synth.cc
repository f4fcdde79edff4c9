// Synthesize: draw candidates by (seed, level, index), drop duplicates and near-copies, validate
// the rest in batches, keep the first `count` per level that pass, in index order. Which
// candidates are kept depends only on earlier indices, never on the batch size.
#include "synth/synth.h"

#include <algorithm>
#include <fstream>
#include <set>

#include "synth/internal.h"
#include "synth/ops.h"

namespace kf::synth {
namespace fs = std::filesystem;
using nlohmann::json;

std::vector<OpInfo> ListOps() {
  std::vector<OpInfo> out;
  for (const auto& op : Ops()) {
    OpInfo i{op.name, op.category, op.ranks, {}, op.heavy};
    for (DType d : {DType::kF32, DType::kBF16, DType::kF16}) {
      if (op.dtypes & DTypeBit(d)) i.dtypes.push_back(DTypeName(d));
    }
    out.push_back(std::move(i));
  }
  return out;
}

namespace {

struct Candidate {
  int level = 0, index = 0;
  Graph graph;
  std::vector<Variant> variants;
  std::string hash, source;
  std::vector<std::string> ops, signature;
  double estimate_ms = 0;
  json nearest = nullptr;
  fs::path staged;
};

struct Drop {
  int level, index;
  json record;
};

Status CheckOptions(const SynthOptions& o) {
  if (o.count < 1) return Status::Invalid("--count must be at least 1");
  if (o.levels.empty()) return Status::Invalid("--levels names no level");
  for (int l : o.levels) {
    if (l < 1 || l > 3) return Status::Invalid("levels are 1, 2 and 3, not " + std::to_string(l));
  }
  if (o.dtypes.empty()) return Status::Invalid("--dtypes names no dtype");
  for (const auto& d : o.dtypes) {
    DType t;
    if (!DTypeFromName(d, &t)) return Status::Invalid("unknown dtype " + d + " (fp32, bf16, fp16)");
  }
  for (const auto& op : o.ops) {
    if (FindOp(op) == nullptr)
      return Status::Invalid("unknown op " + op + " (kforge synth --list-ops)");
  }
  if (o.target_ms <= 0) return Status::Invalid("--target-ms must be positive");
  if (o.variants < 0) return Status::Invalid("--variants must not be negative");
  if (o.batch < 1) return Status::Invalid("--batch must be at least 1");
  return Status::Ok();
}

std::string FileStem(int n, const std::vector<std::string>& ops) {
  std::string s = std::to_string(n);
  for (const auto& op : ops) {
    if (s.size() + op.size() > 60) break;
    s += "_" + op;
  }
  return s;
}

// The candidate at (level, index): its own random stream, so it is the same whatever came before.
Result<Candidate> Draw(const SynthOptions& opt, const Calibration& cal, int level, int index) {
  Rng rng(
      Mix64(opt.seed ^ Mix64((static_cast<uint64_t>(level) << 32) + static_cast<uint64_t>(index))));
  DType dtype = DType::kF32;
  DTypeFromName(rng.Pick(opt.dtypes), &dtype);  // CheckOptions accepted every name
  auto g = DrawGraph(DrawOptions{level, dtype, opt.ops, ""}, rng);
  if (!g.ok()) return g.status();
  Candidate c;
  c.level = level;
  c.index = index;
  c.graph = std::move(*g);
  Status s = SizeGraph(&c.graph, opt.target_ms, opt.max_bytes, cal);
  if (!s.ok()) return s;
  c.variants = DrawVariants(c.graph, opt.variants, opt.max_bytes, rng);
  c.hash = CanonicalHash(c.graph);
  c.ops = OpNames(c.graph);
  std::string chain;
  for (const auto& op : c.ops) chain += (chain.empty() ? "" : " -> ") + op;
  c.source = EmitProblem(c.graph, c.variants,
                         chain + " (level " + std::to_string(level) + ", " + DTypeName(dtype) +
                             "), synthesized by kforge synth.");
  auto inf = Infer(c.graph, MainValues(c.graph));
  if (!inf.ok()) return inf.status();
  c.estimate_ms = PredictMs(c.graph, *inf, cal);
  c.signature = OpSignature(c.source);
  return c;
}

json ShapesJson(const Candidate& c) {
  json main = json::object(), variants = json::array(), free = json::array();
  for (const auto& v : c.graph.vars) main[v.name] = v.value;
  for (const auto& var : c.variants) {
    json j = json::object();
    for (const auto& [id, val] : var) j[c.graph.vars[static_cast<size_t>(id)].name] = val;
    variants.push_back(j);
  }
  auto inf = Infer(c.graph, MainValues(c.graph));
  uint64_t f = inf.ok() ? FreeVars(c.graph, *inf) : 0;
  for (size_t v = 0; v < c.graph.vars.size(); ++v) {
    if (f & (uint64_t{1} << v)) free.push_back(c.graph.vars[v].name);
  }
  return {{"main", main}, {"variants", variants}, {"free", free}};
}

json DropJson(const Candidate& c, const std::string& reason, const std::string& detail) {
  return {{"level", c.level}, {"index", c.index}, {"reason", reason},    {"detail", detail},
          {"hash", c.hash},   {"ops", c.ops},     {"nearest", c.nearest}};
}

Status WriteFile(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << text;
  return f ? Status::Ok() : Status::IoError("cannot write " + p.string());
}

Status WriteLines(const fs::path& p, const std::vector<json>& lines) {
  std::string text;
  for (const auto& j : lines) text += j.dump() + "\n";
  return WriteFile(p, text);
}

}  // namespace

Result<SynthReport> Synthesize(const SynthOptions& opt, const Calibration& cal,
                               const BenchmarkIndex* against, Checker* checker) {
  Status s = CheckOptions(opt);
  if (!s.ok()) return s;
  if (opt.validate && checker == nullptr) return Status::Invalid("validation needs a checker");
  std::error_code ec;
  if (fs::exists(opt.out_dir, ec) && !fs::is_empty(opt.out_dir, ec)) {
    return Status::Invalid(opt.out_dir.string() + " is not empty (pass --force to replace it)");
  }
  fs::path staging = opt.out_dir / ".staging";
  fs::create_directories(staging, ec);
  if (ec) return Status::IoError("cannot create " + staging.string() + ": " + ec.message());

  SynthReport report;
  std::vector<json> manifest, timings;
  std::vector<Drop> drops;
  std::map<std::string, std::pair<int, int>> claimed;  // hash -> (level, index) that drew it first
  int max_attempts = opt.max_attempts > 0 ? opt.max_attempts : 20 * opt.count;
  for (int level : opt.levels) {
    fs::path level_dir = opt.out_dir / ("level" + std::to_string(level));
    fs::create_directories(level_dir, ec);
    int kept = 0, next = 0, last_kept = -1;
    while (kept < opt.count && next < max_attempts) {
      std::vector<Candidate> batch;
      while (static_cast<int>(batch.size()) < opt.batch && next < max_attempts) {
        int index = next++;
        ++report.attempts;
        auto c = Draw(opt, cal, level, index);
        if (!c.ok()) {
          drops.push_back({level,
                           index,
                           {{"level", level},
                            {"index", index},
                            {"reason", "no_graph"},
                            {"detail", c.status().message()}}});
          continue;
        }
        auto seen = claimed.find(c->hash);
        if (seen != claimed.end()) {
          drops.push_back({level, index,
                           DropJson(*c, "duplicate",
                                    "the graph of level " + std::to_string(seen->second.first) +
                                        " candidate " + std::to_string(seen->second.second))});
          continue;
        }
        claimed[c->hash] = {level, index};
        if (against != nullptr) {
          Nearest sig = against->BySignature(c->signature), src = against->BySource(c->source);
          c->nearest = {{"signature", {{"problem", sig.problem}, {"distance", sig.distance}}},
                        {"source", {{"problem", src.problem}, {"distance", src.distance}}}};
          if (sig.distance < opt.min_signature_distance || src.distance < opt.min_source_distance) {
            bool by_sig = sig.distance < opt.min_signature_distance;
            drops.push_back({level, index,
                             DropJson(*c, "contaminated",
                                      (by_sig ? sig.problem : src.problem) +
                                          (by_sig ? " by signature" : " by source"))});
            continue;
          }
        }
        c->staged = staging / ("l" + std::to_string(level) + "_" + std::to_string(index) + ".py");
        s = WriteFile(c->staged, c->source);
        if (!s.ok()) return s;
        batch.push_back(std::move(*c));
      }
      std::vector<CheckResult> results(batch.size(), CheckResult{true, {}, 0});
      if (opt.validate && !batch.empty()) {
        std::vector<fs::path> files;
        for (const auto& c : batch) files.push_back(c.staged);
        auto r = checker->Check(files);
        if (!r.ok()) return r.status();
        results = std::move(*r);
      }
      for (size_t k = 0; k < batch.size() && kept < opt.count; ++k) {
        const Candidate& c = batch[k];
        if (!results[k].ok) {
          std::string detail;
          for (const auto& f : results[k].findings) detail += (detail.empty() ? "" : "; ") + f;
          // Tracebacks name the staged file: keep its name, not the output folder's path.
          std::string prefix = staging.string() + "/";
          for (size_t at; (at = detail.find(prefix)) != std::string::npos;) {
            detail.erase(at, prefix.size());
          }
          drops.push_back({level, c.index, DropJson(c, "invalid", detail)});
          continue;
        }
        std::string stem = FileStem(++kept, c.ops);
        std::string id = "level" + std::to_string(level) + "/" + stem;
        fs::rename(c.staged, level_dir / (stem + ".py"), ec);
        if (ec) return Status::IoError("cannot move " + c.staged.string() + ": " + ec.message());
        last_kept = c.index;
        json entry = {{"id", id},
                      {"path", id + ".py"},
                      {"level", level},
                      {"index", c.index},
                      {"dtype", DTypeName(c.graph.dtype)},
                      {"hash", c.hash},
                      {"ops", c.ops},
                      {"signature", c.signature},
                      {"graph", GraphJson(c.graph)},
                      {"shapes", ShapesJson(c)},
                      {"seed", opt.seed},
                      {"calibration", {{"backend", cal.backend}, {"device", cal.device}}},
                      {"target_ms", opt.target_ms},
                      {"reference_ms_estimate", c.estimate_ms},
                      {"nearest", c.nearest}};
        manifest.push_back(entry);
        if (opt.validate) {
          timings.push_back({{"id", id},
                             {"reference_ms", results[k].reference_ms},
                             {"estimate_ms", c.estimate_ms},
                             {"target_ms", opt.target_ms}});
          report.ratio.push_back(results[k].reference_ms / opt.target_ms);
        }
      }
      if (opt.progress) opt.progress(level, kept, next);
    }
    // What was drawn past the last problem kept is forgotten: it depends on the batch size.
    if (kept == opt.count) {
      drops.erase(
          std::remove_if(drops.begin(), drops.end(),
                         [&](const Drop& d) { return d.level == level && d.index > last_kept; }),
          drops.end());
      for (auto it = claimed.begin(); it != claimed.end();) {
        bool later = it->second.first == level && it->second.second > last_kept;
        it = later ? claimed.erase(it) : std::next(it);
      }
    }
    report.kept[level] = kept;
  }
  fs::remove_all(staging, ec);
  std::vector<json> dropped;
  for (const auto& d : drops) {
    dropped.push_back(d.record);
    report.dropped[d.record.value("reason", "?")]++;
  }
  for (auto [name, lines] : {std::pair{"manifest.jsonl", &manifest},
                             {"dropped.jsonl", &dropped},
                             {"timings.jsonl", &timings}}) {
    s = WriteLines(opt.out_dir / name, *lines);
    if (!s.ok()) return s;
  }
  return report;
}

}  // namespace kf::synth
