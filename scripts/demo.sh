#!/bin/bash
# Set-up and the main job on a built-in example: installs dependencies, builds kforge (the
# binary alone: the demo needs no unit tests), and verifies and times our honest ReLU kernel
# (CUDA where a GPU is visible, else the CPU one).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh --target kforge
backend=cpu
[ -e /dev/nvidia0 ] && backend=cuda
problem=problems/level1/relu.py
candidate=examples/$backend/relu.py
echo "== kforge eval --backend $backend --problem $problem --candidate $candidate"
rc=0
./build/kforge eval --backend "$backend" --problem "$problem" --candidate "$candidate" || rc=$?
cat <<MSG

What you just saw: kforge compiled the ReLU kernel in $candidate with torch's own
load_inline builder, ran it in a sandboxed process against the reference in $problem on
fresh secret inputs (and signed ones), checked the rules against cheating, timed it against
eager PyTorch, and printed one verdict with its reward. A second run compiles nothing.

Try next:
  ./build/kforge eval --problem problems/level1/softmax.py --candidate examples/$backend/broken/wrong.py
      a softmax that is wrong: status incorrect, with where its output differs
  ./build/kforge eval --problem $problem --candidate $candidate --json
      the verdict as JSON (docs/VERDICT.md)
  ./build/kforge doctor
      what this machine has for kforge, and how to fix what is missing
  ./build/kforge bench --problems path/to/KernelBench/level1 --samples path/to/samples
      a model's samples for KernelBench: Pass@k, fast_p (docs/CLI.md)
  scripts/test.sh
      the tests (what CI runs)
MSG
exit "$rc"
