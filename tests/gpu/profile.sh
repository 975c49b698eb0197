#!/bin/bash
# tests/gpu/profile.sh - Nsight Compute on a JFA kernel, one launch per
# suite (the benchmark's first launch), clocks left alone (--clock-control
# none, METHOD.md). Writes a text report per suite into $OUT: the details
# page (throughputs, pipe utilization, warp states, occupancy) and the
# per-SASS-instruction source page (stall samples).
#   make gpu-bundle; run: SUITES="D8k J1" bash tests/gpu/profile.sh  (carry build-gpu)
#   KERNEL=bwd profiles the backward kernel (jfa_bwd) instead of jfa_fwd
#   CUBINS=build-gpu/examples/ab/NAME profiles a kernel option instead
#   (its reports are named NAME_SUITE)
#   PEER=fa4 profiles FlashAttention-4's backward kernel on the same suites
#   (tests/gpu/side_by_side.py --bwd --peer fa4, wheels in /tmp/site)
#   ARGS="--window 256" passes more arguments to the host (a variant's run)
#   The stall samples by Tile source line: back here, run
#   tests/gpu/ncu_lines.py OUT/NAME_sass.csv CUBIN KERNEL on the cubin that
#   ran (nvdisasm's line table; ncu's own source page has no samples by
#   line for these cubins)
set -u
B=${B:-build-gpu}
OUT=${OUT:-/tmp/gpu-prof}
SUITES=${SUITES:-D8k J1}
KERNEL=${KERNEL:-fwd}
CUBINS=${CUBINS:-$B/examples}
TAG=$([ "$CUBINS" = "$B/examples" ] || echo "$(basename "$CUBINS")_")
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
[ -n "$NCU" ] || { echo "profile: ncu not found"; exit 1; }
case $KERNEL in
  fwd) HOST=$B/examples/jfa_host; RX='regex:^jfa_fwd$' ;;
  bwd) HOST=$B/examples/jfa_bwd_host; RX='regex:^jfa_bwd$'; TAG=${TAG}bwd_ ;;
  *) echo "profile: KERNEL is fwd or bwd"; exit 2 ;;
esac
[ -n "${PEER:-}" ] && { RX='regex:BackwardSm90'; TAG=${PEER}_bwd_; }
rc=0
for s0 in $SUITES; do
  s=$TAG$s0
  echo "== ncu: $s"
  if [ -n "${PEER:-}" ]; then
    set -- python3 tests/gpu/side_by_side.py --bwd --peer "$PEER" --lib "$B/lib/libjfa.so" --cubins "$CUBINS" \
      --suites "$B/shared-bench/suites" --only "$s0" --rounds 1 --reps 1
  else
    # shellcheck disable=SC2086  # ARGS split at blanks on purpose
    set -- "$HOST" --cubins "$CUBINS" --bench "$B/shared-bench/suites" --only "$s0" --reps 1 ${ARGS:-}
  fi
  timeout ${TPROF:-240} "$NCU" --clock-control none --kernel-name "$RX" --launch-count 1 --set full \
    --import-source no -f -o "$OUT/$s" "$@" > "$OUT/${s}_run.txt" 2>&1 ||
    { echo "ncu $s: exit $?"; tail -5 "$OUT/${s}_run.txt"; rc=1; continue; }
  "$NCU" --import "$OUT/$s.ncu-rep" --page details > "$OUT/${s}_details.txt" 2>&1
  "$NCU" --import "$OUT/$s.ncu-rep" --page source --csv --print-source sass > "$OUT/${s}_sass.csv" 2>&1 || true
  grep -E "Duration|SM Frequency|Compute \(SM\) Throughput|Tensor|Issue Slots Busy|No Eligible|Active Warps Per|Eligible Warps|Warp Cycles Per Issued|Registers Per|Shared Memory Configuration Size|L2 Hit|DRAM Throughput|Shared|Bank" \
    "$OUT/${s}_details.txt" | head -50
  ls -la "$OUT"/${s}* | awk '{print $5, $9}'
  rm -f "$OUT/$s.ncu-rep"   # large; the text pages are what comes back
done
exit $rc
