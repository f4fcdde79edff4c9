#!/bin/bash
# The RL loop of examples/rl/loop.py on one H200 (CUDA): kforge synth makes N problems sized for
# the GPU, the scripted policy answers each in a group of G through kforge serve, the service
# is restarted, BDR replays the all-failed prompts, kforge data rft builds the set.
#
#   bench/loop_h200.sh OUT KFORGE
#
# Writes OUT/loop-summary.json (examples/rl/loop.py's summary: statuses, reward quantiles per
# round, all-failed groups, BDR sizes, verdicts per second, wall time, checks), OUT/loop.log,
# OUT/machine.txt, and the loop's synth.log, serve logs, verdicts.jsonl.gz and rft.jsonl.
# The loop itself works in WORK (default /tmp/kforge-loop-h200; its problems and store).
# Exit: the loop's (0 every check passed, 1 a check failed, 2 a step failed), 3 no GPU or
# torch without CUDA, 124 the whole run passed LIMIT_S and was stopped.
#
# Sizes: with runner/calibration/cuda.json (made on this machine by `kforge synth --calibrate
# runner/calibration/cuda.json --backend cuda`) the problems take TARGET_MS (1) on the H200;
# without it they are sized by the CPU curves of runner/calibration/cpu.json to CPU_TARGET_MS
# (20) of one CPU core, and the summary says so: their H200 times are whatever they are.
# Env: N (30), G (6), SEED (1), LIMIT_S (510: the whole run, under 9 minutes), LANES (1:
# execution lanes on the one GPU; more overlap candidates at the cost of timing fidelity),
# BASELINES (0: no eager/torch.compile timing, every ok reward is 1; 1 times them, which costs
# a torch.compile per problem), KFORGE_PYTHON (python3), WORK.
set -uo pipefail
out=$(readlink -f "$1"); kforge=$(readlink -f "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mkdir -p "$out"
python=${KFORGE_PYTHON:-python3}
work=${WORK:-/tmp/kforge-loop-h200}
limit=${LIMIT_S:-510}
t0=$SECONDS

{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
  "$python" -c 'import torch; print(torch.__version__, torch.version.cuda)'; } > "$out/machine.txt" 2>&1
if ! timeout 120 "$python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
    >> "$out/machine.txt" 2>&1; then
  echo "loop_h200: no CUDA device visible to $python's torch (see $out/machine.txt)" | tee "$out/loop.log" >&2
  exit 3
fi
if [ ! -x "$kforge" ]; then
  echo "loop_h200: $kforge is not an executable kforge" | tee "$out/loop.log" >&2
  exit 2
fi

sizing=()
if [ -f runner/calibration/cuda.json ]; then
  sizing=(--calibration runner/calibration/cuda.json --target-ms "${TARGET_MS:-1}")
  echo "sizing: runner/calibration/cuda.json, --target-ms ${TARGET_MS:-1}" >> "$out/machine.txt"
else
  sizing=(--calibration runner/calibration/cpu.json --target-ms "${CPU_TARGET_MS:-20}")
  echo "sizing: no runner/calibration/cuda.json; CPU curves (runner/calibration/cpu.json), " \
       "--target-ms ${CPU_TARGET_MS:-20} of a CPU core, not of the H200" >> "$out/machine.txt"
fi
devices=0
for ((i = 1; i < ${LANES:-1}; i++)); do devices+=",0"; done
baselines=(--no-baselines)
[ "${BASELINES:-0}" = 1 ] && baselines=()

rm -rf "$work"
# The loop's own deadline ends it (and writes the summary) before the hard stop.
timeout -k 15 "$limit" "$python" examples/rl/loop.py --kforge "$kforge" --backend cuda \
  --python "$python" --problems "${N:-30}" --group-size "${G:-6}" --seed "${SEED:-1}" \
  --out "$work" "${sizing[@]}" --devices "$devices" "${baselines[@]}" --trials 5 \
  --timing-budget-ms 300 --call-timeout-s 20 --deadline-s $((limit - 40)) \
  > "$out/loop.log" 2>&1
rc=$?
[ $rc = 124 ] && echo "loop_h200: stopped after LIMIT_S=$limit s" >> "$out/loop.log"
# A loop killed outright leaves its services (sessions of their own) behind: end them.
for f in "$work"/serve-*.pid; do
  [ -f "$f" ] && kill -KILL -- "-$(cat "$f")" 2>/dev/null
done
cp "$work/summary.json" "$out/loop-summary.json" 2>/dev/null
cp "$work/synth.log" "$work/rft.jsonl" "$out/" 2>/dev/null
for f in "$work"/serve-*.log; do [ -f "$f" ] && tail -c 2000000 "$f" > "$out/$(basename "$f")"; done
[ -f "$work/verdicts.jsonl" ] && gzip -c "$work/verdicts.jsonl" > "$out/verdicts.jsonl.gz"
echo "loop_h200: exit $rc after $((SECONDS - t0)) s; summary in $out/loop-summary.json" | tee -a "$out/loop.log"
date -u >> "$out/machine.txt"
exit $rc
