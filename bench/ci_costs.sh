#!/bin/bash
# Where CI's CPU goes, suite by suite (issue 29 item 5; docs/ARCHITECTURE.md, "CI budget"): runs
# every ctest suite but the unit tests alone, one after another, in the order CI starts them
# (longest COST first), over one fresh shared build cache as CI has, and prints per suite its
# wall seconds and CPU seconds (user + system of the suite and every child it waited for), and
# how many compiles it ran into the cache (new artifacts). A suite's CPU is its marginal cost in
# this order: what an earlier suite compiled, it finds in the cache.
#
#   bench/ci_costs.sh [BUILD]     (default build/, with kforge, kforge_sandbox and
#                                  kforge_web_fill built; writes BUILD/ci-costs.tsv)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(readlink -f "${1:-$root/build}")
cache=$build/test-build-cache
rm -rf "$cache"
out=$build/ci-costs.tsv
printf 'suite\texit\twall_s\tcpu_s\tuser_s\tsys_s\tnew_artifacts\n' > "$out"
order="integration redteam_kernelbench bench contract redteam serve_groups loop
       redteam_triton_kernelbench serve_redis_faults redteam_triton triton memory policy
       light_headers timing serve_http serve_redis synth lint environment web_browser generate
       runner serve_untrusted serve_front check bench_scripts rl data"
for t in $order; do
  before=$(ls "$cache/artifacts" 2>/dev/null | wc -l)
  /usr/bin/time -f '%e %U %S' -o /tmp/ci-costs.time \
    ctest --test-dir "$build" -R "^${t}\$" --output-on-failure > "/tmp/ci-costs-$t.log" 2>&1
  rc=$?
  read -r wall user sys < /tmp/ci-costs.time
  after=$(ls "$cache/artifacts" 2>/dev/null | wc -l)
  printf '%s\t%s\t%s\t%.0f\t%s\t%s\t%s\n' "$t" "$rc" "$wall" "$(echo "$user + $sys" | bc)" \
    "$user" "$sys" "$((after - before))" | tee -a "$out"
done
awk -F'\t' 'NR > 1 { w += $3; c += $4 } END { printf "all: wall %.0f s, CPU %.0f s\n", w, c }' "$out"
