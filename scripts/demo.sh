#!/bin/bash
# Set-up and the main job on a built-in example: installs dependencies, builds kforge, and
# verifies and times our honest ReLU kernel (CUDA where a GPU is visible, else the CPU one).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
backend=cpu
[ -e /dev/nvidia0 ] && backend=cuda
./build/kforge eval --backend "$backend" --problem problems/level1/relu.py \
  --candidate "examples/$backend/relu.py"
