#!/bin/bash
# Integration suite (CPU backend, no GPU): the real kforge binary end to end on our examples.
# Usage: tests/integration/run.sh path/to/kforge
set -euo pipefail
kforge=$(readlink -f "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
# A cache of this run's own, so the suite proves builds happen and are then reused.
export KFORGE_CACHE=${KFORGE_TEST_CACHE:-$(mktemp -d /tmp/kforge-it.XXXXXX)}
python=${KFORGE_PYTHON:-/usr/bin/python3}
# Two evaluations at a time (KFORGE_IT_JOBS): one waits on its compiler or its sandboxed calls
# for about a third of its time, and one at a time made this suite CI's longest chain.
exec "$python" tests/integration/eval_examples.py --kforge "$kforge" --backend cpu \
  --examples examples/cpu --problems problems --python "$python" --lane-test \
  --jobs "${KFORGE_IT_JOBS:-2}"
