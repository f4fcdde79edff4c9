#include "queue/ledger.h"

#include <gtest/gtest.h>

namespace kf::queue {
namespace {

JobSpec Job(const std::string& candidate) {
  return MakeJob("level1/relu", "class Model: pass\n", candidate, "cpu", "s");
}

TEST(Ledger, AMissingJobWithACopyIsQueuedAgainFromIt) {
  Ledger l;
  JobSpec j = Job("a");
  l.Hold(j);
  EXPECT_EQ(l.Reconcile(j.id, Seen::kInFlight).action, Decision::Action::kNothing);
  Decision d = l.Reconcile(j.id, Seen::kMissing);
  ASSERT_EQ(d.action, Decision::Action::kRequeue);
  ASSERT_TRUE(d.spec.has_value());
  EXPECT_EQ(d.spec->candidate, "a");
  EXPECT_EQ(d.spec->id, j.id);
  // Still held after the re-queue: lost again, it is queued again.
  EXPECT_EQ(l.Reconcile(j.id, Seen::kMissing).action, Decision::Action::kRequeue);
  EXPECT_EQ(l.Open(), std::vector<std::string>{j.id});
}

TEST(Ledger, ADoneJobDropsItsCopyAndIsLostIfItsResultVanishes) {
  Ledger l;
  JobSpec j = Job("a");
  l.Hold(j);
  EXPECT_EQ(l.Reconcile(j.id, Seen::kDone).action, Decision::Action::kNothing);
  EXPECT_TRUE(l.Open().empty());
  EXPECT_TRUE(l.Knows(j.id));
  Decision d = l.Reconcile(j.id, Seen::kMissing);
  EXPECT_EQ(d.action, Decision::Action::kLost);
  EXPECT_EQ(d.identity.problem_id, "level1/relu");
  EXPECT_EQ(d.identity.candidate_hash, IdentityOf(j).candidate_hash);
  // Submitted again: held again, so queued again if lost.
  l.Hold(j);
  EXPECT_EQ(l.Reconcile(j.id, Seen::kMissing).action, Decision::Action::kRequeue);
}

TEST(Ledger, AnIdNeverHeldIsUnknown) {
  Ledger l;
  EXPECT_EQ(l.Reconcile("nope", Seen::kMissing).action, Decision::Action::kUnknown);
  EXPECT_EQ(l.Reconcile("nope", Seen::kInFlight).action, Decision::Action::kNothing);
  EXPECT_FALSE(l.Knows("nope"));
}

TEST(Ledger, BoundedCopiesDropTheOldestFirstAndKeepItsId) {
  Ledger l(LedgerOptions{2, 100});
  JobSpec a = Job("a"), b = Job("b"), c = Job("c");
  l.Hold(a);
  l.Hold(b);
  l.Hold(c);
  EXPECT_EQ(l.open_count(), 2u);
  EXPECT_EQ(l.Open(), (std::vector<std::string>{b.id, c.id}));
  EXPECT_EQ(l.Reconcile(a.id, Seen::kMissing).action, Decision::Action::kLost);
  EXPECT_EQ(l.Reconcile(c.id, Seen::kMissing).action, Decision::Action::kRequeue);
}

TEST(Ledger, BoundedIdsForgetTheOldest) {
  Ledger l(LedgerOptions{10, 2});
  JobSpec a = Job("a"), b = Job("b"), c = Job("c");
  l.Hold(a);
  l.Hold(b);
  l.Hold(c);
  EXPECT_EQ(l.known_count(), 2u);
  EXPECT_FALSE(l.Knows(a.id));
  EXPECT_EQ(l.Reconcile(a.id, Seen::kMissing).action, Decision::Action::kUnknown);
  EXPECT_EQ(l.Open(), (std::vector<std::string>{b.id, c.id}));
}

TEST(Ledger, HoldingTwiceKeepsOneCopy) {
  Ledger l;
  JobSpec a = Job("a");
  l.Hold(a);
  l.Hold(a);
  EXPECT_EQ(l.open_count(), 1u);
  EXPECT_EQ(l.known_count(), 1u);
}

}  // namespace
}  // namespace kf::queue
