#!/bin/bash
# The two open questions of 2026-12-07's device calls, in one call (about 6 minutes):
# 1. The RL loop's except_fallback candidates died of SIGSEGV inside the extension call on an
#    H100 (runtime_error, where H03 was expected): tests/gpu/throw/probe.py asks, outside
#    kforge, whether a failing TORCH_CHECK reaches Python under each wrapper kforge's host uses;
#    then kforge eval on the loop's candidate and on the red team's h03_except_fallback (cheat
#    on 2026-12-06).
# 2. METR's 52_Conv2d_Activation_BatchNorm sample 0 faulted under kforge (cuDNN
#    EXECUTION_FAILED) and did not where its source ran: its forward outside kforge under
#    compute-sanitizer's memcheck (bench/sanitize_sample.py).
#
#   bench/probe_h200.sh OUT KFORGE      (carry .devnet and .corpus)
# Writes OUT/probe.txt, OUT/eval-{loop,loop-kineto,h03}.json, OUT/m52-memcheck.txt.
set -uo pipefail
out=$(readlink -f "$1"); kforge=$(readlink -f "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mkdir -p "$out"
python=${KFORGE_PYTHON:-python3}
# The probe writes the loop's candidate first; the evals below use it.
export KFORGE_PROBE_CANDIDATE=/tmp/kforge-probe/loop_except_fallback.py
PYTHONUNBUFFERED=1 timeout 300 "$python" tests/gpu/throw/probe.py > "$out/probe.txt" 2>&1
echo "probe: exit $?" >> "$out/probe.txt"
eval_one() {
  timeout 150 "$kforge" eval --backend cuda --policy kernelbench --python "$python" --json \
    --problem "$1" --candidate "$2" > "$out/eval-$3.json" 2> "$out/eval-$3.log"
  echo "eval $3: exit $? $(python3 -c 'import json,sys; v=json.load(open(sys.argv[1]));
print(v["status"], [d["code"] for d in v["diagnostics"] if d.get("severity") == "error"])' \
    "$out/eval-$3.json" 2>/dev/null)"
}
eval_one tests/gpu/throw/loop_relu_problem.py "$KFORGE_PROBE_CANDIDATE" loop
# The same under the other profiler the host knows (guard.PROFILER): does the legacy one matter?
KFORGE_PROFILER=kineto eval_one tests/gpu/throw/loop_relu_problem.py "$KFORGE_PROBE_CANDIDATE" loop-kineto
eval_one problems/level1/relu.py tests/redteam/cuda/h03_except_fallback.py h03
m=/tmp/kforge-m52
python3 bench/corpus_agreement.py merge --corpus "${CORPUS:-.corpus}" --into "$m" \
  --problems 52_Conv2d_Activation_BatchNorm metr > /dev/null
sample=$(ls "$m"/samples/metr-level2/52_Conv2d_Activation_BatchNorm/*.py | head -1)
timeout 180 compute-sanitizer --tool memcheck "$python" bench/sanitize_sample.py \
  "$m/problems/metr-level2/52_Conv2d_Activation_BatchNorm.py" "$sample" > "$out/m52-memcheck.txt" 2>&1
echo "m52 memcheck: exit $?; $(grep -c 'Invalid' "$out/m52-memcheck.txt") invalid accesses"
cat "$out/probe.txt"
