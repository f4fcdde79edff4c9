#!/bin/bash
# bench/redteam_serve_h200.sh: one device call (docs/gpu-runs/README.md, "Owed to the H200",
# items 1 and 1a together): the CUDA red team under both policies with the runner protocol checked on both sides
# (issue 29), kforge with HTTP on the GPU machine (issue 31 item 1), then the Triton red team.
set -u
export PYTHONUNBUFFERED=1
out=${1:?usage: bench/redteam_serve_h200.sh OUT  (carry .devbin and .devnet; CALL_S: seconds the call may take, 575)}
o=$out/r; mkdir -p "$o"; t0=$SECONDS
git rev-parse --short HEAD > "$o/commit.txt" 2>&1
KFORGE_PROTOCOL_CHECK=1 JOBS=15 timeout 390 bash bench/verify_h200.sh "$o" .devbin/kforge redteam
echo "redteam done ($((SECONDS-t0)) s)"
grep -h "internal\|protocol" "$o"/redteam-*.log | head -5
timeout 40 .devnet/kforge doctor --backend cuda > "$o/doctor.txt" 2>&1; echo "doctor rc=$? ($((SECONDS-t0)) s)"; tail -4 "$o/doctor.txt"
KFORGE_TEST_BACKEND=cuda KFORGE_PROTOCOL_CHECK=1 timeout 100 python3 tests/serve/test_http.py .devnet/kforge /tmp/sc > "$o/http.log" 2>&1
echo "test_http rc=$? ($((SECONDS-t0)) s): $(tail -1 "$o/http.log")"
left=$((${CALL_S:-575} - (SECONDS - t0)))
if [ $left -ge 40 ]; then
  JOBS=12 timeout $left bash bench/triton_h200.sh "$o/triton" .devbin/kforge preflight redteam; echo "triton rc=$? ($((SECONDS-t0)) s)"
  tail -3 "$o"/triton/redteam-*.log 2>/dev/null
fi
cd "$out" && tar czf redteam-serve.tgz r && rm -rf r
