#!/bin/bash
# tests/gpu/dot_ab.sh - A/B of the Triton-style matmul's options (cubins in
# $B/examples/ab_dot/matmul.NAME.sm_90a.cubin, built with tilec -D ...)
# against the default, interleaved, timed by matmul_host --bench (CUDA
# events, no L2 flush); then one Nsight Compute pass over the default at
# 4096^3 (PROFILE=0 skips it).
#   B=build-gpu OUT=$OUT bash tests/gpu/dot_ab.sh
set -u
B=${B:-build}
OUT=${OUT:-$B/gpu-logs}
mkdir -p "$OUT"
H=$B/examples/matmul_host
for s in ${DOT_AB_SHAPES:-4096,4096,4096 8192,8192,8192 4096,4096,1024}; do
  IFS=, read -r m n k <<< "$s"
  for round in 1 2; do
    for c in "$B/examples/matmul.sm_90a.cubin" "$B"/examples/ab_dot/*.cubin; do
      name=$(basename "$c" .sm_90a.cubin)
      printf '%-16s %s  ' "$name" "$s"
      "$H" --cubin "$c" --size "$m" --size "$n" --size "$k" --bench 2>&1 | grep -E "^bench|FAIL" | sed 's/^bench matmul //'
    done
  done
done 2>&1 | tee "$OUT/dot_ab.log"
[ "${PROFILE:-1}" = 1 ] || exit 0
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -n 1)
[ -n "$NCU" ] || { echo "no ncu"; exit 0; }
timeout 200 "$NCU" --clock-control none -k matmul -c 1 --section SpeedOfLight --section WarpStateStats \
  --section SchedulerStats --section Occupancy --section MemoryWorkloadAnalysis --section LaunchStats \
  "$H" --cubin "$B/examples/matmul.sm_90a.cubin" --size 4096 --size 4096 --size 4096 > "$OUT/dot_ncu.txt" 2>&1
grep -E "Throughput|Duration|Stall|Warp Cycles|Issued|Eligible|Active Warps|Occupancy|Registers|Bandwidth|Hit Rate|Smsp|One or More|No Eligible" "$OUT/dot_ncu.txt" | head -60
