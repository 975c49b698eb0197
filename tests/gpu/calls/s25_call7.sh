#!/bin/bash
# session 25, call 7: GROUP (a short sequence's head as one item, its dQ blocks written first) against
# nogroup on J3, J2, J1; the small cases; racecheck and synccheck at 7 CTAs; the full check; J3's kernels
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
el "shipped small"
B=build-w OUT=$OUT TSMALL=60 sh tests/gpu/jfa_bwd.sh small 2>&1 | tail -n 3
el "ab nogroup"
B=build-w OUT=$OUT AB_BWD=nogroup ONLY=J3,J2,J1 TSMALL=60 TBENCH=120 sh tests/gpu/jfa_bwd.sh ab 2>&1 | grep -v "^      fwd\|^suite" | tail -n 7
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
el "J3 kernels"
timeout 60 $NCU --clock-control none --kernel-name 'regex:^jfa_bwd' --launch-count 3 --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
  build-w/examples/jfa_bwd_host --cubins build-w/examples --bench build-w/shared-bench/suites --only J3 --reps 1 2>&1 | grep -E "^  jfa|duration|bytes"
for tool in racecheck synccheck; do
  el "default $tool"
  timeout 70 compute-sanitizer --tool $tool --error-exitcode 9 build-w/examples/jfa_bwd_host --cubins build-w/examples --check --small --ctas 7 > $OUT/def_$tool.txt 2>&1
  echo "rc=$?"; tail -n 1 $OUT/def_$tool.txt
done
el "full check"
B=build-w OUT=$OUT TCHECK=280 sh tests/gpu/jfa_bwd.sh check 2>&1 | tail -n 6
el done
