#!/bin/bash
# Trainer-like load on one H200 (issue 31 item 2): redis-server, `kforge serve --redis`, one
# `kforge worker --role build` and one `kforge worker --role gpu` (kept running by a small
# supervisor loop here, as systemd or Kubernetes would), then bench/trainer_load.py twice:
#   kill   one step of KP groups x KG samples through /v1/groups and /get_reward at once; KILL_S
#          seconds in, the gpu worker is SIGKILLed with its runner processes while a candidate
#          runs; the supervisor starts a new one, which reclaims the dead one's jobs after
#          RECLAIM_MS; every sample must still get exactly one verdict or an explicit no-reward
#   plain  one step of P x G (new jobs; the kernels are the repository's files again, so most
#          builds come from the cache, where a real trainer's new kernels would each be built)
# Without a redis-server (none in KFORGE_DIR, none on PATH, or REDIS=0) the service runs in
# process and the kill takes one lane's judge and zygote instead.
#
#   bench/trainer_h200.sh OUT KFORGE_DIR
#     OUT         where the results go (the device's $OUT): OUT/trainer-h200.tar.gz (the two
#                 reports as JSON and text, machine.txt, every log) and OUT/summary.txt
#     KFORGE_DIR  the bundle of scripts/gpu-bundle.sh --redis (.devnet: kforge with its
#                 libraries in lib/, and redis-server, run with LD_LIBRARY_PATH=KFORGE_DIR/lib
#                 alone; nothing else sees that variable), or a build folder holding kforge
#
# Environment: LIMIT_S (500: the whole run; each trainer run gets a share as its deadline),
# KP (8) and KG (8), P (8) and G (16) (problems and samples per step of the kill and the
# plain run), KILL_S (40), RECLAIM_MS (20000), LANES (2: execution lanes of the one gpu worker
# on GPU 0), BUILD_WORKERS (12), TRIALS (3), BASELINES (0: no eager/compile timing, an ok reward is 1; 1 times them), BACKEND (cuda; cpu
# tries the whole run on a machine without a GPU), KFORGE_PYTHON (python3: the runner's torch),
# FAMILIES (load_inline,triton where the runner's python imports triton, else load_inline),
# REDIS (1), WORK (/tmp/kforge-trainer-h200: cache, store, logs; emptied first).
# Exit: 0 both runs passed every check, 1 a check failed, 2 the service did not start, 3 no
# CUDA device visible to the runner's torch, 124 the run passed LIMIT_S.
set -uo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,29p' "$0" >&2
  exit 2
fi
mkdir -p "$1"
out=$(readlink -f "$1"); dir=$(readlink -f "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
limit=${LIMIT_S:-500}
backend=${BACKEND:-cuda}
python=${KFORGE_PYTHON:-python3}
work=${WORK:-/tmp/kforge-trainer-h200}
kforge=$dir/kforge
t0=$SECONDS
rm -rf "$work"
mkdir -p "$work/logs" "$work/redis" "$work/res"
logs=$work/logs
res=$work/res

left() { echo $((limit - (SECONDS - t0))); }
note() { echo "trainer_h200 [$((SECONDS - t0)) s]: $*" | tee -a "$res/run.log" >&2; }
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

declare -A pids   # name -> pid of every long-lived process this script started
stop_all() {
  touch "$work/stop"  # the supervisor starts no new gpu worker from here on
  local gpu="" name pid
  [ -f "$work/gpu.pid" ] && gpu=$(cat "$work/gpu.pid")
  # SIGTERM to kforge's processes at once (each finishes the jobs in its hands), up to 25 s,
  # then SIGKILL to what is left; redis-server last.
  [ -n "$gpu" ] && kill -TERM "$gpu" 2>/dev/null
  for name in serve build-worker; do
    [ -n "${pids[$name]:-}" ] && kill -TERM "${pids[$name]}" 2>/dev/null
  done
  for _ in $(seq 1 25); do
    local alive=""
    for pid in $gpu ${pids[serve]:-} ${pids[build-worker]:-} ${pids[supervisor]:-}; do
      kill -0 "$pid" 2>/dev/null && alive=1
    done
    [ -z "$alive" ] && break
    sleep 1
  done
  for name in supervisor serve build-worker redis-server; do
    pid=${pids[$name]:-}
    [ -n "$pid" ] || continue
    [ $name = redis-server ] && kill -TERM "$pid" 2>/dev/null && sleep 1
    if kill -0 "$pid" 2>/dev/null; then
      note "$name (pid $pid) had not stopped: SIGKILL"
      kill -KILL "$pid" 2>/dev/null
      [ $name = supervisor ] && [ -n "$gpu" ] && kill -KILL "$gpu" 2>/dev/null
    fi
    wait "$pid"
    note "$name exited with $?"
  done
  [ -f "$logs/supervisor.log" ] && tail -n 1 "$logs/supervisor.log" | tee -a "$res/run.log" >&2
}
pack() {
  cp "$res"/*.txt "$out/" 2>/dev/null
  cat "$res"/kill.txt "$res"/plain.txt > "$out/summary.txt" 2>/dev/null
  for f in "$logs"/*.log; do [ -f "$f" ] && tail -c 3000000 "$f" > "$res/$(basename "$f")"; done
  # the runner processes' own logs (judge, zygote, build workers), last lines only
  find "$work/cache" -name '*.log' -size +0 2>/dev/null | head -40 | while read -r f; do
    tail -c 200000 "$f" > "$res/runner-$(echo "${f#"$work"/cache/}" | tr / _)"
  done
  tar -czf "$out/trainer-h200.tar.gz" -C "$work" res
  note "wrote $out/trainer-h200.tar.gz ($(du -h "$out/trainer-h200.tar.gz" | cut -f1))"
  cp "$res/run.log" "$out/run.log"
}
finishing=""
finish() {
  [ -n "$finishing" ] && return
  finishing=1
  local rc=$1
  stop_all
  note "exit $rc after $((SECONDS - t0)) s"
  date -u >> "$res/machine.txt"
  pack
  exit "$rc"
}
trap 'finish 124' TERM INT
trap 'finish 2' EXIT  # any other way out still stops the service and packs what there is

# ---- the machine
{ date -u; nproc; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  "$python" -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'
  "$python" -c 'import triton; print("triton", triton.__version__)'
  "$kforge" doctor --backend "$backend" --python "$python"; } > "$res/machine.txt" 2>&1
if [ "$backend" = cuda ] && ! timeout 120 "$python" -c \
    'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >> "$res/machine.txt" 2>&1; then
  note "no CUDA device visible to $python's torch (machine.txt)"
  finish 3
fi
if [ ! -x "$kforge" ]; then
  note "$kforge is not an executable kforge"
  finish 2
fi
families=${FAMILIES:-load_inline}
if [ -z "${FAMILIES:-}" ] && [ "$backend" = cuda ] && "$python" -c 'import triton' 2>/dev/null; then
  families=load_inline,triton
fi

# ---- the service
devices=0
for ((i = 1; i < ${LANES:-2}; i++)); do devices+=",0"; done
eval_flags=(--backend "$backend" --python "$python" --trials "${TRIALS:-3}" --timing-budget-ms 300
            --call-timeout-s 20 --cache "$work/cache")
[ "${BASELINES:-0}" = 1 ] || eval_flags+=(--no-baselines)
redis=""
if [ "${REDIS:-1}" = 1 ]; then
  if [ -x "$dir/redis-server" ]; then redis=$dir/redis-server
  elif command -v redis-server >/dev/null; then redis=$(command -v redis-server); fi
fi
port=$(free_port)
url=http://127.0.0.1:$port
if [ -n "$redis" ]; then
  rport=$(free_port)
  # The bundle's libraries for redis-server alone: this one command's environment.
  LD_LIBRARY_PATH=$dir/lib "$redis" --port "$rport" --bind 127.0.0.1 --save "" \
    --appendonly no --dir "$work/redis" > "$logs/redis.log" 2>&1 &
  pids[redis-server]=$!
  pong=$(python3 - "$rport" <<'EOF'
import socket, sys, time
for _ in range(100):
    try:
        with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2) as s:
            s.sendall(b"PING\r\n")
            if s.recv(64).startswith(b"+PONG"):
                print("PONG")
                break
    except OSError:
        time.sleep(0.2)
EOF
)
  [ "$pong" = PONG ] || { note "redis-server did not answer (logs/redis.log)"; finish 2; }
  rurl=redis://127.0.0.1:$rport
  note "redis-server $(LD_LIBRARY_PATH=$dir/lib "$redis" --version | cut -d' ' -f3) on $rport"
  "$kforge" worker --role build --redis "$rurl" "${eval_flags[@]}" \
    --build-workers "${BUILD_WORKERS:-12}" --reclaim-idle-ms "${RECLAIM_MS:-20000}" \
    > "$logs/build-worker.log" 2>&1 &
  pids[build-worker]=$!
  # The supervisor: a gpu worker that dies is started again (a new consumer name), as a
  # service manager would; the new one takes the dead one's jobs after RECLAIM_MS.
  ( n=0
    while [ ! -e "$work/stop" ]; do
      n=$((n + 1))
      "$kforge" worker --role gpu --redis "$rurl" "${eval_flags[@]}" --devices "$devices" \
        --reclaim-idle-ms "${RECLAIM_MS:-20000}" >> "$logs/gpu-worker.log" 2>&1 &
      echo $! > "$work/gpu.pid"
      echo "$(date -u +%T) gpu worker $n started, pid $!" >> "$logs/supervisor.log"
      wait $!
      rc=$?
      echo "$(date -u +%T) gpu worker $n (pid $(cat "$work/gpu.pid")) exited with $rc" >> "$logs/supervisor.log"
      [ -e "$work/stop" ] || sleep 1
    done ) 2>> "$logs/supervisor.log" &
  pids[supervisor]=$!
  serve_engine=(--redis "$rurl")
else
  note "no redis-server: kforge serve runs in process (${LANES:-2} lanes)"
  serve_engine=(--devices "$devices" --build-workers "${BUILD_WORKERS:-12}")
fi
"$kforge" serve --port "$port" --problems problems "${serve_engine[@]}" "${eval_flags[@]}" \
  > "$logs/serve.log" 2>&1 &
pids[serve]=$!
ready=""
for _ in $(seq 1 120); do
  ready=$(python3 - "$url" <<'EOF' 2>/dev/null
import json, sys, urllib.request
h = json.load(urllib.request.urlopen(sys.argv[1] + "/healthz", timeout=2))
w = h.get("workers", {})
print("yes" if h.get("engine") == "embedded" or (w.get("gpu", 0) > 0 and w.get("build", 0) > 0) else "")
EOF
)
  [ "$ready" = yes ] && break
  sleep 1
done
if [ "$ready" != yes ]; then
  note "kforge serve did not become ready with its workers in 120 s (logs/serve.log)"
  finish 2
fi
note "kforge serve on $url ready ($families; lanes on GPU 0: $devices)"

# ---- the two runs: the kill run gets half of what is left after a 60 s reserve for the end
trainer=(python3 bench/trainer_load.py --url "$url" --backend "$backend" --families "$families"
         --seed "${SEED:-1}")
d1=$(( ($(left) - 60) / 2 ))
note "kill run: ${KP:-8} x ${KG:-8}, deadline $d1 s, kill after ${KILL_S:-40} s"
timeout -k 10 $((d1 + 90)) "${trainer[@]}" --problems "${KP:-8}" --group-size "${KG:-8}" \
  --run-id kill --deadline-s "$d1" --kill-worker-after-s "${KILL_S:-40}" \
  --out "$res/kill.json" > "$res/kill.txt" 2>&1
rc1=$?
note "kill run: exit $rc1"; tail -n 20 "$res/kill.txt" >&2
d2=$(( $(left) - 60 ))
if [ "$d2" -gt 30 ]; then
  note "plain run: ${P:-8} x ${G:-16}, deadline $d2 s"
  timeout -k 10 $((d2 + 30)) "${trainer[@]}" --problems "${P:-8}" --group-size "${G:-16}" \
    --run-id plain --deadline-s "$d2" --out "$res/plain.json" > "$res/plain.txt" 2>&1
  rc2=$?
  note "plain run: exit $rc2"; tail -n 20 "$res/plain.txt" >&2
else
  note "no time left for the plain run"
  rc2=1
fi
rc=0
[ "$rc1" = 0 ] && [ "$rc2" = 0 ] || rc=1
finish $rc
