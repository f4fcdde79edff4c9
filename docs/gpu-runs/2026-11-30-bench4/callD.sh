# Honest fast kernels timed while a busy loop per core runs at nice 0 (harder than compilers
# at nice 10): every verdict must be ok or infra_error, never cheat. Then the CUDA H07 red team.
set -u
export KFORGE_PYTHON=python3
export KFORGE_CACHE=/tmp/d-cache
mkdir -p $KFORGE_CACHE && cp -r helper/artifacts $KFORGE_CACHE/
log=$OUT/load.log
cand() { case $1 in entry) echo tests/redteam/cuda/h07_driver_entry_point.py;; slow) echo tests/redteam/cuda/h07_entry_slow.py;; *) echo examples/cuda/$1.py;; esac; }
prob() { case $1 in entry|slow) echo relu;; *) echo $1;; esac; }
ev() { build/kforge eval --json --backend cuda --problem problems/level1/$(prob $1).py --candidate $(cand $1) --no-baselines --timing-budget-ms 300 --call-timeout-s 20; }
summ() { python3 -c "
import json, sys
v = json.load(sys.stdin); v = v.get('verdict', v); st = {s['name']: s for s in v.get('stages', [])}
t = st.get('timing', {})
print('$1', '$2', v['status'], 'median_ms', ((v.get('timing') or {}).get('candidate_ms') or {}).get('median'), 'host_wait_ms', t.get('host_wait_ms'), 'host_cpu_ms', t.get('host_cpu_ms'), [d.get('code') + ': ' + d.get('message')[:300] for d in v.get('diagnostics', [])][:2])" >> $log 2>&1; }
for ex in ${IDLE:-relu softmax entry}; do (ev $ex 2>>$log | summ $ex idle) & done
wait
echo "built: $(date -u)" >> $log
pids=()
for i in $(seq $(( ${LOOPS:-1} * $(nproc) ))); do (while :; do :; done) & pids+=($!); done
for round in 1 2 3; do
  for ex in ${LOADED:-relu softmax entry}; do ev $ex 2>>$log | summ $ex loaded; done
done
kill "${pids[@]}"; wait 2>/dev/null
echo "load done: $(date -u)" >> $log
