#!/bin/bash
# The Triton acceptance run of issue 18 on one H200 (docs/RESULTS.md, "Triton candidates"):
# 25 honest Triton candidates on our level-1/2 problems, the Triton red team under both
# policies, and a mixed load_inline + Triton bench with metrics per family.
# NOT RUN YET: written on a machine with no GPU and no Triton; the next GPU session runs it.
#
#   bench/triton_h200.sh OUT KFORGE [PHASE...]
#     OUT     where results go (the device's $OUT)
#     KFORGE  the kforge binary to run
#   phases, in this order by default; each fits one 10-minute device call on its own, so they
#   may be run one call each (the cache keeps what an earlier phase built while the machine
#   stays warm; on a fresh machine a phase only takes longer):
#     preflight  the GPU, torch and triton versions and `kforge doctor` into OUT/machine.txt;
#                exit 3 when torch sees no CUDA device or has no triton
#     honest     examples/triton_cuda/ (25 candidates, each header's problem under problems/)
#                through one `kforge bench`: OUT/honest/{results.json,report.md,verdicts.jsonl,
#                bench.log,summary.txt}; expected: all 25 ok, each with its speedup vs eager
#     kb         only with KB=path/to/KernelBench (the folder holding level1/): the 9 candidates
#                with a `# kforge-problem-kb:` header, each on that problem (`kforge eval`): OUT/kb/
#                {*.json,summary.txt}; expected: ok (and see examples/triton_cuda/README.md)
#     redteam    tests/redteam/run.sh KFORGE triton on cuda, strict then kernelbench:
#                OUT/redteam-{strict,kernelbench}.{log,jsonl}; expected: every header met
#     mixed      examples/cuda/ (honest load_inline) and examples/triton_cuda/ as one samples
#                folder, one `kforge bench`: OUT/mixed/results.json with "families"
#                (load_inline, triton) and OUT/mixed/summary.txt; expected: both families
#                present and every sample ok
# Environment: CACHE (kforge's cache, default /tmp/kforge-triton-h200), KFORGE_PYTHON
# (python3: torch with CUDA, and triton), KB, TRIALS (5), TIMING_BUDGET_MS (1000), JOBS
# (red-team candidates at a time, default 8: tests/redteam/run.sh's KFORGE_JOBS).
# BACKEND=cpu (with KFORGE_PYTHON=tests/triton/python.sh, the CPU stand-in for Triton) runs the
# honest and mixed phases' plumbing on a machine without a GPU: slowly, and with
# examples/cpu as the load_inline half; that is how this script was tried before its GPU run.
# EXAMPLES (globs, default examples/triton_cuda/*/*.py) narrows the Triton candidates,
# LOAD_INLINE (globs, default examples/$BACKEND/*.py, the ok ones) the mixed bench's others.
# Exit: 0 every phase run met its expectation; 1 one did not (summary.txt / the logs say
# which); 2 a usage error; 3 no CUDA device or no triton.
set -uo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,34p' "$0" >&2
  exit 2
fi
mkdir -p "$1" || exit 2
out=$(readlink -f "$1"); kforge=$(readlink -f "$2"); shift 2
phases=("$@")
[ ${#phases[@]} -eq 0 ] && phases=(preflight honest kb redteam mixed)
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
backend=${BACKEND:-cuda}
python=${KFORGE_PYTHON:-python3}
export KFORGE_PYTHON=$python
cache=${CACHE:-/tmp/kforge-triton-h200}
trials=${TRIALS:-5}
# shellcheck disable=SC2206  # a glob, expanded here on purpose
triton_examples=(${EXAMPLES:-examples/triton_cuda/*/*.py})
budget=${TIMING_BUDGET_MS:-1000}
mkdir -p "$out" "$cache"
status=0
fail() { echo "triton_h200: $*" | tee -a "$out/summary.txt" >&2; status=1; }

if [ ! -x "$kforge" ]; then
  echo "triton_h200: $kforge is not an executable kforge" >&2
  exit 2
fi

# <samples>/<level>/<problem>/sample_<i>.py for every candidate file given, from its
# `# kforge-problem: levelN/name.py` header (kforge bench's samples layout).
make_samples() {  # dest, then candidate files
  local dest=$1; shift
  "$python" - "$dest" "$@" <<'EOF'
import os, re, shutil, sys
dest, files = sys.argv[1], sys.argv[2:]
count = {}
for f in files:
    with open(f) as fh:
        m = re.search(r"^# kforge-problem: *(\S+)\.py\s*$", fh.read(2000), re.M)
    if not m:
        continue
    level, problem = m.group(1).split("/")
    folder = os.path.join(dest, level, problem)
    os.makedirs(folder, exist_ok=True)
    i = count.get(folder, 0)
    count[folder] = i + 1
    shutil.copy(f, os.path.join(folder, "sample_%d.py" % i))
    print("%s/%s/sample_%d.py <- %s" % (level, problem, i, f))
EOF
}

# One line per verdict of a bench (status, speedup, Triton build facts) and the count of ok.
summarize() {  # verdicts.jsonl, summary.txt, expected number of samples
  "$python" - "$@" <<'EOF'
import json, sys
path, summary, expected = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = [json.loads(l) for l in open(path) if l.strip()]
ok = 0
with open(summary, "a") as out:
    for r in rows:
        v = r["verdict"]
        ok += v["status"] == "ok"
        build = next((s for s in v["stages"] if s["name"] == "build"), {})
        errors = [d["code"] for d in v["diagnostics"] if d["severity"] == "error"]
        out.write("%-8s %-28s %-30s %-10s x%-7s build %s ms%s %s\n" % (
            v["candidate"]["format"], r["level"] + "/" + r["problem"],
            r["sample"].split("/samples/")[-1], v["status"],
            "%.2f" % v["speedup"]["vs_eager"] if v["speedup"].get("vs_eager") else "n/a",
            "%.0f" % build.get("ms", 0),
            " (compiled %s, launches %s)" % (build.get("compiled"), build.get("launches"))
            if build.get("in_process") else "", ",".join(errors)))
    out.write("%d of %d ok (%d expected)\n" % (ok, len(rows), expected))
sys.exit(0 if ok == len(rows) == expected else 1)
EOF
}

bench() {  # name, samples folder, expected samples
  local name=$1 samples=$2 expected=$3
  mkdir -p "$out/$name"
  "$kforge" bench --backend "$backend" --python "$python" --cache "$cache" \
    --problems problems/level1 --problems problems/level2 --problems problems/level3 \
    --samples "$samples" \
    --out "$out/$name" --trials "$trials" --timing-budget-ms "$budget" --call-timeout-s 60 \
    > "$out/$name/bench.log" 2>&1 || fail "$name: kforge bench exited $?"
  summarize "$out/$name/verdicts.jsonl" "$out/$name/summary.txt" "$expected" ||
    fail "$name: not every sample is ok (see $out/$name/summary.txt)"
  cat "$out/$name/summary.txt" >> "$out/summary.txt"
}

for phase in "${phases[@]}"; do
  echo "== $phase $(date -u +%H:%M:%S)" >> "$out/summary.txt"
  case $phase in
    preflight)
      { nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc
        date -u; git -C "$root" rev-parse --short HEAD
        "$python" -c 'import torch, triton; print("torch", torch.__version__, "cuda",
torch.version.cuda, "triton", triton.__version__)'
        "$kforge" doctor --backend cuda --python "$python"; } >> "$out/machine.txt" 2>&1
      if ! timeout 120 "$python" -c 'import sys, torch, triton
sys.exit(0 if torch.cuda.is_available() else 1)' >> "$out/machine.txt" 2>&1; then
        echo "triton_h200: no CUDA device or no triton in $python (see $out/machine.txt)" |
          tee -a "$out/summary.txt" >&2
        exit 3
      fi
      ;;
    honest)
      rm -rf "$out/honest" /tmp/triton-h200-honest
      make_samples /tmp/triton-h200-honest/samples "${triton_examples[@]}" \
        > "$out/honest.samples.txt"
      bench honest /tmp/triton-h200-honest/samples ${#triton_examples[@]}
      ;;
    kb)
      if [ -z "${KB:-}" ]; then
        echo "kb: skipped (KB is not set)" >> "$out/summary.txt"
        continue
      fi
      mkdir -p "$out/kb"
      for f in "${triton_examples[@]}"; do
        p=$(sed -n 's/^# kforge-problem-kb: *\(\S*\)\s*$/\1/p' "$f" | head -1)
        [ -n "$p" ] || continue
        if [ ! -f "$KB/$p" ]; then
          echo "kb: $KB/$p not found (for $f)" >> "$out/kb/summary.txt"
          continue
        fi
        name=$(basename "$(dirname "$f")")_$(basename "$f" .py)
        "$kforge" eval --json --backend "$backend" --python "$python" --cache "$cache" \
          --problem "$KB/$p" --candidate "$f" --trials "$trials" --timing-budget-ms "$budget" \
          > "$out/kb/$name.json" 2> "$out/kb/$name.log"
        st=$("$python" -c 'import json,sys; v=json.load(open(sys.argv[1])); print(v["status"],
v["speedup"].get("vs_eager"))' "$out/kb/$name.json" 2>/dev/null)
        echo "$f on $p: ${st:-no verdict}" >> "$out/kb/summary.txt"
        case "$st" in ok*) ;; *) fail "kb: $f on $p ended ${st:-without a verdict}" ;; esac
      done
      cat "$out/kb/summary.txt" >> "$out/summary.txt" 2>/dev/null
      ;;
    redteam)
      for policy in strict kernelbench; do
        KFORGE_TRITON_BACKEND=$backend KFORGE_POLICY=$policy KFORGE_JOBS=${JOBS:-8} \
          KFORGE_TEST_CACHE="$cache/redteam-$policy" \
          bash tests/redteam/run.sh "$kforge" triton "$out/redteam-$policy.jsonl" \
          > "$out/redteam-$policy.log" 2>&1 || fail "redteam ($policy): a header was not met"
        tail -1 "$out/redteam-$policy.log" | sed "s/^/redteam $policy: /" >> "$out/summary.txt"
      done
      ;;
    mixed)
      rm -rf "$out/mixed" /tmp/triton-h200-mixed
      # The honest load_inline candidates: the ok ones of examples/cuda (examples/cpu on cpu).
      # shellcheck disable=SC2086  # globs, expanded here on purpose
      cuda_ok=$(grep -l '^# kforge-expect: ok' ${LOAD_INLINE:-examples/$backend/*.py})
      # shellcheck disable=SC2086  # one file name per word
      make_samples /tmp/triton-h200-mixed/samples $cuda_ok "${triton_examples[@]}" \
        > "$out/mixed.samples.txt"
      bench mixed /tmp/triton-h200-mixed/samples $(( $(echo "$cuda_ok" | wc -w) + ${#triton_examples[@]} ))
      "$python" - "$out/mixed/results.json" >> "$out/summary.txt" <<'EOF' || fail "mixed: no per-family metrics"
import json, sys
r = json.load(open(sys.argv[1]))
fam = r.get("families", {})
for name, a in sorted(fam.items()):
    print("mixed %-11s samples %d correct %d pass@1 %.3f geomean speedup vs eager %s" % (
        name, a["samples"], a["correct"], a["pass_at_1"], a["geomean_speedup_vs_eager"]))
sys.exit(0 if sorted(fam) == ["load_inline", "triton"] else 1)
EOF
      ;;
    *)
      echo "triton_h200: unknown phase $phase" >&2
      exit 2
      ;;
  esac
done
date -u >> "$out/machine.txt"
echo "triton_h200: exit $status" >> "$out/summary.txt"
exit $status
