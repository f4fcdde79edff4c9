#include "queue/redis_jobs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/hash.h"
#include "eval/eval.h"

namespace kf::queue {
namespace {

Reply Str(const std::string& s) {
  Reply r;
  r.type = Reply::Type::kString;
  r.str = s;
  return r;
}
Reply Int(long long v) {
  Reply r;
  r.type = Reply::Type::kInteger;
  r.integer = v;
  return r;
}
Reply Arr(std::vector<Reply> e) {
  Reply r;
  r.type = Reply::Type::kArray;
  r.elements = std::move(e);
  return r;
}

TEST(Entries, ParsesStreamEntriesAndSkipsDeletedOnes) {
  // [[id, [field, value]], [id, nil]] as XAUTOCLAIM gives for an entry deleted meanwhile.
  Reply entries =
      Arr({Arr({Str("1-0"), Arr({Str("id"), Str("abc")})}), Arr({Str("2-0"), Reply{}})});
  auto d = ParseEntries(entries);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].entry_id, "1-0");
  EXPECT_EQ(d[0].job_id, "abc");
  EXPECT_TRUE(ParseEntries(Reply{}).empty());
}

TEST(Entries, DeliveryCountFromXpending) {
  Reply p = Arr({Arr({Str("1-0"), Str("worker-a"), Int(1234), Int(3)})});
  EXPECT_EQ(ParseDeliveryCount(p), 3);
  EXPECT_EQ(ParseDeliveryCount(Arr({})), 0);
}

TEST(Stored, EachStateOfTheStateScript) {
  auto queued = ParseStored(Arr({Str("queued")}));
  ASSERT_TRUE(queued.ok());
  EXPECT_EQ(queued->seen, Seen::kInFlight);
  EXPECT_EQ(queued->view.state, JobView::State::kQueued);
  auto running = ParseStored(Arr({Str("running"), Str("gpu-a")}));
  ASSERT_TRUE(running.ok());
  EXPECT_EQ(running->view.state, JobView::State::kRunning);
  auto missing = ParseStored(Arr({Str("missing")}));
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->seen, Seen::kMissing);
  JobSpec j = MakeJob("level1/relu", "class Model: pass", "cand", "cpu", "s");
  auto done =
      ParseStored(Arr({Str("done"), Str(ResultToJson(InfraResult(j, "x", "w", 1)).dump())}));
  ASSERT_TRUE(done.ok()) << done.status().message();
  EXPECT_EQ(done->seen, Seen::kDone);
  ASSERT_TRUE(done->view.result.has_value());
  EXPECT_EQ(done->view.result->worker, "w");
  EXPECT_FALSE(ParseStored(Arr({Str("done"), Str("not json")})).ok());
  EXPECT_FALSE(ParseStored(Arr({Str("sideways")})).ok());
  EXPECT_FALSE(ParseStored(Reply{}).ok());
}

TEST(Job, StateNames) {
  EXPECT_STREQ(StateName(JobView::State::kQueued), "queued");
  EXPECT_STREQ(StateName(JobView::State::kRunning), "running");
  EXPECT_STREQ(StateName(JobView::State::kDone), "done");
  EXPECT_STREQ(StateName(JobView::State::kLost), "lost");
  EXPECT_TRUE(Settled(JobView::State::kLost));
  EXPECT_FALSE(Settled(JobView::State::kRunning));
}

TEST(Job, IdIsTheEvalJobKeyAndIsChecked) {
  JobSpec j = MakeJob("level1/relu", "class Model: pass", "cand", "cpu", "settings-a");
  EXPECT_EQ(j.id, eval::JobKey(j.problem_hash, Sha256Hex("cand"), "settings-a"));
  auto back = JobFromJson(JobToJson(j));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->candidate, "cand");
  EXPECT_EQ(back->settings, "settings-a");
  for (const char* field : {"candidate", "settings"}) {
    auto forged = JobToJson(j);
    forged[field] = "other";
    EXPECT_FALSE(JobFromJson(forged).ok()) << field;
  }
  EXPECT_NE(MakeJob("level1/relu", "class Model: pass", "cand", "cpu", "settings-b").id, j.id);
}

TEST(Job, ResultRoundTrip) {
  JobSpec j = MakeJob("level1/relu", "class Model: pass", "cand", "cpu", "s");
  JobResult r = InfraResult(j, "workers died", "w1", 4);
  auto back = ResultFromJson(ResultToJson(r));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->verdict.status, VerdictStatus::kInfraError);
  EXPECT_EQ(back->worker, "w1");
  EXPECT_EQ(back->deliveries, 4);
  EXPECT_FALSE(back->verdict.reward.has_value());
}

TEST(Job, MaterializeIsContentAddressedAndGivesTheProblemIdBack) {
  auto dir = std::filesystem::temp_directory_path() / ("kf-mat-" + std::to_string(getpid()));
  JobSpec j = MakeJob("level1/relu", "class Model: pass\n", "cand", "cpu", "s");
  auto p = MaterializeProblem(dir, j.problem_id, j.problem_hash, j.problem_text);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(eval::ProblemId(*p), "level1/relu");
  std::ifstream in(*p);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "class Model: pass\n");
  EXPECT_FALSE(MaterializeProblem(dir, "../evil", j.problem_hash, "x").ok());
  EXPECT_FALSE(ValidProblemId("/abs"));
  std::filesystem::remove_all(dir);
}

TEST(Roles, Names) {
  Role r;
  ASSERT_TRUE(RoleFromName("gpu", &r));
  EXPECT_EQ(r, Role::kGpu);
  EXPECT_STREQ(RoleName(Role::kBuild), "build");
  EXPECT_FALSE(RoleFromName("cpu", &r));
}

}  // namespace
}  // namespace kf::queue
