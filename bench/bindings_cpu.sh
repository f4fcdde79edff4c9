#!/bin/bash
# Build CPU-seconds of an RL group's samples on the CPU backend, with and without
# --cached-bindings: N variants of examples/cpu/relu.py (the same extension name and bound
# function, a different body each), each evaluated alone with a fresh build cache per mode,
# one `kforge eval` at a time. Prints, per mode, each candidate's build.cpu_ms, whether its
# compiles read a precompiled header, what the bindings did, and the total with the PCHs made
# in the background (their own pch.json).
#
#   [NAMES=own] bench/bindings_cpu.sh KFORGE OUT [N]     (N = 6)
#
# NAMES=own gives each sample its own extension name and function name (samples of many
# models and runs), the same signature.
#
# Benchmarks, not tests: numbers go to docs/PERFORMANCE.md with the machine and the date.
set -euo pipefail
kforge=$(realpath "$1")
out=$2
n=${3:-6}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(realpath "$out")
bodies=(
  'out[i] = v > 0.0f ? v : 0.0f;'
  'out[i] = std::max(v, 0.0f);'
  'out[i] = v * static_cast<float>(v > 0.0f);'
  'out[i] = (v + std::fabs(v)) * 0.5f;'
  'out[i] = std::fmax(v, 0.0f);'
  'out[i] = v < 0.0f ? 0.0f : v;'
)
for ((i = 0; i < n; i++)); do
  body=${bodies[$((i % ${#bodies[@]}))]}
  python3 - "$root/examples/cpu/relu.py" "$out/cand$i.py" "$body" "$i" <<'EOF'
import os, sys
src, dst, body, i = sys.argv[1:]
text = open(src).read()
old = "out[i] = v > 0.0f ? v : 0.0f;"
assert old in text
text = text.replace(old, body + "  // sample %s" % i)
text = text.replace("#include <torch/extension.h>\n", "#include <torch/extension.h>\n#include <cmath>\n", 1)
if os.environ.get("NAMES") == "own":  # each sample its own extension and function names
    text = text.replace("kforge_cpu_relu", "kforge_cpu_relu_s%s" % i)
    text = text.replace("relu_forward", "relu_forward_s%s" % i)
open(dst, "w").write(text)
EOF
done
for mode in cached plain; do
  cache="$out/cache-$mode"
  rm -rf "$cache"
  flags=()
  [ "$mode" = cached ] && flags=(--cached-bindings)
  : > "$out/$mode.jsonl"
  for ((i = 0; i < n; i++)); do
    "$kforge" eval --backend cpu --json --cache "$cache" --no-baselines --timing-budget-ms 50 \
      --problem "$root/problems/level1/relu.py" --candidate "$out/cand$i.py" "${flags[@]}" \
      >> "$out/$mode.jsonl"
  done
  # The PCHs the builds asked for are made in the background: wait for them to finish.
  for _ in $(seq 120); do
    busy=0
    while read -r l; do
      flock -n "$l" true || busy=1
    done < <(find "$cache" -path '*pch/*.lock')
    [ $busy = 0 ] && break
    sleep 1
  done
done
python3 - "$out" "$n" <<'EOF'
import glob, json, os, sys
out, n = sys.argv[1], int(sys.argv[2])
for mode in ("cached", "plain"):
    text, rows, at = open(os.path.join(out, mode + ".jsonl")).read(), [], 0
    while text[at:].strip():  # kforge eval --json prints each verdict over several lines
        at = len(text) - len(text[at:].lstrip())
        v, at = json.JSONDecoder().raw_decode(text, at)
        rows.append(v)
    total = 0.0
    print("%s (--cached-bindings)" % mode if mode == "cached" else "%s (as load_inline writes it)" % mode)
    for i, v in enumerate(rows):
        b = next(s for s in v["stages"] if s["name"] == "build")
        cpu = b.get("cpu_ms", 0) / 1000
        total += cpu
        print("  cand%d  %-10s build %5.1f CPU-s  with_pch %s  bindings %s" % (
            i, v["status"], cpu, b.get("compiled_with_pch"), b.get("bindings", "-")))
    pchs = 0.0
    for info in glob.glob(os.path.join(out, "cache-" + mode, "**", "pch", "*", "pch.json"),
                          recursive=True):
        j = json.load(open(info))
        pchs += j.get("cpu_s", 0)
        print("  pch %s: %.1f CPU-s (%s)" % (os.path.basename(os.path.dirname(info))[:8],
                                            j.get("cpu_s", 0), j["command"][-3].split("include/")[-1]))
    print("  total %.1f CPU-s builds + %.1f CPU-s PCHs = %.1f" % (total, pchs, total + pchs))
EOF
