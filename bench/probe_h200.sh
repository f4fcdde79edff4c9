#!/bin/bash
# The crash of a failing TORCH_CHECK on the device (2026-12-07: a check whose message streams a
# value killed the process; a literal message raised), in one call of about 3 minutes. Ran on
# 2026-12-07 (night): g++ and nvcc builds alike crash wherever a number is formatted through an
# ostream (c10::str, std::ostringstream), because the machine's CXX wrapper links a static
# libstdc++ into each extension; built with /usr/bin/g++ the same code runs.
# 1. tests/gpu/throw/messages.py: which other forms do the same (a std::string message,
#    c10::str alone, std::runtime_error, the same code built by g++).
# 2. kforge eval of examples/cuda/broken/failing_check.py (a ReLU whose 1-D check fails on the
#    problem's 2-D inputs, streaming the dimension): runtime_error, code crash, and a hint
#    naming that check (src/eval/crash_hint.cc, HintStreamedCheck).
# 3. kforge eval of the RL loop's except_fallback candidate as the library writes it now
#    (literal messages): cheat H03.
#
#   bench/probe_h200.sh OUT KFORGE      (carry the bundle KFORGE is in, e.g. .devnet)
# Writes OUT/messages.txt, OUT/eval-{streamed,loop}.json and their logs.
set -uo pipefail
out=$(readlink -f "$1"); kforge=$(readlink -f "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mkdir -p "$out"
python=${KFORGE_PYTHON:-python3}
PYTHONUNBUFFERED=1 timeout 300 "$python" tests/gpu/throw/messages.py > "$out/messages.txt" 2>&1
echo "messages: exit $?" >> "$out/messages.txt"
eval_one() {
  timeout 150 "$kforge" eval --backend cuda --policy kernelbench --python "$python" --json \
    --problem "$1" --candidate "$2" > "$out/eval-$3.json" 2> "$out/eval-$3.log"
  echo "eval $3: exit $? $(python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))
print(v["status"], [(d["code"], d.get("hint", "")[-160:]) for d in v["diagnostics"]
                    if d.get("severity") == "error"])' "$out/eval-$3.json" 2>/dev/null)"
}
eval_one problems/level1/relu.py examples/cuda/broken/failing_check.py streamed
candidate=/tmp/kforge-probe/loop_except_fallback.py
"$python" tests/gpu/throw/probe.py --write-only "$candidate"
eval_one tests/gpu/throw/loop_relu_problem.py "$candidate" loop
cat "$out/messages.txt"
