#!/bin/bash
# The corpus agreement run of issue 14 (docs/RESULTS.md, "Public model-written kernels"):
# `kforge bench` under KernelBench's policy and tolerance on each public source of
# model-written kernels, against the problem version its kernels were written for
# (docs/CORPORA.md), then bench/corpus_agreement.py against the verdicts each source recorded.
# Resumable across device calls and sessions: the store travels in STATE.
#
#   bench/corpus_h200.sh OUT STATE [SOURCE...]
#     OUT     the device's $OUT (few files come back): OUT/corpus-run.tgz (per source
#             <source>/{results.json,report.md,verdicts.jsonl} and its log, agreement.jsonl),
#             OUT/agreement.md, OUT/machine.txt, and OUT/state.tgz (the store) for the next
#             call: copy it into STATE before that call
#     STATE   a carried folder with state.tgz from an earlier call, or empty
#     SOURCE  cuda-l1 kb-leaderboard kb-fork-runs metr (default: all four)
# Environment: KFORGE (default .devbin/kforge), CORPUS (.corpus), LIMIT (seconds this call may
# spend on benches, default 480), SUBSET (N: only N samples per source, the same N every call,
# spread over its levels by a hash of their paths; default all) and EXTRA (more bench flags,
# e.g. "--trials 3").
set -uo pipefail
out=$(readlink -f "$1"); state=$(readlink -f "$2"); shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
kforge=$(readlink -f "${KFORGE:-$root/.devbin/kforge}")
corpus=$(readlink -f "${CORPUS:-$root/.corpus}")
limit=${LIMIT:-480}
sources=("$@")
[ ${#sources[@]} -gt 0 ] || sources=(cuda-l1 kb-leaderboard kb-fork-runs metr)
cache=/tmp/kforge-corpus-cache
run=/tmp/kforge-corpus-run
mkdir -p "$cache" "$out" "$run"
export KFORGE_PYTHON=${KFORGE_PYTHON:-python3}
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; date -u
  git -C "$root" rev-parse --short HEAD 2>/dev/null; } > "$out/machine.txt" 2>&1
[ -f "$state/state.tgz" ] && tar -xzf "$state/state.tgz" -C "$cache"
start=$SECONDS
version() {  # the problem version each source's kernels were written for (docs/CORPORA.md)
  case "$1" in
    cuda-l1|kb-leaderboard) echo KernelBench-6500bbc ;;
    kb-fork-runs) echo KernelBench-129232e ;;
    metr) echo KernelBench-METR ;;
  esac
}
# SUBSET: a samples tree of N per source (copies, so the paths below samples/<source>/ stay).
samples_root="$corpus/samples"
if [ -n "${SUBSET:-}" ]; then
  samples_root=/tmp/kforge-corpus-subset/samples
  python3 - "$corpus/samples" "$samples_root" "$SUBSET" "${sources[@]}" <<'PY'
import hashlib, json, os, shutil, sys
src_root, dst_root, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for source in sys.argv[4:]:
    with open(os.path.join(src_root, source, "manifest.jsonl")) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    rows.sort(key=lambda r: hashlib.sha256(r["path"].encode()).hexdigest())
    for r in rows[:n]:
        dst = os.path.join(dst_root, source, r["path"])
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(os.path.join(src_root, source, r["path"]), dst)
PY
fi
todo=${#sources[@]}
for src in "${sources[@]}"; do
  # Each source its share of what is left, so one slow source cannot starve the others.
  left=$(( (limit - (SECONDS - start)) / todo )); todo=$((todo - 1))
  if [ $left -lt 60 ]; then echo "$src: no time left (run again)"; continue; fi
  v=$(version "$src")
  problems=()
  for l in level1 level2 level3; do
    [ -d "$corpus/$v/$l" ] && problems+=(--problems "$corpus/$v/$l")
  done
  # KernelBench's acceptance: its policy, and the 1e-2 tolerances its harness used.
  "$kforge" bench --backend cuda --policy kernelbench --atol 1e-2 --rtol 1e-2 \
    --cache "$cache" "${problems[@]}" --samples "$samples_root/$src" --out "$run/$src" \
    --time-limit-s "$left" --progress-interval-s 60 ${EXTRA:-} > "$run/$src.log" 2>&1
  echo "$src: exit $? $(grep -E '^(samples|stopped)' "$run/$src.log" | tr '\n' ' ')"
done
tar -czf "$out/state.tgz" -C "$cache" kforge.db
python3 "$root/bench/corpus_agreement.py" compare --corpus "$corpus" --bench "$run" \
  --out "$run/agreement" > /dev/null && cp "$run/agreement.md" "$out/" && head -12 "$out/agreement.md"
tar -czf "$out/corpus-run.tgz" -C "$run" .
