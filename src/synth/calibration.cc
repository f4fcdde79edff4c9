// The cost model's calibration file, and measuring one: a single-op probe problem per op whose
// shape variants double its leading free size, timed on the backend by the Checker.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "common/files.h"
#include "synth/internal.h"
#include "synth/ops.h"

namespace kf::synth {
using nlohmann::json;

double OpCurve::Ms(double work) const {
  if (points.empty()) return work / 1e6;
  const auto& first = points.front();
  const auto& last = points.back();
  if (work <= first.first) return first.second;
  if (work >= last.first) return last.first > 0 ? last.second * work / last.first : last.second;
  auto hi = std::lower_bound(points.begin(), points.end(), std::make_pair(work, 0.0));
  auto lo = hi - 1;
  double t = (std::log(work) - std::log(lo->first)) / (std::log(hi->first) - std::log(lo->first));
  return std::exp(std::log(lo->second) + t * (std::log(hi->second) - std::log(lo->second)));
}

namespace {

// Times kept to 4 significant digits: a measurement's noise is larger than that.
double Round4(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return std::strtod(buf, nullptr);
}

json CurveJson(const OpCurve& c) {
  json j = json::array();
  for (const auto& [w, ms] : c.points) j.push_back({w, ms});
  return j;
}

// Points in ascending work with positive times; times made non-decreasing so that sizing,
// which steps a size up until the prediction passes the target, always moves one way.
bool CurveFromJson(const json& j, OpCurve* c) {
  if (!j.is_array()) return false;
  for (const auto& p : j) {
    if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number()) return false;
    double w = p[0].get<double>(), ms = p[1].get<double>();
    if (w < 0 || ms <= 0) return false;
    c->points.emplace_back(w, ms);
  }
  std::sort(c->points.begin(), c->points.end());
  for (size_t i = 1; i < c->points.size(); ++i) {
    c->points[i].second = std::max(c->points[i].second, c->points[i - 1].second);
  }
  return true;
}

}  // namespace

json CalibrationJson(const Calibration& c) {
  json ops = json::object();
  for (const auto& [name, curve] : c.ops) ops[name] = CurveJson(curve);
  return {{"schema", 1}, {"backend", c.backend}, {"device", c.device}, {"ops", ops}};
}

Result<Calibration> LoadCalibration(const std::filesystem::path& file) {
  auto text = ReadFile(file);
  if (!text.ok()) return Status::NotFound("cannot read the calibration file " + file.string());
  json j = json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("ops") || !j["ops"].is_object()) {
    return Status::Invalid(file.string() + " is not a calibration file (JSON with \"ops\")");
  }
  Calibration c;
  c.backend = j.value("backend", "");
  c.device = j.value("device", "");
  for (const auto& [name, points] : j["ops"].items()) {
    OpCurve curve;
    if (!CurveFromJson(points, &curve)) {
      return Status::Invalid(file.string() + ": bad entry for " + name +
                             " (a list of [work, ms] pairs, ms > 0)");
    }
    c.ops[name] = std::move(curve);
  }
  if (c.ops.count("relu")) c.fallback = c.ops["relu"];
  if (c.ops.count("matmul")) c.fallback_heavy = c.ops["matmul"];
  return c;
}

std::string OtherDeviceNote(const Calibration& cal, const std::string& here,
                            const std::filesystem::path& file) {
  if (cal.device.empty() || here.empty() || here == cal.device) return "";
  return "kforge synth: " + file.string() + " was measured on " + cal.device + ", not on this " +
         "machine's " + here + ": problems are sized for that device's times (--target-ms); " +
         "for this one, calibrate here: kforge synth --calibrate FILE --backend " +
         (cal.backend.empty() ? std::string("cuda") : cal.backend) + ", then --calibration FILE";
}

std::string CurveKey(const std::string& op, DType dtype) {
  return dtype == DType::kF32 ? op : op + "@" + DTypeName(dtype);
}

namespace {

struct Probe {
  std::string op;
  std::string key;  // the curve's name: the op for fp32, "op@bf16" for another dtype
  Graph graph;
  std::vector<Variant> sets;  // sets[0] is the main one
};

// The op alone on its default input: its free sizes first at their smallest valid values (so
// the first point is the call's overhead), then doubled one after another, round-robin (so
// shapes grow the way sizing grows them), while the peak memory stays under max_bytes.
Result<Probe> MakeProbe(const std::string& op, DType dtype, double max_bytes) {
  Rng rng(0x6b66);  // the same probe every run
  DrawOptions d;
  d.only = op;
  d.dtype = dtype;
  auto g = DrawGraph(d, rng);
  if (!g.ok()) return g.status();
  auto main = Infer(*g, MainValues(*g));
  if (!main.ok()) return main.status();
  uint64_t free_mask = FreeVars(*g, *main);
  std::vector<int> free;
  for (int v = 0; v < static_cast<int>(g->vars.size()); ++v) {
    if (free_mask & (uint64_t{1} << v)) free.push_back(v);
  }
  if (free.empty()) return Status::Invalid(op + ": no free size to scale");
  Variant cur;
  for (int v : free) cur[v] = 1;
  for (int k = 0; k < 12 && !Infer(*g, ValuesOf(*g, cur)).ok(); ++k) {
    for (int v : free) cur[v] *= 2;
  }
  if (!Infer(*g, ValuesOf(*g, cur)).ok()) return Status::Invalid(op + ": no small size is valid");
  Probe p{op, CurveKey(op, dtype), *g, {cur}};
  for (size_t k = 0; !free.empty() && p.sets.size() < 48; ++k) {
    size_t at = k % free.size();
    Variant next = cur;
    next[free[at]] *= 2;
    auto inf = Infer(p.graph, ValuesOf(p.graph, next));
    if (!inf.ok() || PeakBytes(p.graph, *inf) > max_bytes) {
      free.erase(free.begin() + static_cast<long>(at));  // this size is done growing
      continue;
    }
    cur = next;
    p.sets.push_back(cur);
  }
  if (p.sets.size() < 2) return Status::Invalid(op + ": too few sizes fit in memory");
  for (const auto& [var_id, val] : p.sets[0]) p.graph.vars[static_cast<size_t>(var_id)].value = val;
  return p;
}

// A probe's curve from its times, one per size it reached; none (even its smallest size
// failed): listed as skipped, and the op keeps the fallback curve.
void AddCurve(const Probe& p, const std::vector<double>& t, Calibration* cal) {
  if (t.empty()) {
    cal->skipped.push_back(p.key);
    return;
  }
  const OpSpec* spec = FindOp(p.op);
  json points = json::array();
  for (size_t k = 0; k < t.size() && k < p.sets.size(); ++k) {
    auto inf = Infer(p.graph, ValuesOf(p.graph, p.sets[k]));
    if (!inf.ok()) continue;
    double w = 0;
    for (const auto& n : p.graph.nodes) {
      std::vector<Shape> in;
      for (int a : n.args) in.push_back(inf->shapes[a]);
      Cost c = spec->cost(n, in, inf->shapes[n.value], p.graph.dtype == DType::kF32 ? 4 : 2);
      w += spec->heavy ? c.flops : c.bytes;
    }
    points.push_back({w, Round4(std::max(t[k], 1e-6))});
  }
  OpCurve curve;
  CurveFromJson(points, &curve);
  cal->ops[p.key] = std::move(curve);
}

void SetFallbacks(Calibration* cal) {
  if (cal->ops.count("relu")) cal->fallback = cal->ops["relu"];
  if (cal->ops.count("matmul")) cal->fallback_heavy = cal->ops["matmul"];
}

}  // namespace

Result<Calibration> Calibrate(const CalibrateOptions& opt, Checker& checker) {
  std::vector<std::string> ops = opt.ops;
  if (ops.empty()) {
    for (const auto& o : Ops()) ops.push_back(o.name);
  }
  std::error_code ec;
  std::filesystem::create_directories(opt.work_dir, ec);
  if (ec) return Status::IoError("cannot create " + opt.work_dir.string() + ": " + ec.message());
  std::vector<DType> dtypes;
  for (const auto& name : opt.dtypes) {
    DType d;
    if (!DTypeFromName(name, &d)) return Status::Invalid("unknown dtype " + name);
    dtypes.push_back(d);
  }
  std::vector<Probe> probes;
  std::vector<std::filesystem::path> files;
  for (const auto& op : ops) {
    const OpSpec* spec = FindOp(op);
    if (spec == nullptr) return Status::Invalid("unknown op " + op);
    for (DType dt : dtypes) {
      if (!(spec->dtypes & DTypeBit(dt))) continue;  // never drawn in this dtype
      if (opt.done.count(CurveKey(op, dt))) continue;  // measured before: kept below
      auto p = MakeProbe(op, dt, opt.max_bytes);
      if (!p.ok()) {
        return Status::Invalid("calibration probe for " + CurveKey(op, dt) + ": " +
                               p.status().message());
      }
      std::vector<Variant> rest(p->sets.begin() + 1, p->sets.end());
      auto file = opt.work_dir / ("probe_" + p->key + ".py");
      std::ofstream out(file, std::ios::binary | std::ios::trunc);
      out << EmitProblem(p->graph, rest, "Calibration probe for " + p->key + ".");
      if (!out) return Status::IoError("cannot write " + file.string());
      files.push_back(file);
      probes.push_back(std::move(*p));
    }
  }
  Calibration cal;
  for (const auto& op : ops) {  // the earlier run's curves of the ops asked for
    for (DType dt : dtypes) {
      auto it = opt.done.find(CurveKey(op, dt));
      if (it != opt.done.end()) cal.ops[it->first] = it->second;
    }
  }
  const size_t chunk = static_cast<size_t>(std::max(1, opt.chunk));
  for (size_t from = 0; from < probes.size(); from += chunk) {
    const size_t to = std::min(probes.size(), from + chunk);
    std::vector<std::filesystem::path> part(files.begin() + static_cast<long>(from),
                                            files.begin() + static_cast<long>(to));
    auto times = checker.Time(part, opt.stop_ms);
    if (!times.ok()) return times.status();
    for (size_t i = from; i < to; ++i) AddCurve(probes[i], (*times)[i - from], &cal);
    if (opt.progress) {
      Calibration so_far = cal;
      SetFallbacks(&so_far);
      opt.progress(so_far, to, probes.size());
    }
  }
  SetFallbacks(&cal);
  return cal;
}

}  // namespace kf::synth
