#!/bin/bash
# Split builds (--split-build, runner/kforge_runner/split_build.py) on the GPU machine: what
# must hold before they can be on by default (issue 30 items 2-3). Each phase fits one 10-minute
# device call; run them in this order:
#
#   bench/split_h200.sh OUT KFORGE check     # bench/split_check.py with the machine's torch:
#                                            # every CUDA example and red-team file (and the
#                                            # files listed in $CORPUS, one path a line): plan,
#                                            # both builds, stubs linked, CPU-s, device code
#                                            # compared per function -> OUT/check.{json,txt}
#   bench/split_h200.sh OUT KFORGE redteam   # the CUDA red team with --split-build under both
#                                            # policies (must meet every header, as without)
#                                            # -> OUT/rt-{strict,kb}.{jsonl,txt}
#   bench/split_h200.sh OUT KFORGE bench     # 100 candidates pipelined with --split-build
#                                            # (bench/h200_session.sh) -> OUT/bench/
#
# Env: JOBS (15), CORPUS (a file listing more candidate .py files for `check`), FLAGS (the
# evaluation flags of `redteam` and `bench`; default --split-build, e.g. "--split-build
# --cached-bindings"), CHECK_LIMIT_S (`check` starts no unit after this many seconds), BUILTIN=0 (`check` leaves out
# the examples and the red team: $CORPUS alone).
set -uo pipefail
out=$(readlink -f "$1")
kforge=$(readlink -f "$2")
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mkdir -p "$out"
jobs=${JOBS:-15}
flags=${FLAGS:---split-build}
{ nvidia-smi -L; nproc; date -u; git log --oneline -1 2>/dev/null; } >> "$out/machine.txt" 2>&1
for phase in "$@"; do
  echo "== $phase $(date -u +%H:%M:%S)" >> "$out/summary.txt"
  case "$phase" in
    check)
      more=()
      [ "${BUILTIN:-1}" = 0 ] || more=(examples/cuda/*.py tests/redteam/cuda/*.py)
      [ -n "${CORPUS:-}" ] && mapfile -t -O ${#more[@]} more < "$CORPUS"
      python3 bench/split_check.py --kforge "$kforge" --jobs "$jobs" --object-cpu \
        ${CHECK_LIMIT_S:+--time-limit-s "$CHECK_LIMIT_S"} \
        --json "$out/check.json" "${more[@]}" \
        > "$out/check.txt" 2>&1
      echo "check: exit $?" >> "$out/summary.txt"
      grep -E "^(time limit|units|split built|CPU-s)" "$out/check.txt" >> "$out/summary.txt"
      ;;
    redteam)
      for policy in strict kernelbench; do
        t0=$(date +%s)
        KFORGE_EVAL_FLAGS="$flags" KFORGE_POLICY=$policy KFORGE_JOBS=$jobs \
          KFORGE_TEST_CACHE=/tmp/split-h200-rt tests/redteam/run.sh "$kforge" cuda \
          "$out/rt-$policy.jsonl" > "$out/rt-$policy.txt" 2>&1
        echo "redteam $policy: exit $? in $(( $(date +%s) - t0 )) s; $(tail -n 1 "$out/rt-$policy.txt")" \
          >> "$out/summary.txt"
      done
      grep -o '"split_build": "[a-z_]*"' "$out"/rt-*.jsonl | sort | uniq -c >> "$out/summary.txt"
      ;;
    bench)
      BENCH_FLAGS="$flags" N=${N:-100} bash bench/h200_session.sh pipelined "$out/bench" "$kforge" \
        > "$out/bench.log" 2>&1
      echo "bench: exit $?" >> "$out/summary.txt"
      grep -E "evaluated|split builds|build CPU|limit" "$out/bench/pipelined.txt" >> "$out/summary.txt"
      ;;
    *) echo "unknown phase $phase (check, redteam, bench)" >&2; exit 2 ;;
  esac
done
cat "$out/summary.txt"
