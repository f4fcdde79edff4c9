#!/bin/bash
# KernelBench's current problems on the H200 (docs/RESULTS.md, "Real KernelBench"): what runs in
# the device calls, resumable across calls and sessions.
#
#   bench/kernelbench_h200.sh OUT STATE KB PHASE... [-- extra flags for kforge]
#     OUT    where results go (the device's $OUT)
#     STATE  a carried folder: the timing helper's artifact and feasibility rows from earlier
#            calls are read from here (copy OUT/state back into it between calls)
#     KB     a KernelBench checkout's KernelBench/ folder (level1, level2, level3)
#   phases:
#     honest         our honest float4 ReLU and softmax on KB's 19_ReLU and 23_Softmax (6 GiB
#                    and 1.5 GiB inputs), verdict JSON each
#     feasibility:L  `kforge feasibility` on KB/levelL, until $LIMIT seconds (default 480) of
#                    the call are spent; rows already in STATE are kept
# Environment: KFORGE (default .devbin/kforge), LIMIT, TRIALS, TIMING_BUDGET_MS.
set -uo pipefail
out=$(readlink -f "$1"); state=$(readlink -f "$2"); kb=$(readlink -f "$3"); shift 3
root=$(cd "$(dirname "$0")/.." && pwd)
kforge=$(readlink -f "${KFORGE:-$root/.devbin/kforge}")
limit=${LIMIT:-480}
start=$SECONDS
cache=/tmp/kforge-kb-cache
mkdir -p "$out/state" "$cache/artifacts"
export KFORGE_PYTHON=${KFORGE_PYTHON:-python3}
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
  git -C "$root" rev-parse --short HEAD; } > "$out/machine.txt" 2>&1
cp -r "$state"/artifacts/* "$cache/artifacts/" 2>/dev/null
cp "$state"/feasibility-*.jsonl "$out/state/" 2>/dev/null

phases=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do phases+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
extra=("$@")

for phase in "${phases[@]}"; do
  case "$phase" in
    honest)
      [ $((limit - (SECONDS - start))) -gt 150 ] || { echo "no time left for $phase"; continue; }
      for pair in "level1/19_ReLU.py relu" "level1/23_Softmax.py softmax"; do
        set -- $pair
        /usr/bin/time -v "$kforge" eval --json --backend cuda --cache "$cache" \
          --problem "$kb/$1" --candidate "$root/examples/cuda/$2.py" "${extra[@]}" \
          > "$out/honest-$2.json" 2> "$out/honest-$2.err"
        echo "honest $2: exit $? $(grep -o '"status": "[a-z_]*"' "$out/honest-$2.json" | head -1)"
      done
      ;;
    feasibility:*)
      level=${phase#feasibility:}
      left=$((limit - (SECONDS - start)))
      [ $left -gt 30 ] || { echo "no time left for $phase"; continue; }
      timeout -k 10 $left "$kforge" feasibility "$kb/level$level" --backend cuda --cache "$cache" \
        --out "$out/state/feasibility-level$level.jsonl" --trials "${TRIALS:-5}" \
        --timing-budget-ms "${TIMING_BUDGET_MS:-500}" "${extra[@]}" > "$out/feasibility-level$level.txt" 2>&1
      echo "feasibility level$level: exit $?, $(wc -l < "$out/state/feasibility-level$level.jsonl") rows"
      tail -1 "$out/feasibility-level$level.txt"
      ;;
    *) echo "unknown phase $phase" >&2 ;;
  esac
done
# The timing helper's artifact, so the next call need not build it again.
helper=$(grep -l '"module_name": *"kforge_native"' "$cache"/artifacts/*/result.json 2>/dev/null | head -1)
[ -n "$helper" ] && mkdir -p "$out/state/artifacts" && cp -r "$(dirname "$helper")" "$out/state/artifacts/"
# Few files come back from a call: the state, the results and kforge's logs, one archive each.
tar czf "$out/state.tgz" -C "$out" state && rm -rf "$out/state"
tar czf "$out/logs.tgz" -C "$cache" logs 2>/dev/null
(cd "$out" && tar czf results.tgz --remove-files machine.txt honest-* feasibility-*.txt 2>/dev/null)
echo "done in $((SECONDS - start)) s"
