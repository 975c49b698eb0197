#!/bin/bash
# session 35, call 1 (carry build-ring and build-tut): session 34's call 4 (the rings on the hardware against
# float64, then compute-sanitizer memcheck, racecheck and synccheck), then Nsight Compute on layernorm_bwd_dx
# (the shipped f16 .s16 builds at 4096 x 1024 / 4096 / 8192): where the row kernel's time goes against a copy
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
bash tests/gpu/calls/s34_call4.sh
el "sanitizer done"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
H=build-ring/examples/layernorm_bwd_host
for n in 8192 4096 1024; do
  c=build-tut/examples/layernorm_bwd.f16.b$n.s16.sm_90a.cubin
  s=lnb$n
  timeout 150 "$NCU" --clock-control none --kernel-name regex:'^layernorm_bwd_dx$' --launch-skip 2 --launch-count 1 \
    --set full --import-source no -f -o "$OUT/$s" $H --cubin $c --size 4096 --size $n --bench > "$OUT/${s}_run.txt" 2>&1 ||
    { echo "ncu $s: exit $?"; tail -5 "$OUT/${s}_run.txt"; continue; }
  "$NCU" --import "$OUT/$s.ncu-rep" --page details > "$OUT/${s}_details.txt" 2>&1
  "$NCU" --import "$OUT/$s.ncu-rep" --page raw --csv > "$OUT/${s}_raw.csv" 2>&1 || true
  "$NCU" --import "$OUT/$s.ncu-rep" --page source --csv --print-source sass > "$OUT/${s}_sass.csv" 2>&1 || true
  grep -E "Duration|SM Frequency|DRAM Throughput|Memory Throughput|Issue Slots Busy|No Eligible|Active Warps Per|Eligible Warps|Warp Cycles Per Issued|Registers Per|Achieved Occupancy|Block Limit|L2 Hit|L1/TEX Hit|Stall" \
    "$OUT/${s}_details.txt" | head -40
  rm -f "$OUT/$s.ncu-rep"
  el "ncu $s"
done
