#!/bin/bash
# The GPU suite in one call: the CUDA examples (each in its own kforge process, so the
# per-candidate split into build and device stages is recorded), then the CUDA red team (8
# candidates at a time, each in its own kforge process). Builds are warmed in parallel first. Writes JSON lines and Markdown tables
# into OUTDIR.
# Usage: tests/gpu/full.sh path/to/kforge OUTDIR [examples-folder]
set -uo pipefail
kforge=$(readlink -f "$1")
out=$2
examples=${3:-examples/cuda}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
mkdir -p "$out"
export KFORGE_CACHE=${KFORGE_TEST_CACHE:-$root/.kforge-cache}
python=${KFORGE_PYTHON:-python3}
jobs=${KFORGE_WARM_JOBS:-16}
"$python" tests/integration/eval_examples.py --kforge "$kforge" --backend cuda \
  --examples "$examples" --problems problems --python "$python" --timing-budget-ms 1000 \
  --call-timeout-s 8 --warm-jobs "$jobs" --results "$out/examples.jsonl" | tee "$out/examples.log"
"$python" tests/integration/results_table.py "$out/examples.jsonl" > "$out/examples.md"
KFORGE_JOBS=${KFORGE_REDTEAM_JOBS:-8} KFORGE_PYTHON=$python \
  bash tests/redteam/run.sh "$kforge" cuda "$out/redteam.jsonl" | tee "$out/redteam.log"
"$python" tests/integration/results_table.py "$out/redteam.jsonl" > "$out/redteam.md"
