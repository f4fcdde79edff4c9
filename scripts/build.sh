#!/bin/bash
# Configures and builds kforge into build/ (Release with debug info). Arguments go to the build
# step: `scripts/build.sh --target kforge` builds the binary alone, without the unit tests.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja >/dev/null
cmake --build build "$@"
