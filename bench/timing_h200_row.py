#!/usr/bin/env python3
"""One line of numbers for the last verdict in a file of `kforge eval --json` output (verdicts
printed one after another, each over several lines): bench/timing_h200.sh's eval phase."""
import json
import sys


def last_verdict(path):
    text, dec, i, v = open(path).read(), json.JSONDecoder(), 0, None
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return v
        v, i = dec.raw_decode(text, i)


v = last_verdict(sys.argv[1]) or {}
t = v.get("timing") or {}
c = t.get("candidate_ms") or {}
st = {s["name"]: s.get("detail", s) for s in v.get("stages", [])}
tim = st.get("timing", {})
sp = v.get("speedup") or {}
print(sys.argv[2], sys.argv[3], v.get("status"), "cand_us %.2f" % (1000 * (c.get("median") or 0)),
      "eager_us %.2f" % (1000 * (t.get("eager_ms") or 0)),
      "compile_us %.2f" % (1000 * (t.get("compile_ms") or 0)),
      "speedup %s ci %s" % (sp.get("vs_eager"), sp.get("vs_eager_ci")),
      "n %s spread %s delay_us %s hidden %s host_ms %s" % (
          c.get("n"), tim.get("spread"), tim.get("delay_us"), tim.get("hidden_fraction"),
          tim.get("host_ms")),
      "lane_cpus %s" % json.dumps(tim.get("lane_cpus")),
      "gpu_end %s" % json.dumps((tim.get("gpu") or {}).get("end", {})),
      "diag %s" % [d.get("code") for d in v.get("diagnostics", [])][:3])
