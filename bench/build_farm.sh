#!/bin/bash
# Build workers as a farm (issue 30 item 4): one `kforge worker --role gpu` fed through Redis by
# K `kforge worker --role build` processes, each confined to CORES cores of its own (`taskset`),
# as separate build boxes sharing one artifact folder (NFS, in a real farm: docs/OPERATIONS.md,
# "A build farm") would be. For each K in FARM, a fresh cache and a fresh Redis prefix, then
# bench/farm_load.py posts the same N new candidates (bench/make_candidates.py: each needs its
# own build) as one step of groups through `kforge serve --redis` and times every answer. The
# curve: candidates an hour against K.
#
#   bench/build_farm.sh OUT KFORGE_DIR
#     OUT         where the results go: OUT/farm.txt (one line per K), OUT/farm-K.json,
#                 OUT/logs-K/ (the processes' logs, last 200 kB each)
#     KFORGE_DIR  scripts/gpu-bundle.sh --redis's bundle (kforge, lib/, redis-server), or a
#                 build folder holding kforge (redis-server then from PATH)
#
# Environment: FARM ("1 2 4"), N (24 candidates per K), COPIES (1 copy of each example's
# problem), CORES (4 per build worker), GPU_CORES (cores for serve, Redis and the gpu worker:
# default the last 2), BACKEND (cuda; cpu tries it on a machine without a GPU), LANES (1),
# KFORGE_PYTHON (python3), TRIALS (3), LIMIT_S (560: the whole run; a K that would start with
# less than 60 s left is skipped and says so), WORK (/tmp/kforge-farm).
# Exit: 0 every K answered every sample `ok`, 1 one did not, 2 the service did not start.
set -uo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,23p' "$0" >&2
  exit 2
fi
mkdir -p "$1"
out=$(readlink -f "$1"); dir=$(readlink -f "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
kforge=$dir/kforge
backend=${BACKEND:-cuda}
python=${KFORGE_PYTHON:-python3}
work=${WORK:-/tmp/kforge-farm}
limit=${LIMIT_S:-560}
cores=${CORES:-4}
ncpu=$(nproc)
gpu_cores=${GPU_CORES:-$((ncpu > 2 ? ncpu - 2 : 0))-$((ncpu - 1))}
t0=$SECONDS
rm -rf "$work"; mkdir -p "$work"
note() { echo "build_farm [$((SECONDS - t0)) s]: $*" | tee -a "$out/farm.txt" >&2; }
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

redis=""
if [ -x "$dir/redis-server" ]; then redis=$dir/redis-server
elif command -v redis-server >/dev/null; then redis=$(command -v redis-server); fi
[ -n "$redis" ] || { note "no redis-server in $dir or on PATH"; exit 2; }
rport=$(free_port)
LD_LIBRARY_PATH=$dir/lib taskset -c "$gpu_cores" "$redis" --port "$rport" --bind 127.0.0.1 \
  --save "" --appendonly no --dir "$work" > "$work/redis.log" 2>&1 &
redis_pid=$!
trap 'kill $redis_pid 2>/dev/null' EXIT
for _ in $(seq 1 50); do
  python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $rport), 1)" 2>/dev/null && break
  sleep 0.2
done
rurl=redis://127.0.0.1:$rport

"$python" bench/make_candidates.py --backend "$backend" --candidates "${N:-24}" \
  --problem-copies "${COPIES:-1}" --out "$work/workload" > /dev/null || exit 2
devices=0
for ((i = 1; i < ${LANES:-1}; i++)); do devices+=",0"; done
flags=(--backend "$backend" --python "$python" --trials "${TRIALS:-3}" --timing-budget-ms 300
       --call-timeout-s 20 --no-baselines)
{ date -u; echo "cores $ncpu, build workers on $cores cores each, serve/redis/gpu worker on $gpu_cores"
  nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null; } >> "$out/farm.txt"

rc=0
for k in ${FARM:-1 2 4}; do
  if [ $((limit - (SECONDS - t0))) -lt 60 ]; then
    note "K=$k skipped: less than 60 s left of LIMIT_S=$limit"
    rc=1
    continue
  fi
  cache=$work/cache-$k; logs=$work/logs-$k
  mkdir -p "$cache" "$logs"
  prefix=farm$k
  port=$(free_port)
  pids=()
  taskset -c "$gpu_cores" "$kforge" serve --port "$port" --problems "$work/workload/problems" \
    --redis "$rurl" --prefix "$prefix" --cache "$cache" "${flags[@]}" > "$logs/serve.log" 2>&1 &
  pids+=($!)
  taskset -c "$gpu_cores" "$kforge" worker --role gpu --redis "$rurl" --prefix "$prefix" \
    --cache "$cache" --devices "$devices" "${flags[@]}" > "$logs/gpu-worker.log" 2>&1 &
  pids+=($!)
  for ((w = 0; w < k; w++)); do
    first=$((w * cores))
    if [ $((first + cores)) -gt "$ncpu" ]; then
      note "K=$k: build worker $w would need cores $first-$((first + cores - 1)) of $ncpu"
      break
    fi
    taskset -c "$first-$((first + cores - 1))" "$kforge" worker --role build --redis "$rurl" \
      --prefix "$prefix" --cache "$cache" --build-workers "$cores" "${flags[@]}" \
      > "$logs/build-worker-$w.log" 2>&1 &
    pids+=($!)
  done
  ready=""
  for _ in $(seq 1 120); do
    ready=$(python3 - "http://127.0.0.1:$port" "$k" <<'EOF' 2>/dev/null
import json, sys, urllib.request
w = json.load(urllib.request.urlopen(sys.argv[1] + "/healthz", timeout=2)).get("workers", {})
print("yes" if w.get("gpu", 0) > 0 and w.get("build", 0) >= int(sys.argv[2]) else "")
EOF
)
    [ "$ready" = yes ] && break
    sleep 1
  done
  if [ "$ready" = yes ]; then
    left=$((limit - (SECONDS - t0) - 20))
    timeout -k 10 "$left" python3 bench/farm_load.py --url "http://127.0.0.1:$port" \
      --workload "$work/workload" --timeout-s "$left" --label "K=$k build workers" \
      --out "$out/farm-$k.json" 2>&1 | tee -a "$out/farm.txt"
    [ "${PIPESTATUS[0]}" = 0 ] || rc=1
  else
    note "K=$k: the service and its workers were not ready in 120 s (logs-$k/serve.log)"
    rc=2
  fi
  kill -TERM "${pids[@]}" 2>/dev/null
  for _ in $(seq 1 20); do
    alive=""; for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ -z "$alive" ] && break
    sleep 1
  done
  kill -KILL "${pids[@]}" 2>/dev/null
  wait "${pids[@]}" 2>/dev/null
  mkdir -p "$out/logs-$k"
  for f in "$logs"/*.log; do tail -c 200000 "$f" > "$out/logs-$k/$(basename "$f")"; done
done
note "exit $rc after $((SECONDS - t0)) s"
exit $rc
