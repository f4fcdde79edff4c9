#!/bin/bash
# The red team: every candidate in tests/redteam/<backend>/ must end as its header says
# (`cheat` naming its rule (docs/RULES.md), or `incorrect`), all through one lane per problem.
# Usage: [KFORGE_JOBS=N] [KFORGE_POLICY=kernelbench] tests/redteam/run.sh path/to/kforge
#        [cpu|cuda|triton] [results.jsonl]
# `triton`: the Triton candidates of tests/redteam/triton/, on the CPU through the stand-in for
# Triton (tests/triton/python.sh), or with KFORGE_TRITON_BACKEND=cuda on a GPU with the
# machine's own Triton (KFORGE_PYTHON, else python3).
# KFORGE_POLICY=kernelbench: under KernelBench's policy, where a candidate's header says what
# changes (kforge-expect-kernelbench: PyTorch compute beside a real kernel is allowed and listed).
# KFORGE_EVAL_FLAGS="--plain-headers": more kforge eval flags for every candidate (that one builds
# CUDA sources as written, not with the default light headers).
set -euo pipefail
kforge=$(readlink -f "$1")
folder=${2:-cpu}
results=${3:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
backend=$folder
[ "$folder" = triton ] && backend=${KFORGE_TRITON_BACKEND:-cpu}
export KFORGE_CACHE=${KFORGE_TEST_CACHE:-$(mktemp -d /tmp/kforge-rt.XXXXXX)}
python=${KFORGE_PYTHON:-/usr/bin/python3}
[ "$backend" = cuda ] && python=${KFORGE_PYTHON:-python3}
[ "$folder" = triton ] && [ "$backend" = cpu ] && python=${KFORGE_PYTHON:-$root/tests/triton/python.sh}
args=(--kforge "$kforge" --backend "$backend" --examples "tests/redteam/$folder" --problems problems
      --python "$python" --no-cache-test --timing-budget-ms 300 --call-timeout-s 20
      --policy "${KFORGE_POLICY:-strict}")
# KFORGE_JOBS=N: N candidates at a time, each in its own kforge process (a GPU machine's many
# cores); otherwise all candidates of a problem through one lane.
if [ -n "${KFORGE_JOBS:-}" ]; then args+=(--jobs "$KFORGE_JOBS"); else args+=(--one-lane); fi
if [ -n "${KFORGE_WARM_JOBS:-}" ]; then args+=(--warm-jobs "$KFORGE_WARM_JOBS"); fi
if [ -n "$results" ]; then args+=(--results "$results"); fi
exec "$python" tests/integration/eval_examples.py "${args[@]}"
