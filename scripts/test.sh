#!/bin/bash
# Set-up and the tests: installs dependencies, builds kforge, runs the unit tests and the
# CPU end-to-end suite (no GPU needed). The GPU suite is separate: tests/gpu/run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
ctest --test-dir build --output-on-failure
