// Tests that play a runner process (the zygote, a judge) on a socket pair. Internal to tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "execute/runner_proc.h"

namespace kf::execute {

// Joins `proc` (named `what`, speaking `service`'s part of runner/protocol.json) to the test's
// end of a socket pair, returned: what the test sends there is what the runner would.
inline Channel PlayRunner(RunnerProc* proc, const std::string& what, const std::string& service) {
  UniqueFd mine, theirs;
  EXPECT_TRUE(SocketPair(&mine, &theirs).ok());
  proc->what = what;
  proc->service = service;
  proc->chan = Channel(std::move(mine));
  return Channel(std::move(theirs));
}

}  // namespace kf::execute
