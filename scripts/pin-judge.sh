#!/bin/bash
# A judge pinned to one commit, for a run that spans device calls and sessions (the public
# corpus, bench/corpus_h200.sh): a verdict's store key holds a digest of the runner's code
# (eval::RunnerDigest), so a store made by one commit's runner answers nothing under the next
# one's, and a run that the code moves under starts again from zero each session. A pinned
# judge keeps the key: its verdicts resume until the run ends, and a fix that changes verdicts
# is re-run on purpose, by pinning again.
#
#   scripts/pin-judge.sh BUNDLE DEST
#     BUNDLE  a kforge built from this checkout's HEAD for the GPU machine
#             (scripts/gpu-bundle.sh --redis: kforge, libkforge_sandbox.so, lib/, redis-server)
#     DEST    the pinned judge: BUNDLE's files, runner/ as committed at HEAD, and COMMIT (HEAD's
#             hash and date). kforge finds DEST/runner beside itself (eval::FindRunnerDir).
#
# Refuses a checkout whose runner/ or src/ differ from HEAD: the pin would name a commit that
# is not what it holds. Carry DEST to the device and run DEST/kforge.
set -euo pipefail
bundle=$(readlink -f "$1"); dest=$2
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -x "$bundle/kforge" ] || { echo "pin-judge: $bundle/kforge is not an executable kforge" >&2; exit 2; }
if ! git diff --quiet HEAD -- runner src CMakeLists.txt; then
  echo "pin-judge: runner/, src/ or CMakeLists.txt differ from HEAD; commit first" >&2
  exit 2
fi
rm -rf "$dest"
mkdir -p "$dest"
cp -a "$bundle"/. "$dest"/
git archive HEAD runner | tar -x -C "$dest"
git log -1 --format='%H %cI' > "$dest/COMMIT"
echo "pin-judge: $dest holds the judge of $(cut -c1-12 "$dest/COMMIT") ($(du -sh "$dest" | cut -f1))"
