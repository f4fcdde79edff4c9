// Synthesize and Calibrate with a fake Checker: determinism, the batch size not mattering,
// deduplication, decontamination and validation drops.
#include "synth/synth.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include "synth/internal.h"
#include "synth/ops.h"

namespace kf::synth {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<json> Lines(const fs::path& p) {
  std::vector<json> out;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line)) out.push_back(json::parse(line));
  return out;
}

// Every file under dir by relative path, with its contents.
std::map<std::string, std::string> Tree(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out[fs::relative(e.path(), dir).string()] = Read(e.path());
  }
  return out;
}

// Passes everything except problems whose source contains `reject`; times are the file size
// in microseconds, so they are fixed for a given file.
class FakeChecker : public Checker {
 public:
  explicit FakeChecker(std::string reject = "") : reject_(std::move(reject)) {}
  Result<std::vector<CheckResult>> Check(const std::vector<fs::path>& files) override {
    std::vector<CheckResult> out;
    for (const auto& f : files) {
      std::string src = Read(f);
      bool bad = !reject_.empty() && src.find(reject_) != std::string::npos;
      out.push_back({!bad,
                     bad ? std::vector<std::string>{"zero_output: all zeros pass"}
                         : std::vector<std::string>{},
                     static_cast<double>(src.size()) / 1000});
      ++checked;
    }
    return out;
  }
  Result<std::vector<std::vector<double>>> Time(const std::vector<fs::path>& files,
                                                double) override {
    return Status::Internal("not used");
  }
  int checked = 0;

 private:
  std::string reject_;
};

class SynthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kforge-synth-test-" + std::to_string(getpid()));
    fs::remove_all(root_);
    cal_.fallback.points = {{1e3, 0.01}, {1e9, 1000}};
    cal_.fallback_heavy.points = {{1e3, 0.01}, {1e10, 1000}};
  }
  void TearDown() override { fs::remove_all(root_); }
  SynthOptions Options(const std::string& name, uint64_t seed) {
    SynthOptions o;
    o.out_dir = root_ / name;
    o.seed = seed;
    o.count = 4;
    o.dtypes = {"fp32", "bf16"};
    return o;
  }
  fs::path root_;
  Calibration cal_;
};

TEST_F(SynthTest, SameSeedSameBytesWhateverTheBatch) {
  FakeChecker a, b, c;
  auto o1 = Options("a", 7), o2 = Options("b", 7), o3 = Options("c", 8);
  o2.batch = 3;  // validated in other groups: the same problems must come out
  ASSERT_TRUE(Synthesize(o1, cal_, nullptr, &a).ok());
  ASSERT_TRUE(Synthesize(o2, cal_, nullptr, &b).ok());
  ASSERT_TRUE(Synthesize(o3, cal_, nullptr, &c).ok());
  auto t1 = Tree(o1.out_dir), t2 = Tree(o2.out_dir), t3 = Tree(o3.out_dir);
  EXPECT_EQ(t1, t2);
  EXPECT_NE(t1, t3);
  size_t problems = 0;
  for (const auto& [path, text] : t1) problems += path.rfind("level", 0) == 0 ? 1 : 0;
  EXPECT_EQ(problems, 12u);  // 4 per level
  EXPECT_FALSE(fs::exists(o1.out_dir / ".staging"));
  // The manifest names every file, with distinct hashes.
  std::set<std::string> hashes;
  for (const auto& e : Lines(o1.out_dir / "manifest.jsonl")) {
    EXPECT_TRUE(t1.count(e["path"].get<std::string>())) << e["path"];
    hashes.insert(e["hash"].get<std::string>());
    EXPECT_TRUE(e["nearest"].is_null());
  }
  EXPECT_EQ(hashes.size(), 12u);
  // An output folder with files in it is refused.
  EXPECT_FALSE(Synthesize(o1, cal_, nullptr, &a).ok());
}

TEST_F(SynthTest, DuplicatesAreDroppedAndNamed) {
  FakeChecker k;
  auto o = Options("dup", 1);
  o.levels = {1};
  o.ops = {"relu"};  // one parameterless op: one graph per input rank (2 to 5) at most
  o.dtypes = {"fp32"};
  o.count = 6;
  o.max_attempts = 40;
  auto r = Synthesize(o, cal_, nullptr, &k);
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto manifest = Lines(o.out_dir / "manifest.jsonl");
  std::set<std::string> kept;
  for (const auto& e : manifest) kept.insert(e["hash"].get<std::string>());
  EXPECT_EQ(kept.size(), manifest.size());
  EXPECT_LE(manifest.size(), 4u);
  EXPECT_LT(r->kept[1], 6);  // it ran out of new graphs
  int dups = 0;
  for (const auto& d : Lines(o.out_dir / "dropped.jsonl")) {
    if (d["reason"] != "duplicate") continue;
    ++dups;
    EXPECT_TRUE(kept.count(d["hash"].get<std::string>())) << d.dump();
  }
  EXPECT_EQ(dups, r->dropped["duplicate"]);
  EXPECT_EQ(dups, 40 - static_cast<int>(manifest.size()));
}

TEST_F(SynthTest, NearCopiesOfTheBenchmarkAreDropped) {
  FakeChecker k;
  auto first = Options("first", 3);
  first.levels = {2};
  ASSERT_TRUE(Synthesize(first, cal_, nullptr, &k).ok());
  auto manifest = Lines(first.out_dir / "manifest.jsonl");
  ASSERT_EQ(manifest.size(), 4u);
  // The benchmark holds the second problem, renamed and resized: a near-copy.
  std::string copy = Read(first.out_dir / manifest[1]["path"].get<std::string>());
  for (size_t at; (at = copy.find("batch_size")) != std::string::npos;) copy.replace(at, 10, "n");
  BenchmarkIndex bench;
  bench.Add("level2/copied.py", copy);
  auto second = Options("second", 3);
  second.levels = {2};
  ASSERT_TRUE(Synthesize(second, cal_, &bench, &k).ok());
  auto kept = Lines(second.out_dir / "manifest.jsonl");
  for (const auto& e : kept) {
    EXPECT_NE(e["hash"], manifest[1]["hash"]);
    EXPECT_EQ(e["nearest"]["signature"]["problem"], "level2/copied.py");
    EXPECT_GE(e["nearest"]["signature"]["distance"].get<double>(), second.min_signature_distance);
  }
  bool reported = false;
  for (const auto& d : Lines(second.out_dir / "dropped.jsonl")) {
    if (d["reason"] == "contaminated" && d["hash"] == manifest[1]["hash"]) {
      reported = true;
      EXPECT_EQ(d["nearest"]["signature"]["distance"], 0.0);
      EXPECT_EQ(d["nearest"]["source"]["problem"], "level2/copied.py");
      EXPECT_LT(d["nearest"]["source"]["distance"].get<double>(), second.min_source_distance);
    }
  }
  EXPECT_TRUE(reported);
  // The others keep their places; the next candidate fills the gap.
  EXPECT_EQ(kept[0]["hash"], manifest[0]["hash"]);
  EXPECT_EQ(kept[1]["hash"], manifest[2]["hash"]);
}

TEST_F(SynthTest, InvalidProblemsAreReplacedInOrder) {
  FakeChecker all, picky("F.");
  auto o = Options("all", 11), p = Options("picky", 11);
  o.levels = p.levels = {3};
  ASSERT_TRUE(Synthesize(o, cal_, nullptr, &all).ok());
  ASSERT_TRUE(Synthesize(p, cal_, nullptr, &picky).ok());
  for (const auto& e : Lines(p.out_dir / "manifest.jsonl")) {
    EXPECT_EQ(Read(p.out_dir / e["path"].get<std::string>()).find("F."), std::string::npos);
  }
  int invalid = 0;
  for (const auto& d : Lines(p.out_dir / "dropped.jsonl")) {
    EXPECT_EQ(d["reason"], "invalid");
    EXPECT_NE(d["detail"].get<std::string>().find("zero_output"), std::string::npos);
    ++invalid;
  }
  EXPECT_GT(invalid, 0);
  EXPECT_EQ(Lines(p.out_dir / "manifest.jsonl").size(), 4u);
  // Those that pass both checkers come out of both runs, in the same order.
  std::vector<json> both;
  for (const auto& e : Lines(o.out_dir / "manifest.jsonl")) {
    if (Read(o.out_dir / e["path"].get<std::string>()).find("F.") == std::string::npos) {
      both.push_back(e["hash"]);
    }
  }
  auto kept = Lines(p.out_dir / "manifest.jsonl");
  for (size_t i = 0; i < both.size(); ++i) EXPECT_EQ(kept[i]["hash"], both[i]);
}

TEST_F(SynthTest, BadOptionsAreUsageErrors) {
  FakeChecker k;
  auto o = Options("bad", 1);
  o.dtypes = {"fp64"};
  EXPECT_EQ(Synthesize(o, cal_, nullptr, &k).status().code(), Code::kInvalidArgument);
  o = Options("bad", 1);
  o.ops = {"no_such_op"};
  EXPECT_EQ(Synthesize(o, cal_, nullptr, &k).status().code(), Code::kInvalidArgument);
  o = Options("bad", 1);
  o.levels = {4};
  EXPECT_EQ(Synthesize(o, cal_, nullptr, &k).status().code(), Code::kInvalidArgument);
}

// Times that grow with each size, 1 us more per probe size.
class LinearTimer : public FakeChecker {
 public:
  Result<std::vector<std::vector<double>>> Time(const std::vector<fs::path>& files,
                                                double) override {
    std::vector<std::vector<double>> out;
    for (size_t i = 0; i < files.size(); ++i) {
      std::string src = Read(files[i]);
      size_t sets = 1;
      for (size_t at = src.find("{\""); at != std::string::npos; at = src.find("{\"", at + 1))
        ++sets;
      std::vector<double> t;
      for (size_t k = 0; k < sets; ++k) t.push_back(0.001 * static_cast<double>(k + 1));
      out.push_back(t);
    }
    return out;
  }
};

TEST(Calibrate, OneCurvePerOpThatRoundTrips) {
  LinearTimer timer;
  CalibrateOptions o;
  o.ops = {"relu", "linear", "conv2d"};
  o.work_dir = fs::temp_directory_path() / ("kforge-cal-test-" + std::to_string(getpid()));
  auto cal = Calibrate(o, timer);
  ASSERT_TRUE(cal.ok()) << cal.status().message();
  ASSERT_EQ(cal->ops.size(), 3u);
  for (const auto& [op, curve] : cal->ops) {
    ASSERT_GE(curve.points.size(), 2u) << op;
    for (size_t i = 1; i < curve.points.size(); ++i) {
      EXPECT_GT(curve.points[i].first, curve.points[i - 1].first) << op;  // sizes grow
      EXPECT_GE(curve.points[i].second, curve.points[i - 1].second) << op;
    }
    // Read back at a measured point, the curve gives that point's time.
    EXPECT_DOUBLE_EQ(curve.Ms(curve.points[1].first), curve.points[1].second);
  }
  fs::path f = o.work_dir / "cal.json";
  std::ofstream(f) << CalibrationJson(*cal).dump();
  auto back = LoadCalibration(f);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->ops.at("relu").points, cal->ops.at("relu").points);
  EXPECT_EQ(back->fallback.points, cal->ops.at("relu").points);  // relu stands in for others
  std::ofstream(f) << "{\"ops\": {\"relu\": [[1, -2]]}}";
  EXPECT_FALSE(LoadCalibration(f).ok());
  fs::remove_all(o.work_dir);
}

// Probes are timed a chunk per runner start, and after each chunk the curves so far are
// handed out: a calibration cut short (a device call's time limit) keeps what it measured.
TEST(Calibrate, ChunksReportTheCurvesSoFarAndEndAsOneRun) {
  struct CountingTimer : LinearTimer {
    std::vector<size_t> sizes;
    Result<std::vector<std::vector<double>>> Time(const std::vector<fs::path>& files,
                                                  double stop_ms) override {
      sizes.push_back(files.size());
      return LinearTimer::Time(files, stop_ms);
    }
  };
  CountingTimer chunked, whole;
  CalibrateOptions o;
  o.ops = {"relu", "linear", "conv2d"};
  o.work_dir = fs::temp_directory_path() / ("kforge-cal-chunk-" + std::to_string(getpid()));
  auto all = Calibrate(o, whole);  // the default chunk holds all three
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_EQ(whole.sizes, std::vector<size_t>({3}));
  o.chunk = 2;
  std::vector<std::pair<size_t, size_t>> reports;
  std::vector<size_t> curves;
  o.progress = [&](const Calibration& so_far, size_t done, size_t total) {
    reports.push_back({done, total});
    curves.push_back(so_far.ops.size());
  };
  auto cal = Calibrate(o, chunked);
  ASSERT_TRUE(cal.ok()) << cal.status().message();
  EXPECT_EQ(chunked.sizes, std::vector<size_t>({2, 1}));
  EXPECT_EQ(reports, (std::vector<std::pair<size_t, size_t>>{{2, 3}, {3, 3}}));
  EXPECT_EQ(curves, std::vector<size_t>({2, 3}));
  ASSERT_EQ(cal->ops.size(), all->ops.size());
  for (const auto& [key, curve] : all->ops) EXPECT_EQ(cal->ops.at(key).points, curve.points) << key;
  EXPECT_EQ(cal->fallback.points, all->fallback.points);
  fs::remove_all(o.work_dir);
}

TEST(Calibrate, AResumedRunTimesOnlyTheProbesTheEarlierOneLacked) {
  struct CountingTimer : LinearTimer {
    std::vector<std::string> timed;
    Result<std::vector<std::vector<double>>> Time(const std::vector<fs::path>& files,
                                                  double stop_ms) override {
      for (const auto& f : files) timed.push_back(f.filename().string());
      return LinearTimer::Time(files, stop_ms);
    }
  };
  CountingTimer timer;
  CalibrateOptions o;
  o.ops = {"relu", "linear", "conv2d"};
  o.work_dir = fs::temp_directory_path() / ("kforge-cal-resume-" + std::to_string(getpid()));
  OpCurve earlier;
  earlier.points = {{1, 7}, {2, 9}};  // not what LinearTimer would measure: kept, not redone
  o.done = {{"linear", earlier}, {"softmax", earlier}};  // softmax was not asked for this time
  auto cal = Calibrate(o, timer);
  ASSERT_TRUE(cal.ok()) << cal.status().message();
  EXPECT_EQ(timer.timed, (std::vector<std::string>{"probe_relu.py", "probe_conv2d.py"}));
  std::set<std::string> keys;
  for (const auto& [k, c] : cal->ops) keys.insert(k);
  EXPECT_EQ(keys, (std::set<std::string>{"relu", "linear", "conv2d"}));
  EXPECT_EQ(cal->ops.at("linear").points, earlier.points);
  // Everything measured before: nothing is timed, and the curves are the run's.
  CountingTimer idle;
  o.done = cal->ops;
  auto again = Calibrate(o, idle);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(idle.timed.empty());
  EXPECT_EQ(again->ops.at("relu").points, cal->ops.at("relu").points);
  EXPECT_EQ(again->fallback.points, cal->fallback.points);
  fs::remove_all(o.work_dir);
}

TEST(Calibrate, ACurvePerDtypeAndPredictionsUseIt) {
  LinearTimer timer;
  CalibrateOptions o;
  o.ops = {"relu", "var"};  // var is never drawn in fp16
  o.dtypes = {"fp32", "bf16", "fp16"};
  o.work_dir = fs::temp_directory_path() / ("kforge-cal-dt-" + std::to_string(getpid()));
  auto cal = Calibrate(o, timer);
  ASSERT_TRUE(cal.ok()) << cal.status().message();
  std::set<std::string> keys;
  for (const auto& [k, c] : cal->ops) keys.insert(k);
  EXPECT_EQ(keys, (std::set<std::string>{"relu", "relu@bf16", "relu@fp16", "var", "var@bf16"}));
  fs::remove_all(o.work_dir);

  // A bf16 graph reads the bf16 curve; an fp16 graph without one reads the fp32 curve.
  Calibration c;
  c.ops["relu"].points = {{1, 1}, {1e12, 1e12}};       // 1 ms per unit of work
  c.ops["relu@bf16"].points = {{1, 0.5}, {1e12, 5e11}};  // twice as fast
  auto graph = [](DType dt) {
    Graph g;
    g.dtype = dt;
    Rng rng(1);
    Builder b(&g, &rng);
    int x = b.NewInput({b.NewVar("batch_size", VarRole::kBatch, 4),
                        b.NewVar("features", VarRole::kFeature, 8)});
    EXPECT_TRUE(b.Apply("relu", x));
    return g;
  };
  auto predict = [&](const Graph& g) { return PredictMs(g, *Infer(g, MainValues(g)), c); };
  const double bytes_bf16 = 2.0 * 32 * 2;  // read and write 32 elements of 2 bytes
  EXPECT_DOUBLE_EQ(predict(graph(DType::kBF16)), 0.5 * bytes_bf16);
  EXPECT_DOUBLE_EQ(predict(graph(DType::kF16)), 1.0 * bytes_bf16);
  EXPECT_DOUBLE_EQ(predict(graph(DType::kF32)), 1.0 * 2 * 32 * 4);
}

TEST(Calibrate, AnotherGpusCostModelIsNamedWithHowToCalibrateHere) {
  Calibration cal;
  cal.backend = "cuda";
  cal.device = "NVIDIA H100 80GB HBM3";
  const std::string note = OtherDeviceNote(cal, "NVIDIA H200", "runner/calibration/cuda.json");
  EXPECT_NE(note.find("runner/calibration/cuda.json was measured on NVIDIA H100 80GB HBM3"),
            std::string::npos) << note;
  EXPECT_NE(note.find("NVIDIA H200"), std::string::npos) << note;
  EXPECT_NE(note.find("kforge synth --calibrate FILE --backend cuda"), std::string::npos) << note;
  // The same card, or a model either side cannot name: nothing to say.
  EXPECT_EQ(OtherDeviceNote(cal, "NVIDIA H100 80GB HBM3", "f.json"), "");
  EXPECT_EQ(OtherDeviceNote(cal, "", "f.json"), "");
  cal.device.clear();
  EXPECT_EQ(OtherDeviceNote(cal, "NVIDIA H200", "f.json"), "");
}

TEST(OpCurve, InterpolatesAndExtrapolates) {
  OpCurve c;
  c.points = {{100, 1}, {10000, 100}};
  EXPECT_DOUBLE_EQ(c.Ms(50), 1);           // below: the smallest call's time
  EXPECT_NEAR(c.Ms(1000), 10, 1e-9);       // log-log between the points
  EXPECT_DOUBLE_EQ(c.Ms(20000), 200);      // above: the last rate
  EXPECT_DOUBLE_EQ(OpCurve{}.Ms(2e6), 2);  // no points: 1 ms per 1e6
}

// The real checker with a stand-in runner module: a problem whose checks hang is dropped as
// check_timeout on its own, and the runner starts again on the problems after it.
TEST_F(SynthTest, AProblemThatHangsTheRunnerIsDroppedAloneAndTheRestAreChecked) {
  fs::path runner = root_ / "runner", module = runner / "kforge_runner";
  fs::create_directories(module);
  std::ofstream(module / "__init__.py") << "";
  std::ofstream(module / "synth.py") << R"(import json, sys, time
for p in [a for a in sys.argv[1:] if a.endswith(".py")]:
    with open(p + ".starts", "a") as f:
        f.write("x")
    if "hang" in p:
        time.sleep(60)
    print(json.dumps({"problem": p, "ok": True, "findings": [], "reference_ms": 2.0,
                      "ms": [1.0]}), flush=True)
)";
  std::vector<fs::path> files = {root_ / "a.py", root_ / "hang.py", root_ / "c.py"};
  for (const auto& f : files) std::ofstream(f) << "";
  PythonCheckerOptions o;
  o.python = "python3";
  o.runner_dir = runner;
  o.problem_timeout_s = 1;
  o.start_allowance_s = 20;
  auto checker = MakePythonChecker(o);
  auto r = checker->Check(files);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_TRUE((*r)[0].ok);
  EXPECT_DOUBLE_EQ((*r)[0].reference_ms, 2.0);
  EXPECT_FALSE((*r)[1].ok);
  ASSERT_EQ((*r)[1].findings.size(), 1u);
  EXPECT_EQ((*r)[1].findings[0].rfind("check_timeout: ", 0), 0u) << (*r)[1].findings[0];
  EXPECT_TRUE((*r)[2].ok);
  // a.py once; hang.py once (killed); c.py once, by the second start.
  EXPECT_EQ(Read(root_ / "a.py.starts"), "x");
  EXPECT_EQ(Read(root_ / "c.py.starts"), "x");
  auto t = checker->Time(files, 30);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->size(), 3u);
  EXPECT_EQ((*t)[0], std::vector<double>{1.0});
  EXPECT_TRUE((*t)[1].empty());
  EXPECT_EQ((*t)[2], std::vector<double>{1.0});
}

}  // namespace
}  // namespace kf::synth
