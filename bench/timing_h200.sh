#!/bin/bash
# Speed you can trust, measured on a GPU machine (issue 27), in phases that fit one device call:
#
#   bench/timing_h200.sh OUT KFORGE PHASE...
#     probe   bench/timing_probe.py: KernelBench's cuda_event timing against kforge's helper (the
#             older one from OLD_NATIVE if given, and the current one), candidate and eager, idle
#             and with every CPU busy, on ReLU at KernelBench v0's size (16 x 16384, launch-bound)
#             and today's (4096 x 393216, 3.3 ms) (OUT/probe.jsonl, OUT/probe-*.txt)
#     ncu     Nsight Compute's gpu__time_duration of the same calls, clocks not locked (OUT/ncu-*.csv)
#     eval    `kforge eval` of the same candidate, REPS times idle and REPS times with every CPU
#             busy, the stored baselines dropped before each run so eager is timed again every
#             time (OUT/eval-*.jsonl, a line of numbers per run in OUT/eval.txt)
#     redteam the CUDA red team under POLICY (strict) with the new timing (OUT/redteam.*)
#     bench2  `kforge bench` twice over the same 30 honest samples (bench/make_candidates.py),
#             the second evaluating all again, baselines too: per-sample ratios of the speedup
#             and of the candidate's median (OUT/bench2.txt); SECOND_FLAGS are the second
#             run's extra flags (e.g. --prestart-host: does a spare starting CUDA beside a
#             timed run move its times?)
# KB names a KernelBench checkout (default .corpus/KernelBench); KFORGE is a static build with
# libkforge_sandbox.so beside it.
set -uo pipefail
out=$(readlink -f "$1"); kforge=$(readlink -f "$2"); shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mkdir -p "$out"
KB=$(readlink -f "${KB:-.corpus/KernelBench}")
REPS=${REPS:-5}
export KFORGE_PYTHON=${KFORGE_PYTHON:-python3}
export PYTHONUNBUFFERED=1
relu=$KB/KernelBench/level1/19_ReLU.py
tmp=/tmp/kforge-timing; mkdir -p $tmp
sed -e 's/^batch_size = .*/batch_size = 16/' -e 's/^dim = .*/dim = 16384/' "$relu" > $tmp/relu_v0.py
{ nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
  nproc; date -u; git log -1 --format=%h; python3 -c 'import torch; print(torch.__version__)'; } \
  >> "$out/machine.txt" 2>&1
old=()
[ -n "${OLD_NATIVE:-}" ] && old=(--native-old "$OLD_NATIVE")
loadpids=()
load_on() { for _ in $(seq "$(nproc)"); do (while :; do :; done) & loadpids+=($!); done; }
load_off() { kill "${loadpids[@]}" 2>/dev/null; wait "${loadpids[@]}" 2>/dev/null; loadpids=(); }
trap load_off EXIT
for phase in "$@"; do
  t0=$SECONDS
  case "$phase" in
    probe)
      python3 bench/timing_probe.py --problem $tmp/relu_v0.py --candidate examples/cuda/relu.py \
        --tag relu_v0 --kb-timing "$KB/src/kernelbench/timing.py" "${old[@]}" --out "$out" \
        --load --reps "${PROBE_REPS:-6}" > "$out/probe-relu_v0.txt" 2>&1
      tail -30 "$out/probe-relu_v0.txt"
      python3 bench/timing_probe.py --problem "$relu" --candidate examples/cuda/relu.py \
        --tag relu_today --kb-timing "$KB/src/kernelbench/timing.py" "${old[@]}" --out "$out" \
        --reps 2 --calls 20 > "$out/probe-relu_today.txt" 2>&1
      tail -16 "$out/probe-relu_today.txt" ;;
    ncu)
      for size in v0 today; do
        p=$relu; [ $size = v0 ] && p=$tmp/relu_v0.py
        ncu --clock-control none --metrics gpu__time_duration.sum --csv python3 bench/timing_probe.py --problem "$p" \
          --candidate examples/cuda/relu.py --ncu-run > "$out/ncu-$size.csv" 2> "$out/ncu-$size.err"
        python3 - "$out/ncu-$size.csv" <<'EOF'
import csv, statistics, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]; k = head.index("Kernel Name"); v = head.index("Metric Value"); u = head.index("Metric Unit")
by = {}
for r in rows[1:]:
    scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1, "us": 1, "msecond": 1e3, "ms": 1e3}[r[u]]
    by.setdefault(r[k][:60], []).append(float(r[v].replace(",", "")) * scale)
for name, us in by.items():
    print("ncu %-60s n=%3d median %.2f us" % (name, len(us), statistics.median(us)))
EOF
      done ;;
    eval)
      for mode in idle loaded; do
        [ $mode = loaded ] && load_on
        for i in $(seq "$REPS"); do
          for prob in relu_v0 relu_today; do
            p=$relu; [ $prob = relu_v0 ] && p=$tmp/relu_v0.py
            python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('delete from baselines'); c.commit()" \
              $tmp/cache/kforge.db 2>/dev/null
            KFORGE_CACHE=$tmp/cache timeout 300 "$kforge" eval --backend cuda --python python3 \
              --problem "$p" --candidate examples/cuda/relu.py --seed $i --json \
              ${KFORGE_EVAL_FLAGS:-} >> "$out/eval-$prob-$mode.jsonl" 2>> "$out/eval.err"
            python3 bench/timing_h200_row.py "$out/eval-$prob-$mode.jsonl" "$prob" "$mode" | tee -a "$out/eval.txt"
          done
        done
        [ $mode = loaded ] && load_off
      done ;;
    redteam)
      KFORGE_POLICY=${POLICY:-strict} KFORGE_JOBS=${JOBS:-12} bash tests/redteam/run.sh "$kforge" cuda \
        "$out/redteam.jsonl" > "$out/redteam.log" 2>&1
      echo "redteam ${POLICY:-strict}: $(tail -1 "$out/redteam.log")"
      grep -v '^PASS' "$out/redteam.log" | head -8 ;;
    bench2)
      python3 bench/make_candidates.py --backend cuda --candidates ${N:-30} --problem-copies 1 \
        --out $tmp/wl > /dev/null 2>&1 || echo "make_candidates failed"
      pargs=(); for d in $tmp/wl/problems/*/; do pargs+=(--problems "${d%/}"); done
      for run in 1 2; do
        # One artifact cache (no second compile); the second run evaluates every sample again
        # and times its baselines again.
        python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('delete from baselines'); c.commit()" \
          $tmp/bench-cache/kforge.db 2>/dev/null
        KFORGE_CACHE=$tmp/bench-cache timeout ${BENCH_S:-280} "$kforge" bench --backend cuda --python python3 \
          "${pargs[@]}" --samples $tmp/wl/samples --out $tmp/bench-out-$run \
          $([ $run = 2 ] && echo --no-reuse ${SECOND_FLAGS:-}) > "$out/bench2-$run.log" 2>&1
        cp $tmp/bench-out-$run/results.json "$out/bench2-$run-results.json" 2>/dev/null
      done
      python3 - $tmp/bench-out-1/verdicts.jsonl $tmp/bench-out-2/verdicts.jsonl <<'EOF' | tee "$out/bench2.txt"
import json, statistics, sys
def load(p, what):
    out = {}
    for line in open(p):
        r = json.loads(line)
        v = r.get("verdict", r)
        s = what(v)
        if v.get("status") == "ok" and s:
            out[r.get("sample") or v["candidate"]["hash"]] = s
    return out
for name, what in (("speedup vs eager", lambda v: (v.get("speedup") or {}).get("vs_eager")),
                   ("candidate median ms", lambda v: (v.get("timing") or {}).get("candidate_ms", {}).get("median"))):
    a, b = load(sys.argv[1], what), load(sys.argv[2], what)
    r = sorted(b[k] / a[k] for k in a if k in b)
    if not r:
        print(name, ": no sample ok in both runs")
        continue
    q = lambda f: r[min(len(r) - 1, int(f * len(r)))]
    print(name, "samples", len(r), "ratio run 2 / run 1 p10 %.3f median %.3f p90 %.3f min %.3f max %.3f"
          % (q(.1), q(.5), q(.9), r[0], r[-1]))
EOF
      ;;
    *) echo "unknown phase $phase" ;;
  esac
  echo "  ($phase: $((SECONDS - t0)) s)"
done
