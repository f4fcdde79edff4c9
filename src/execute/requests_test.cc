// Every request execute builds, built by the functions the code uses, fits runner/protocol.json
// (the schema compiled in), and together they are every op the schema lists but the few kforge
// never sends.
#include "execute/requests.h"

#include <gtest/gtest.h>

#include <set>

#include "common/protocol.h"

namespace kf::execute::requests {
namespace {

struct Sent {
  std::string service;
  json msg;
};

std::vector<Sent> EveryRequest() {
  const json slot = {{"inputs", json::array()}, {"outputs", json::array()}};
  const std::vector<std::string> pool = {"T0", "T1"};
  const json buffers = json::array({slot, slot});
  const json watch = json::array({json::array({3, 5})});
  return {
      {"judge", Hello("cpu")},
      {"judge", Native("/cache/kforge_native.so", "kforge_native")},
      {"judge", LoadProblem("p1", "problems/level1/relu.py", uint64_t{1} << 61)},
      {"judge", Prepare("p1", "T0", 42)},
      {"judge", Prepare("p1", "main", 42, true, 7, 0)},
      {"judge", Prepare("p1", "main", 42, false)},
      {"judge", Check("p1", "main", DefaultTolerances())},
      {"judge", Check("p1", "T0", DefaultTolerances(1e-3, 1e-3), {{"seed", 9}, {"index", 12}})},
      {"judge", TimeReference("p1", "eager", pool, 3, 10, 25.0)},
      {"judge", TimeNoop("p1", pool, 20, 99, 50.0, true)},
      {"judge", Bare("gpu_state")},
      {"judge", Bare("memory")},
      {"judge", Bare("release_slots")},
      {"judge", ReleaseSlots("p1", pool)},
      {"judge", ReleaseSlots("p1", {})},
      {"judge", Lend({{"event", "borrow"}, {"shape", {4, 0, 2}}, {"dtype", "float16"}})},
      {"judge", Reclaim(std::vector<int64_t>{3, 4})},
      {"judge", Reclaim(std::nullopt)},
      {"judge", Bare("exit")},
      {"zygote", Spawn("spawn", "cpu", "/tmp/cand-1", "")},
      {"zygote", Spawn("spawn", "cuda:0", "/tmp/cand-2", "/cache/triton")},
      {"zygote", Spawn("spawn_judge", "cpu", "/tmp/problem-1", "")},
      {"zygote", Reap(1234, 5)},
      {"zygote", Native("/cache/kforge_native.so", "kforge_native")},
      {"zygote", Bare("exit")},
      {"candidate",
       Load("class ModelNew: pass", "", json::array(), 7, json::array(), json::array(), "")},
      {"candidate", Load("class ModelNew: pass", "import torch", json::array({1, 2.5}), 7,
                         json::array({{{"shape", {2}}, {"dtype", "float32"}}}), watch, "triton")},
      {"candidate", Load("class ModelNew: pass", "", json::array(), 7, json::array(),
                         json::array(), "", /*stateful=*/true)},
      {"candidate", Call("main", slot)},
      {"candidate", Call("main", slot, /*ablate=*/true)},
      {"candidate", Call("main", slot, false, /*profile=*/true)},
      {"candidate", TimeCandidate(pool, buffers, 0, 3, 77, 0.0)},
      {"candidate", Emit("T1", slot)},
      {"candidate", Release({"main"})},
      {"candidate", Release({})},
      {"candidate", Bare("memory")},
  };
}

TEST(RequestsTest, EveryRequestFitsTheSchema) {
  for (const auto& s : EveryRequest()) {
    Status st = protocol::Embedded().CheckRequest(s.service, s.msg);
    EXPECT_TRUE(st.ok()) << st.message() << "\n" << s.msg.dump();
  }
}

TEST(RequestsTest, TheyAreEveryOpButThoseKforgeNeverSends) {
  // release: the judge's (kforge keeps problems loaded); exit: candidate hosts are killed.
  const std::set<std::pair<std::string, std::string>> unsent = {{"judge", "release"},
                                                                {"candidate", "exit"}};
  std::set<std::pair<std::string, std::string>> sent;
  for (const auto& s : EveryRequest()) sent.insert({s.service, s.msg["op"]});
  for (const char* service : {"judge", "zygote", "candidate"}) {
    for (const auto& op : protocol::Embedded().Ops(service)) {
      if (unsent.count({service, op})) continue;
      EXPECT_TRUE(sent.count({service, op})) << service << " '" << op << "' is never built";
    }
  }
}

TEST(RequestsTest, TheAnswerToALoadInlineEventFits) {
  const auto& schema = protocol::Embedded();
  EXPECT_TRUE(schema
                  .CheckEventReply("candidate", "load_inline",
                                   LoadInlineAnswer(true, "/a/ext.so", "ext", ""))
                  .ok());
  EXPECT_TRUE(
      schema
          .CheckEventReply("candidate", "load_inline", LoadInlineAnswer(false, "", "", "error: x"))
          .ok());
}

// The judge keeps no tolerances: a check carries both maps whole, the flags' float32 override
// in place, and one without them is refused.
TEST(RequestsTest, ACheckCarriesTheTolerancesWhole) {
  json msg = Check("p1", "main", DefaultTolerances(1e-3));
  EXPECT_EQ(msg["atol"],
            json({{"float32", 1e-3}, {"float64", 1e-7}, {"float16", 1e-2}, {"bfloat16", 1e-2}}));
  EXPECT_EQ(msg["rtol"],
            json({{"float32", 1e-4}, {"float64", 1e-7}, {"float16", 1e-2}, {"bfloat16", 1e-2}}));
  msg.erase("atol");
  EXPECT_EQ(protocol::Embedded().CheckRequest("judge", msg).message(),
            "judge 'check' request: missing required field 'atol'");
}

// A stateful problem's load tells the host so; any other load leaves the field out.
TEST(RequestsTest, OnlyAStatefulProblemsLoadSaysSo) {
  const json empty = json::array();
  EXPECT_EQ(Load("c", "", empty, 1, empty, empty, "", true).value("stateful", false), true);
  EXPECT_FALSE(Load("c", "", empty, 1, empty, empty, "").contains("stateful"));
}

TEST(RequestsTest, AWrongRequestIsNamedByOpAndField) {
  json msg = Prepare("p1", "T0", 42);
  msg["seed"] = "42";
  EXPECT_EQ(protocol::Embedded().CheckRequest("judge", msg).message(),
            "judge 'prepare' request: field 'seed' must be integer, not string");
  EXPECT_EQ(protocol::Embedded().CheckRequest("candidate", Bare("gpu_state")).message(),
            "candidate request: unknown op 'gpu_state'");
}

}  // namespace
}  // namespace kf::execute::requests
