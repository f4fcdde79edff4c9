#!/bin/bash
# Throughput of kforge itself: one generated workload through `kforge bench` in the pipelined
# mode (builds overlap execution, one lane per device) and in --sequential mode (one candidate at
# a time, build then execute), each with a fresh cache so every candidate builds from scratch.
# Prints candidates per hour, each lane's busy fraction, how many compiles used the precompiled
# torch header, and the wall time as a ratio to the limit
#   max(build CPU-seconds / cores, lane-seconds / lanes)
# where build CPU-seconds include the precompiled headers made during the run.
#
# Usage: bench/throughput.sh [--kforge build/kforge] [--backend cpu|cuda] [--candidates N]
#          [--problem-copies C] [--only relu,softmax] [--cores N] [--out DIR]
#          [--sequential-candidates S | --skip-sequential | --only-sequential]
#          [--seed-helper CACHE] [-- extra flags for kforge bench, e.g. --devices 0,1]
# Defaults: 100 candidates over our 9 honest examples' problems x 2 copies = 18 problems; the
# sequential mode runs the first S of the same candidates (all of them by default; one per
# problem first, so a prefix spreads over the problems).
# --seed-helper CACHE copies kforge's own timing helper (built once per machine and kforge
# version, normally long before any bench) from CACHE into each fresh cache, so that the
# measurement is of candidates only; without it each mode pays that one-off build too.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kforge=$root/build/kforge
backend=cpu
candidates=100
copies=2
only=""
cores=$(nproc)
out=""
pipelined=1
sequential=1
seq_n=""
seed=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --kforge) kforge=$(readlink -f "$2"); shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --candidates) candidates=$2; shift 2 ;;
    --problem-copies) copies=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --cores) cores=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --sequential-candidates) seq_n=$2; shift 2 ;;
    --skip-sequential) sequential=0; shift ;;
    --only-sequential) pipelined=0; shift ;;
    --seed-helper) seed=$(readlink -f "$2"); shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
out=${out:-$(mktemp -d /tmp/kforge-throughput.XXXXXX)}
mkdir -p "$out"
python=${KFORGE_PYTHON:-/usr/bin/python3}
command -v "$python" >/dev/null || python=python3

"$python" "$root/bench/make_candidates.py" --backend "$backend" --candidates "$candidates" \
  --problem-copies "$copies" ${only:+--only "$only"} --out "$out/workload"
problem_args=()
for d in "$out"/workload/problems/*/; do problem_args+=(--problems "${d%/}"); done
# The sequential mode's samples: a prefix of the generation order (the same candidates' files).
rm -rf "$out/workload/samples-seq"
head -n "${seq_n:-$candidates}" "$out/workload/order.txt" | while read -r rel; do
  mkdir -p "$out/workload/samples-seq/$(dirname "$rel")"
  cp "$out/workload/samples/$rel" "$out/workload/samples-seq/$rel"
done

seed_cache() {  # copies the timing helper's artifact from $seed into cache $1
  [ -n "$seed" ] || return 0
  mkdir -p "$1/artifacts"
  for r in "$seed"/artifacts/*/result.json; do
    [ -e "$r" ] || continue
    if grep -q '"module_name": *"kforge_native"' "$r"; then
      cp -r "$(dirname "$r")" "$1/artifacts/"
    fi
  done
}

run_mode() {  # name, samples folder, extra flags...
  local name=$1 samples=$2; shift 2
  rm -rf "$out/cache-$name" "$out/results-$name"
  seed_cache "$out/cache-$name"
  echo "== $name: $(date -u +%H:%M:%S)" >&2
  "$kforge" bench --backend "$backend" "${problem_args[@]}" --samples "$samples" \
    --cache "$out/cache-$name" --out "$out/results-$name" --progress-interval-s 30 \
    "$@" "${extra[@]}" > "$out/$name.log"
}
[ "$pipelined" = 1 ] && run_mode pipelined "$out/workload/samples"
[ "$sequential" = 1 ] && run_mode sequential "$out/workload/samples-seq" --sequential

"$python" - "$out" "$cores" <<'PY'
import glob, json, os, sys
out, cores = sys.argv[1], int(sys.argv[2])
print("cores: %d (nproc; on a shared machine other load counts against us)" % cores)
rows = []
for mode in ("pipelined", "sequential"):
    path = os.path.join(out, "results-" + mode, "results.json")
    if not os.path.exists(path):
        continue
    r = json.load(open(path))["run"]
    wall_s = r["wall_ms"] / 1000
    lanes = r["lane_busy_ms"]
    lane_s = sum(lanes) / 1000
    pch_s = 0.0
    for p in glob.glob(os.path.join(out, "cache-" + mode, "pch", "*", "pch.json")):
        pch_s += json.load(open(p)).get("cpu_s", 0)
    build_cpu_s = r["build_cpu_ms"] / 1000 + pch_s
    limit_s = max(build_cpu_s / cores, lane_s / len(lanes))
    rate = 3600 * r["evaluated"] / wall_s if wall_s else 0
    print("%-10s evaluated %d in %.1f s: %.0f candidates/hour, %.2f s each" % (
        mode, r["evaluated"], wall_s, rate, wall_s / max(1, r["evaluated"])))
    print("           lane busy: %s of wall" % ", ".join(
        "lane %d %.0f%%" % (i, 100 * ms / r["wall_ms"]) for i, ms in enumerate(lanes)))
    print("           compiled %s extensions, %s of them against the precompiled header; "
          "problems warmed on idle lanes: %s; timed again after load: %s" % (
              r.get("compiled", "?"), r.get("compiled_with_pch", "?"), r.get("warmed", "?"),
              r.get("retried", "?")))
    if r.get("compiled_light") or r.get("compiled_light_fell_back"):  # --light-headers
        print("           light headers: %d compiled light, %d fell back to the build as written"
              % (r.get("compiled_light", 0), r.get("compiled_light_fell_back", 0)))
    if r.get("compiled_split"):  # --split-build
        print("           split builds: %d of %s compiles" % (r["compiled_split"], r.get("compiled", "?")))
    print("           build CPU %.1f s (%.1f s per candidate; precompiled headers %.1f s of it)"
          % (build_cpu_s, build_cpu_s / max(1, r["evaluated"]), pch_s))
    print("           build CPU / %d cores = %.1f s; lane time %.1f s / %d lanes = %.1f s" % (
        cores, build_cpu_s / cores, lane_s, len(lanes), lane_s / len(lanes)))
    print("           limit %.1f s; wall / limit = %.2f" % (limit_s, wall_s / limit_s if limit_s else 0))
    rows.append((mode, rate))
if len(rows) == 2 and rows[1][1]:
    print("pipelined: %.2fx the candidates per hour of sequential" % (rows[0][1] / rows[1][1]))
print("reports and logs under", out)
PY
# Where each mode's lane time went (issue 19, item 2: lane-seconds per candidate).
for mode in pipelined sequential; do
  [ -f "$out/results-$mode/results.json" ] || continue
  echo "== lane time, $mode"
  "$python" "$root/bench/lane_breakdown.py" "$out/results-$mode"
done
