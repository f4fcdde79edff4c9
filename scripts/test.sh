#!/bin/bash
# Set-up and the tests: installs dependencies (and, for the web UI's browser test, Debian's
# chromium: scripts/install-test-deps.sh), builds kforge, runs the unit tests and the CPU
# end-to-end suite (no GPU needed). The GPU suite is separate: tests/gpu/run.sh.
# The suites run KFORGE_TEST_JOBS at a time (default 3: most of them wait on a compiler, a
# sandboxed process or a timeout for part of their time, so a third one keeps 2 cores busy);
# each prints its time (docs/ARCHITECTURE.md, "CI budget").
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
scripts/install-deps.sh
scripts/install-test-deps.sh
t1=$SECONDS
scripts/build.sh
t2=$SECONDS
printf 'test.sh: install %d s, build %d s; ctest, %d suites at a time:\n' \
  $((t1 - t0)) $((t2 - t1)) "${KFORGE_TEST_JOBS:-3}"
ctest --test-dir build --output-on-failure -j "${KFORGE_TEST_JOBS:-3}"
