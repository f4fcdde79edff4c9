#!/bin/bash
# Set-up and the tests: installs dependencies (and, for the web UI's browser test, Debian's
# chromium: scripts/install-test-deps.sh), builds kforge, runs the unit tests and the CPU
# end-to-end suite (no GPU needed). The GPU suite is separate: tests/gpu/run.sh.
# The suites run side by side in KFORGE_TEST_JOBS slots (default 4: a suite that computes takes
# 2, one that mostly waits 1; each waits on a compiler, a sandboxed process or a timeout for part
# of its time, so this keeps 2 cores busy), while the unit tests' binary builds;
# each prints its time (docs/ARCHITECTURE.md, "CI budget").
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
scripts/install-deps.sh
scripts/install-test-deps.sh
t1=$SECONDS
# What the end-to-end suites run first; the unit tests' binary is built beside them, at a low
# priority (it takes the CPU the suites leave while they wait), and its tests run once it is.
scripts/build.sh --target kforge kforge_sandbox kforge_web_fill
t2=$SECONDS
jobs=${KFORGE_TEST_JOBS:-4}
printf 'test.sh: install %d s, build %d s; the suites in %d slots, the unit tests after their build:\n' \
  $((t1 - t0)) $((t2 - t1)) "$jobs"
# (kforge_tests_NOT_BUILT is the placeholder ctest lists until the unit tests' binary exists.)
ctest --test-dir build --output-on-failure -j "$jobs" -LE unit -E '^kforge_tests_NOT_BUILT$' &
suites=$!
unit_rc=0
{
  nice -n 15 scripts/build.sh
  printf 'test.sh: the unit tests built after %d s\n' $((SECONDS - t2))
  ctest --test-dir build --output-on-failure -j 1 -L unit
} || unit_rc=$?
suites_rc=0
wait "$suites" || suites_rc=$?
printf 'test.sh: everything after %d s (suites exit %d, unit tests exit %d)\n' \
  $((SECONDS - t0)) "$suites_rc" "$unit_rc"
[ "$suites_rc" = 0 ] && [ "$unit_rc" = 0 ]
