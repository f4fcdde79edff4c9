#!/bin/bash
# The H200 numbers of docs/PERFORMANCE.md in one device call (it must fit in 10 minutes, so the
# workload is smaller than bench/throughput.sh's default): the pipelined bench of N distinct
# CUDA candidates, the same bench again on its warm store (it must evaluate nothing), and the
# sequential mode on S candidates for the per-candidate comparison.
# Usage: bench/h200_session.sh OUTDIR [path/to/kforge]   (env: N=32 S=3 COPIES=2)
set -uo pipefail
out=$(readlink -f "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
kforge=$(readlink -f "${2:-$root/build/kforge}")
mkdir -p "$out"
cd "$root"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; date -u; } > "$out/machine.txt" 2>&1
KFORGE_PYTHON=${KFORGE_PYTHON:-python3} bash bench/throughput.sh --kforge "$kforge" --backend cuda \
  --candidates "${N:-32}" --problem-copies "${COPIES:-2}" --skip-sequential --out /tmp/tp-pipe \
  > "$out/pipelined.txt" 2>&1
args=()
for d in /tmp/tp-pipe/workload/problems/*/; do args+=(--problems "${d%/}"); done
t0=$(date +%s%N)
"$kforge" bench --backend cuda "${args[@]}" --samples /tmp/tp-pipe/workload/samples \
  --cache /tmp/tp-pipe/cache-pipelined --out /tmp/tp-pipe/results-rerun > "$out/rerun.txt" 2>&1
echo "rerun wall: $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$out/rerun.txt"
python3 -c "import json;r=json.load(open('/tmp/tp-pipe/results-rerun/results.json'))['run'];print('rerun evaluated', r['evaluated'], 'reused', r.get('reused'))" >> "$out/rerun.txt"
cp /tmp/tp-pipe/results-pipelined/report.html "$out/report.html" 2>/dev/null
KFORGE_PYTHON=${KFORGE_PYTHON:-python3} bash bench/throughput.sh --kforge "$kforge" --backend cuda \
  --candidates "${S:-3}" --problem-copies 1 --out /tmp/tp-seq > "$out/sequential.txt" 2>&1
date -u >> "$out/machine.txt"
