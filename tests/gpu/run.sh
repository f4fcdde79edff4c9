#!/bin/bash
# GPU suite (CUDA backend): the real kforge binary on the CUDA examples. Needs an NVIDIA GPU,
# nvcc and a CUDA build of PyTorch; CI never runs it.
# Usage: tests/gpu/run.sh path/to/kforge [results.jsonl]
set -euo pipefail
kforge=$(readlink -f "$1")
results=${2:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export KFORGE_CACHE=${KFORGE_TEST_CACHE:-$root/.kforge-cache}
python=${KFORGE_PYTHON:-python3}
args=(--kforge "$kforge" --backend cuda --examples examples/cuda --problems problems
      --python "$python" --timing-budget-ms 1000 --call-timeout-s 20)
if [ -n "${KFORGE_WARM_JOBS:-}" ]; then args+=(--warm-jobs "$KFORGE_WARM_JOBS"); fi
if [ -n "$results" ]; then args+=(--results "$results"); fi
exec "$python" tests/integration/eval_examples.py "${args[@]}"
