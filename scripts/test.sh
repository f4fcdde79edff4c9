#!/bin/bash
# Set-up and the tests: installs dependencies (and, for the web UI's browser test, Debian's
# chromium: scripts/install-test-deps.sh), builds kforge, runs the unit tests and the CPU
# end-to-end suite (no GPU needed). The GPU suite is separate: tests/gpu/run.sh.
# The suites run side by side in KFORGE_TEST_JOBS slots (default 4: a suite that computes takes
# 2, one that mostly waits 1; each waits on a compiler, a sandboxed process or a timeout for part
# of its time, so this keeps 2 cores busy);
# each prints its time (docs/ARCHITECTURE.md, "CI budget").
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
scripts/install-deps.sh
scripts/install-test-deps.sh
t1=$SECONDS
scripts/build.sh
t2=$SECONDS
printf 'test.sh: install %d s, build %d s; ctest in %d slots:\n' \
  $((t1 - t0)) $((t2 - t1)) "${KFORGE_TEST_JOBS:-4}"
ctest --test-dir build --output-on-failure -j "${KFORGE_TEST_JOBS:-4}"
