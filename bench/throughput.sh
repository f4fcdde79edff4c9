#!/bin/bash
# Throughput of kforge itself: the same generated workload through `kforge bench` twice, in the
# pipelined mode (builds overlap execution, one lane per device) and in --sequential mode (one
# candidate at a time, build then execute), each with a fresh cache so every candidate builds.
# Prints candidates per hour, each lane's busy fraction, and the wall time as a ratio to the
# limit max(build CPU-seconds / cores, lane-seconds / lanes).
#
# Usage: bench/throughput.sh [--kforge build/kforge] [--backend cpu|cuda] [--candidates N]
#          [--problem-copies C] [--only relu,softmax] [--cores N] [--out DIR]
#          [--skip-sequential] [-- extra flags for kforge bench, e.g. --devices 0,1]
# Defaults: 100 candidates over our 9 honest examples' problems x 2 copies = 18 problems.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kforge=$root/build/kforge
backend=cpu
candidates=100
copies=2
only=""
cores=$(nproc)
out=""
sequential=1
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
    --skip-sequential) sequential=0; shift ;;
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

run_mode() {  # name, extra flags...
  local name=$1; shift
  rm -rf "$out/cache-$name" "$out/results-$name"
  echo "== $name: $(date -u +%H:%M:%S)" >&2
  "$kforge" bench --backend "$backend" "${problem_args[@]}" --samples "$out/workload/samples" \
    --cache "$out/cache-$name" --out "$out/results-$name" --progress-interval-s 30 \
    "$@" "${extra[@]}" > "$out/$name.log"
}
run_mode pipelined
[ "$sequential" = 1 ] && run_mode sequential --sequential

"$python" - "$out" "$cores" <<'PY'
import json, os, sys
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
    build_cpu_s = r["build_cpu_ms"] / 1000
    limit_s = max(build_cpu_s / cores, lane_s / len(lanes))
    print("%-10s evaluated %d in %.1f s: %.0f candidates/hour" % (
        mode, r["evaluated"], wall_s, 3600 * r["evaluated"] / wall_s if wall_s else 0))
    print("           lane busy: %s of wall" % ", ".join(
        "lane %d %.0f%%" % (i, 100 * ms / r["wall_ms"]) for i, ms in enumerate(lanes)))
    print("           build CPU %.1f s / %d cores = %.1f s; lane time %.1f s / %d lanes = %.1f s" % (
        build_cpu_s, cores, build_cpu_s / cores, lane_s, len(lanes), lane_s / len(lanes)))
    print("           limit %.1f s; wall / limit = %.2f" % (limit_s, wall_s / limit_s if limit_s else 0))
    rows.append((mode, wall_s))
if len(rows) == 2:
    print("pipelined is %.2fx faster than sequential" % (rows[1][1] / rows[0][1]))
print("reports and logs under", out)
PY
