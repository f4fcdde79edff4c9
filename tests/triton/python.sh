#!/bin/sh
# Debian's Python (CPU torch) with the CPU stand-in for Triton on its path: what the Triton
# tests pass to kforge as --python. kforge sets PYTHONPATH to its runner for every process it
# starts; this keeps that and adds tests/triton/fake_triton, so `import triton` finds the
# stand-in in the candidate host and nowhere else.
here=$(cd "$(dirname "$0")" && pwd)
PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$here/fake_triton" exec /usr/bin/python3 "$@"
