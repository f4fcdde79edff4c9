set -u
export KFORGE_PYTHON=python3
T0=$(date +%s)
N=${N:-140} timeout ${LIMIT:-545} bash bench/h200_session.sh pipelined $OUT build/kforge $PWD/helper
python3 - /tmp/tp-pipelined/results-pipelined/verdicts.jsonl > $OUT/verdicts-summary.txt 2>&1 <<'PY'
import json, sys, statistics as S, collections
rows, stat, msgs, pch = [], collections.Counter(), [], collections.Counter()
for l in open(sys.argv[1]):
    v = json.loads(l); v = v.get("verdict", v); st = {s["name"]: s for s in v.get("stages", [])}
    stat[v.get("status")] += 1
    t = st.get("timing", {})
    rows.append((t.get("host_wait_ms"), t.get("host_cpu_ms"), t.get("ms"), (v.get("candidate_ms") or {}).get("median_ms"), v.get("problem_id") or v.get("problem")))
    if v.get("status") != "ok":
        msgs.append((v.get("status"), [d.get("message") for d in v.get("diagnostics", [])][:2]))
print("statuses", dict(stat))
w = [r[0] for r in rows if r[0] is not None]; c = [r[1] for r in rows if r[1] is not None]
if w:
    w.sort(); c.sort()
    print("host_wait_ms over timed batches: n %d median %.2f p90 %.2f max %.2f" % (len(w), S.median(w), w[int(0.9*len(w))-1], w[-1]))
    print("host_cpu_ms  over timed batches: median %.1f p90 %.1f" % (S.median(c), c[int(0.9*len(c))-1]))
for r in sorted(rows, key=lambda r: -(r[0] or 0))[:8]:
    print("top wait", r)
for m in msgs: print("NOT OK", m)
PY
echo "elapsed $(( $(date +%s) - T0 )) s" >> $OUT/verdicts-summary.txt
