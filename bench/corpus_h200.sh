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
#             OUT/agreement-POLICY.md, OUT/machine.txt, and OUT/state.tgz (the store, every
#             policy's verdicts) for the next call: copy it into STATE before that call
#     STATE   a carried folder with state.tgz from an earlier call (or an older call's
#             state-POLICY.tgz, one per policy), or empty
#     SOURCE  cuda-l1 kb-leaderboard kb-fork-runs metr (default: all four)
# Environment: KFORGE (default .devbin/kforge; for a run over several sessions a judge pinned by
# scripts/pin-judge.sh inside STATE, e.g. STATE/judge/kforge: its verdicts' keys stay the same
# while main's runner changes, and machine.txt names its commit), CORPUS (.corpus), LIMIT (seconds the bench may
# take new samples, default 480), PER_SOURCE (N: the first N distinct kernels of each source in
# a fixed hash order, then N + STEP, ... while time is left; default all at once), STEP
# (default N), SKIP (K: leave out each source's first K kernels, e.g. those an earlier store
# holds under an older verdict format), DEADLINE (seconds after which a running bench is ended, default LIMIT + 90),
# PROBLEMS (NAME,NAME: only these problems' kernels, e.g. 33_VanillaRNN,34_VanillaRNNHidden),
# POLICY (kernelbench, the default, or strict, or both: "kernelbench strict"; with both, each
# round benches its kernels under one policy, then the other, in one cache, so the second
# reuses the first's builds and pays only for the GPU; the run's folder and reports are per
# policy, the store holds both), FLAGS (the bench's
# evaluation flags; default no baselines and a 500 ms timing budget: agreement is about
# correctness, not speed) and EXTRA (more bench flags, e.g. "--trials 3").
set -uo pipefail
out=$(readlink -f "$1"); state=$(readlink -f "$2"); shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
kforge=$(readlink -f "${KFORGE:-$root/.devbin/kforge}")
corpus=$(readlink -f "${CORPUS:-$root/.corpus}")
limit=${LIMIT:-480}
read -ra policies <<< "${POLICY:-kernelbench}"
for policy in "${policies[@]}"; do
  case $policy in kernelbench|strict) ;; *) echo "corpus_h200: POLICY: kernelbench and/or strict, not '$policy'" >&2; exit 2 ;; esac
done
cache=/tmp/kforge-corpus-cache
merged=/tmp/kforge-corpus-merged
mkdir -p "$cache" "$out"
for policy in "${policies[@]}"; do mkdir -p "/tmp/kforge-corpus-run-$policy"; done
export KFORGE_PYTHON=${KFORGE_PYTHON:-python3}
# Which kforge gives the verdicts: a judge pinned by scripts/pin-judge.sh names its commit.
judge="kforge at $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?') (the checkout)"
[ -f "$(dirname "$kforge")/COMMIT" ] && judge="pinned at $(cat "$(dirname "$kforge")/COMMIT")"
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
  git -C "$root" rev-parse --short HEAD 2>/dev/null
  echo "judge: $judge"; } > "$out/machine.txt" 2>&1
# The store of an earlier call: one for every policy, or (older calls) one a policy. Verdicts
# are keyed by every verdict-shaping option, the policy among them, so one store holds both.
if [ -f "$state/state.tgz" ]; then
  tar -xzf "$state/state.tgz" -C "$cache"
elif [ -f "$state/state-${policies[0]}.tgz" ]; then
  tar -xzf "$state/state-${policies[0]}.tgz" -C "$cache"
fi

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
  merge=$(python3 "$root/bench/corpus_agreement.py" merge --corpus "$corpus" --into "$merged" \
    ${n:+--per-source "$n"} --skip "${SKIP:-0}" ${PROBLEMS:+--problems "$PROBLEMS"} "$@") || exit 1
  echo "$merge" >> "$out/machine.txt"
  # A round that adds no kernel (every source's end reached) ends the rounds.
  kernels=${merge%% kernels in *}
  [ "$kernels" != "${last_kernels:-}" ] || break
  last_kernels=$kernels
  problems=()
  for d in "$merged"/problems/*; do problems+=(--problems "$d"); done
  # The first policy pays for the builds, a later one reuses them and pays only for the GPU (15 s
  # against 163 s for 48 kernels on an H100, 2026-12-07): each later policy keeps 15% of what is
  # left, the first takes the rest (equal shares cut the first while the second waited idle).
  for i in "${!policies[@]}"; do
    policy=${policies[$i]}
    run=/tmp/kforge-corpus-run-$policy
    share=$(( (limit - (SECONDS - start)) * (100 - 15 * (${#policies[@]} - 1 - i)) / 100 ))
    [ $share -ge 30 ] || break
    # KernelBench's acceptance: its policy, and the 1e-2 tolerances its harness used.
    # A bench past its --time-limit-s still finishes the samples it started (level-3 builds
    # take minutes): DEADLINE ends it whole, so the store and the reports still reach OUT.
    timeout -k 10 $((deadline - (SECONDS - start))) \
    "$kforge" bench --backend cuda --policy "$policy" --atol 1e-2 --rtol 1e-2 \
      ${FLAGS:---no-baselines --timing-budget-ms 500} --cache "$cache" "${problems[@]}" \
      --samples "$merged/samples" --out "$run/bench-$round" --time-limit-s "$share" \
      --progress-interval-s 60 ${EXTRA:-} > "$run/bench-$round.log" 2>&1
    echo "bench round $round, $policy (${n:-all} a source): exit $? $(grep -E '^(samples|stopped)' \
      "$run/bench-$round.log" | tr '\n' ' ')"
  done
  round=$((round + 1))
  [ -n "$n" ] || break
  n=$((n + ${STEP:-$n}))
done
tar -czf "$out/state.tgz" -C "$cache" $(cd "$cache" && ls kforge.db*)
# The last merge's map names every kernel of every round (a kernel keeps its name).
for policy in "${policies[@]}"; do
  run=/tmp/kforge-corpus-run-$policy
  cp "$merged/map.jsonl" "$run/"
  benches=()
  for d in "$run"/bench-*/; do [ -d "$d" ] && benches+=(--bench "$d"); done
  [ ${#benches[@]} -gt 0 ] || continue
  # The other policy's verdicts on the same kernels: a rule only strict enforces is a named
  # policy difference where kernelbench accepts the kernel. Reviewed rows: the rulings file.
  for other in "${policies[@]}"; do
    [ "$other" != "$policy" ] || continue
    for d in /tmp/kforge-corpus-run-$other/bench-*/; do
      [ -d "$d" ] && benches+=(--other-policy-bench "$d")
    done
  done
  rulings=$root/docs/gpu-runs/corpus-rulings.jsonl
  [ -f "$rulings" ] && benches+=(--rulings "$rulings")
  python3 "$root/bench/corpus_agreement.py" compare --corpus "$corpus" "${benches[@]}" \
    --map "$merged/map.jsonl" --judge "$judge" --out "$run/agreement" > /dev/null &&
    cp "$run/agreement.md" "$out/agreement-$policy.md" && head -16 "$out/agreement-$policy.md"
  tar -czf "$out/corpus-run-$policy.tgz" -C "$run" .
done
