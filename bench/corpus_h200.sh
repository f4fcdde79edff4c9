#!/bin/bash
# The corpus agreement run of issue 14 (docs/RESULTS.md, "Public model-written kernels"):
# `kforge bench` under KernelBench's policy and tolerance on public model-written kernels, each
# against the problem version its kernels were written for (docs/CORPORA.md), then
# bench/corpus_agreement.py against the verdicts each source recorded. Every source goes into
# one bench (bench/corpus_agreement.py merge), so builds of one source overlap the GPU work of
# another and the lane never waits between sources.
# Resumable across device calls and sessions: the store travels in STATE.
#
#   bench/corpus_h200.sh OUT STATE [SOURCE...]
#     OUT     the device's $OUT (few files come back): OUT/corpus-run-POLICY.tgz (the bench's
#             results.json, report.md, verdicts.jsonl and log, agreement.{md,jsonl}, map.jsonl),
#             OUT/agreement-POLICY.md, OUT/machine.txt, and OUT/state-POLICY.tgz (the store)
#             for the next call: copy it into STATE before that call
#     STATE   a carried folder with state-POLICY.tgz from an earlier call, or empty
#     SOURCE  cuda-l1 kb-leaderboard kb-fork-runs metr (default: all four)
# Environment: KFORGE (default .devbin/kforge), CORPUS (.corpus), LIMIT (seconds the bench may
# take new samples, default 480), PER_SOURCE (N: the first N distinct kernels of each source in
# a fixed hash order, then N + STEP, ... while time is left; default all at once), STEP
# (default N), SKIP (K: leave out each source's first K kernels, e.g. those an earlier store
# holds under an older verdict format), DEADLINE (seconds after which a running bench is ended, default LIMIT + 90),
# PROBLEMS (NAME,NAME: only these problems' kernels, e.g. 33_VanillaRNN,34_VanillaRNNHidden),
# POLICY (kernelbench, the default, or strict: the store and the run's folder are kept per
# policy, so the two resume apart), FLAGS (the bench's
# evaluation flags; default no baselines and a 500 ms timing budget: agreement is about
# correctness, not speed) and EXTRA (more bench flags, e.g. "--trials 3").
set -uo pipefail
out=$(readlink -f "$1"); state=$(readlink -f "$2"); shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
kforge=$(readlink -f "${KFORGE:-$root/.devbin/kforge}")
corpus=$(readlink -f "${CORPUS:-$root/.corpus}")
limit=${LIMIT:-480}
policy=${POLICY:-kernelbench}
cache=/tmp/kforge-corpus-cache-$policy
run=/tmp/kforge-corpus-run-$policy
merged=/tmp/kforge-corpus-merged
mkdir -p "$cache" "$out" "$run"
export KFORGE_PYTHON=${KFORGE_PYTHON:-python3}
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
  git -C "$root" rev-parse --short HEAD 2>/dev/null; } > "$out/machine.txt" 2>&1
[ -f "$state/state-$policy.tgz" ] && tar -xzf "$state/state-$policy.tgz" -C "$cache"

# Rounds of PER_SOURCE, then PER_SOURCE + STEP, ... kernels a source while time is left: each
# round a balanced set (a cut round would favour the problems bench takes first), the kernels of
# earlier rounds answered from the store.
n=${PER_SOURCE:-}
round=0
deadline=${DEADLINE:-$((limit + 90))}
start=$SECONDS
while :; do
  left=$((limit - (SECONDS - start)))
  [ $left -ge 60 ] || break
  python3 "$root/bench/corpus_agreement.py" merge --corpus "$corpus" --into "$merged" \
    ${n:+--per-source "$n"} --skip "${SKIP:-0}" ${PROBLEMS:+--problems "$PROBLEMS"} "$@" \
    >> "$out/machine.txt" || exit 1
  problems=()
  for d in "$merged"/problems/*; do problems+=(--problems "$d"); done
  # KernelBench's acceptance: its policy, and the 1e-2 tolerances its harness used.
  # A bench past its --time-limit-s still finishes the samples it started (level-3 builds take
  # minutes): DEADLINE ends it whole, so the store and the reports still reach OUT in time.
  timeout -k 10 $((deadline - (SECONDS - start))) \
  "$kforge" bench --backend cuda --policy "$policy" --atol 1e-2 --rtol 1e-2 \
    ${FLAGS:---no-baselines --timing-budget-ms 500} --cache "$cache" "${problems[@]}" \
    --samples "$merged/samples" --out "$run/bench-$round" --time-limit-s "$left" \
    --progress-interval-s 60 ${EXTRA:-} > "$run/bench-$round.log" 2>&1
  echo "bench round $round (${n:-all} a source): exit $? $(grep -E '^(samples|stopped)' \
    "$run/bench-$round.log" | tr '\n' ' ')"
  round=$((round + 1))
  [ -n "$n" ] || break
  n=$((n + ${STEP:-$n}))
done
tar -czf "$out/state-$policy.tgz" -C "$cache" $(cd "$cache" && ls kforge.db*)
cp "$merged/map.jsonl" "$run/"
# The last merge's map names every kernel of every round (a kernel keeps its name).
benches=()
for d in "$run"/bench-*/; do benches+=(--bench "$d"); done
python3 "$root/bench/corpus_agreement.py" compare --corpus "$corpus" "${benches[@]}" \
  --map "$merged/map.jsonl" --out "$run/agreement" > /dev/null &&
  cp "$run/agreement.md" "$out/agreement-$policy.md" && head -12 "$out/agreement-$policy.md"
tar -czf "$out/corpus-run-$policy.tgz" -C "$run" .
