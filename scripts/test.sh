#!/bin/bash
# Set-up and the tests: installs dependencies (and, for the web UI's browser test, Debian's
# chromium: scripts/install-test-deps.sh), builds kforge, runs the unit tests and the CPU
# end-to-end suite (no GPU needed). The GPU suite is separate: tests/gpu/run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/install-test-deps.sh
scripts/build.sh
ctest --test-dir build --output-on-failure
