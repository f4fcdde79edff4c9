#!/bin/bash
# The H200 numbers of docs/PERFORMANCE.md, in two device calls (each must end within 10 minutes):
#
#   bench/h200_session.sh sequential OUT [kforge] [HELPER_CACHE]
#       # S candidates (default 3) in --sequential mode, then where one CUDA build's time goes
#       # (bench/build_breakdown.py); leaves the timing helper's artifact in OUT/helper.tgz
#       # (unpacked, it is the next call's HELPER_CACHE)
#   bench/h200_session.sh pipelined OUT [kforge] [HELPER_CACHE]
#       # N distinct candidates (default 100) pipelined, then the same bench again on its store
#
# Both phases generate the same workload (bench/make_candidates.py is deterministic): N CUDA
# candidates over our honest examples' problems x COPIES (default 2 = 18 problems); the
# sequential phase runs the first S of them. Env: N, S, COPIES, BENCH_FLAGS (more flags for
# kforge bench, e.g. --split-build).
set -uo pipefail
phase=$1
out=$(readlink -f "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
kforge=$(readlink -f "${3:-$root/build/kforge}")
mkdir -p "$out"
cd "$root"
export KFORGE_PYTHON=${KFORGE_PYTHON:-python3}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; date -u; } >> "$out/machine.txt" 2>&1
n=${N:-100}
copies=${COPIES:-2}
tp=/tmp/tp-$phase
read -r -a flags <<< "${BENCH_FLAGS:-}"  # more kforge bench flags, e.g. BENCH_FLAGS=--split-build

# Copies a log into OUT every 15 s while a command runs, so a call cut off by its limit still
# brings back how far it got.
follow() {  # src dst, then the command
  local src=$1 dst=$2; shift 2
  "$@" & local pid=$!
  while kill -0 $pid 2>/dev/null; do sleep 15; cp "$src" "$dst" 2>/dev/null; done
  wait $pid; local rc=$?
  cp "$src" "$dst" 2>/dev/null
  return $rc
}

case "$phase" in
  sequential)
    seed=()
    [ -n "${4:-}" ] && seed=(--seed-helper "$4")
    mkdir -p $tp
    follow $tp/sequential.log "$out/sequential.log" \
      bash bench/throughput.sh --kforge "$kforge" --backend cuda --candidates "$n" \
        --problem-copies "$copies" --only-sequential --sequential-candidates "${S:-3}" \
        "${seed[@]}" --out $tp > "$out/sequential.txt" 2>&1
    helper=$(grep -l '"module_name": *"kforge_native"' $tp/cache-sequential/artifacts/*/result.json | head -1)
    [ -n "$helper" ] && tar czf "$out/helper.tgz" -C $tp/cache-sequential \
      "artifacts/$(basename "$(dirname "$helper")")"
    # One CUDA candidate's build, phase by phase, with and without the precompiled header.
    art=$(grep -L '"module_name": *"kforge_native"' $tp/cache-sequential/artifacts/*/result.json | head -1)
    [ -n "$art" ] && python3 bench/build_breakdown.py "$(dirname "$art")" \
      --pch-dir $tp/cache-sequential/pch > "$out/breakdown.txt" 2>&1
    ls -la $tp/cache-sequential/pch >> "$out/breakdown.txt" 2>&1
    cat $tp/cache-sequential/pch/*/pch.json >> "$out/breakdown.txt" 2>&1
    ;;
  pipelined)
    seed=()
    [ -n "${4:-}" ] && seed=(--seed-helper "$4")
    mkdir -p $tp
    follow $tp/pipelined.log "$out/pipelined.log" \
      bash bench/throughput.sh --kforge "$kforge" --backend cuda --candidates "$n" \
        --problem-copies "$copies" --skip-sequential "${seed[@]}" --out $tp \
        ${flags[@]+-- "${flags[@]}"} > "$out/pipelined.txt" 2>&1
    args=()
    for d in $tp/workload/problems/*/; do args+=(--problems "${d%/}"); done
    t0=$(date +%s%N)
    "$kforge" bench --backend cuda "${args[@]}" --samples $tp/workload/samples \
      --cache $tp/cache-pipelined --out $tp/results-rerun ${flags[@]+"${flags[@]}"} > "$out/rerun.txt" 2>&1
    echo "rerun wall: $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$out/rerun.txt"
    python3 -c "import json;r=json.load(open('$tp/results-rerun/results.json'))['run'];print('rerun evaluated', r['evaluated'], 'reused', r.get('reused'))" >> "$out/rerun.txt"
    cp $tp/results-pipelined/report.html $tp/results-pipelined/results.json "$out/" 2>/dev/null
    cat $tp/cache-pipelined/pch/*/pch.json > "$out/pch.json" 2>/dev/null
    ;;
  *) echo "usage: $0 sequential|pipelined OUT [kforge] [HELPER_CACHE]" >&2; exit 2 ;;
esac
date -u >> "$out/machine.txt"
