#!/bin/bash
# tests/gpu/full.sh - every GPU check and benchmark of the project in one
# call of the device tool (at most 10 minutes, at most 8 files back):
#   make gpu-bundle                                   (here)
#   run: bash tests/gpu/full.sh   with carry ["build-gpu"]   (there)
# Order: JFA correctness, suites + peers, the kernel-option A/B, the JFA
# sanitizers, then tests/gpu/run.sh (examples, GEMM, prims, their
# sanitizers, GEMM vs cuBLAS) in whatever time is left of BUDGET seconds
# (default 540). Logs go to two tarballs in $OUT; the summary prints last.
set -u
B=${B:-build-gpu}
OUT=${OUT:-/tmp/gpu-full}
BUDGET=${BUDGET:-540}
STEPS=${STEPS:-check bench peers ab san}
# the best peer of every suite (../shared/gpu.md): FA2 varlen, dense cuDNN
export PEERS=${PEERS:-varlen,dense}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
t0=$(date +%s)
elapsed() { echo $(( $(date +%s) - t0 )); }
J=$(mktemp -d)
rc=0
for s in $STEPS; do
  echo "== jfa $s (t=$(elapsed)s)"
  # printed as it goes (a step cut short still shows its lines), the logs
  # re-packed after every step (what is in $OUT comes back even on a timeout)
  B=$B OUT=$J sh tests/gpu/jfa.sh $s 2>&1 | tee "$J/step_$s.out" | grep --line-buffered -v "checked=\|DeprecationWarning\|create_block_mask\|^\s*$"
  r=${PIPESTATUS[0]}
  [ $r = 0 ] || { echo "jfa $s: exit $r"; rc=1; }
  tar -C "$J" -czf "$OUT/jfa_logs.tgz" . 2>/dev/null
done
G=$(mktemp -d)
left=$(( BUDGET - $(elapsed) ))
if [ $left -ge 60 ]; then
  echo "== tests/gpu/run.sh (t=$(elapsed)s, ${left}s left)"
  B=$B OUT=$G timeout $left bash tests/gpu/run.sh > "$G/run.out" 2>&1
  r=$?
  tail -50 "$G/run.out"
  [ $r = 0 ] || { echo "tests/gpu/run.sh: exit $r$([ $r = 124 ] && echo ' (out of time)')"; rc=1; }
  cp "$G/summary.txt" "$OUT/" 2>/dev/null
else
  echo "== tests/gpu/run.sh skipped: ${left}s left"
fi
tar -C "$G" -czf "$OUT/gpu_logs.tgz" . 2>/dev/null
echo "== done in $(elapsed)s, rc=$rc"
exit $rc
