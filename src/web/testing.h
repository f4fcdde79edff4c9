// What the web tests share: a store in a temporary folder with runs and verdicts in it, a fake
// live service, and requests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "common/hash.h"
#include "web/site.h"

namespace kf::web::testing {

// A candidate whose text attacks the page it is shown on.
inline const std::string kHostile =
    "import torch\n"
    "# </script><img src=x onerror=\"alert(1)\"><b>bold</b>\n"
    "class ModelNew(torch.nn.Module):\n"
    "    def forward(self, x):\n"
    "        return x  # '\"&amp;\n";

inline Verdict CheatVerdict(const std::string& candidate) {
  Verdict v;
  v.problem_id = "level1/relu";
  v.problem_hash = Sha256Hex("problem text");
  v.candidate_hash = Sha256Hex(candidate);
  v.backend = "cpu";
  v.device = "test cpu";
  v.status = VerdictStatus::kCheat;
  v.reward = -1.0;
  v.stages = {{"extract", true, 0.5, {}}, {"static", false, 0.2, {}}};
  Diagnostic d;
  d.stage = "static";
  d.code = "H08";
  d.message = "assigns to time.perf_counter <script>";
  d.line = 2;
  d.excerpt = "# </script><img src=x onerror=\"alert(1)\"><b>bold</b>";
  d.hint = "never patch the clock";
  v.diagnostics = {d};
  v.feedback = "Cheat: H08 </textarea>";
  return v;
}

inline Verdict OkVerdict(const std::string& candidate, double speedup) {
  Verdict v = CheatVerdict(candidate);
  v.status = VerdictStatus::kOk;
  v.reward = 1.0;
  v.diagnostics.clear();
  v.trials_passed = v.trials_total = 6;
  v.candidate_ms = TimingSummary{0.5, 0.45, 0.6, 40};
  v.eager_ms = 0.5 * speedup;
  v.speedup_vs_eager = speedup;
  v.feedback = "Correct.";
  return v;
}

class FakeLive : public LiveService {
 public:
  LiveStats Live() override { return stats; }
  Result<std::string> Submit(const std::string& problem, const std::string& candidate) override {
    if (problem != "level1/relu") return Status::NotFound("unknown problem '" + problem + "'");
    submitted[problem] = candidate;
    const std::string id = Sha256Hex(problem + candidate);
    JobPage j;
    j.id = id;
    j.problem_id = problem;
    j.route = "ui";
    j.candidate = candidate;
    j.view.state = queue::JobView::State::kQueued;
    jobs[id] = j;
    return id;
  }
  Result<JobPage> Job(const std::string& id) override {
    auto it = jobs.find(id);
    if (it == jobs.end()) return Status::NotFound("no job");
    return it->second;
  }
  LiveStats stats;
  std::map<std::string, std::string> submitted;
  std::map<std::string, JobPage> jobs;
};

class WebTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("kf_web_test_" + std::to_string(getpid()) + "_" + info->name());
    std::filesystem::remove_all(dir_);
    auto s = store::Store::Open(dir_ / "kforge.db");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static Request Get(const std::string& path, const std::string& query = "") {
    Request r;
    r.method = "GET";
    r.path = path;
    r.query = query;
    r.host = "127.0.0.1:8000";
    return r;
  }
  static Request Post(const std::string& path, const std::string& body) {
    Request r = Get(path);
    r.method = "POST";
    r.body = body;
    r.origin = "http://127.0.0.1:8000";
    return r;
  }
  static std::string Header(const Response& r, const std::string& name) {
    for (const auto& [k, v] : r.headers) {
      if (k == name) return v;
    }
    return "";
  }

  std::filesystem::path dir_;
  std::unique_ptr<store::Store> store_;
};

}  // namespace kf::web::testing
