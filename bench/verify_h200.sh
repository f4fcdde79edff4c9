#!/bin/bash
# Verdict checks on a GPU machine, in phases that fit one device call each or together:
#
#   bench/verify_h200.sh OUT KFORGE PHASE...
#     redteam     the CUDA red team under the strict policy, then under kernelbench's
#                 (OUT/redteam-{strict,kernelbench}.{jsonl,log}); builds warmed 12 at a time
#     untrusted   tests/serve/test_untrusted.py on CUDA: a problem sent as text runs in its
#                 confined judge (CUDA IPC between two sandboxed processes) (OUT/untrusted.log)
#     examples    the CUDA examples (tests/gpu/full.sh's first half) (OUT/examples.{jsonl,log})
#     bench30     30 distinct CUDA candidates through kforge bench (bench/h200_session.sh)
# KFORGE is a static build with libkforge_sandbox.so beside it. Env: JOBS (12).
set -uo pipefail
out=$(readlink -f "$1"); kforge=$(readlink -f "$2"); shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mkdir -p "$out"
export KFORGE_PYTHON=${KFORGE_PYTHON:-python3}
export KFORGE_TEST_CACHE=${KFORGE_TEST_CACHE:-/tmp/kforge-verify-cache}
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
  python3 -c 'import torch; print(torch.__version__, torch.version.cuda)'; } >> "$out/machine.txt" 2>&1
for phase in "$@"; do
  t0=$SECONDS
  case "$phase" in
    redteam)
      for policy in strict kernelbench; do
        KFORGE_POLICY=$policy KFORGE_JOBS=${JOBS:-12} bash tests/redteam/run.sh "$kforge" cuda \
          "$out/redteam-$policy.jsonl" > "$out/redteam-$policy.log" 2>&1
        echo "redteam $policy: $(tail -1 "$out/redteam-$policy.log")"
        grep -v '^PASS' "$out/redteam-$policy.log" | head -5
      done ;;
    untrusted)
      KFORGE_TEST_BACKEND=cuda KFORGE_TEST_SERVE_START_S=${SERVE_START_S:-240} \
        python3 tests/serve/test_untrusted.py "$kforge" "$KFORGE_TEST_CACHE" \
        > "$out/untrusted.log" 2>&1
      echo "untrusted: exit $? $(tail -1 "$out/untrusted.log")"
      # A failed test keeps its processes' logs: bring them back.
      kept=$(sed -n 's/^logs kept in //p' "$out/untrusted.log")
      [ -n "$kept" ] && cp -r "$kept" "$out/untrusted-logs" ;;
    examples)
      python3 tests/integration/eval_examples.py --kforge "$kforge" --backend cuda \
        --examples examples/cuda --problems problems --python python3 --timing-budget-ms 1000 \
        --call-timeout-s 8 --warm-jobs ${JOBS:-12} --no-cache-test \
        --results "$out/examples.jsonl" > "$out/examples.log" 2>&1
      echo "examples: $(tail -1 "$out/examples.log")" ;;
    bench30)
      N=30 bash bench/h200_session.sh pipelined "$out/bench30" "$kforge" > /dev/null 2>&1
      echo "bench30: $(grep -E '^samples' "$out/bench30/pipelined.txt" | tail -1)" ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "  ($phase: $((SECONDS - t0)) s)"
done
date -u >> "$out/machine.txt"
