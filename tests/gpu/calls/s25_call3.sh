#!/bin/bash
# session 25, call 3: DQT (head dim 64: one dQ^T per step over both key halves, added by block) against
# the two partials (nodqt), interleaved on J3; the small cases; racecheck and synccheck at 7 CTAs; ncu J3
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
el "shipped small"
B=build-w OUT=$OUT TSMALL=60 sh tests/gpu/jfa_bwd.sh small 2>&1 | tail -n 3
el "ab nodqt J3 (twice)"
for k in 1 2; do
  B=build-w OUT=$OUT AB_BWD=nodqt ONLY=J3 TSMALL=60 TBENCH=80 sh tests/gpu/jfa_bwd.sh ab 2>&1 | tail -n 4
done
for tool in racecheck synccheck memcheck; do
  el "default $tool"
  timeout 70 compute-sanitizer --tool $tool --error-exitcode 9 build-w/examples/jfa_bwd_host --cubins build-w/examples --check --small --ctas 7 > $OUT/def_$tool.txt 2>&1
  echo "rc=$?"; tail -n 1 $OUT/def_$tool.txt
done
el "ncu J3"
B=build-w OUT=$OUT/prof SUITES="J3" KERNEL=bwd TPROF=120 bash tests/gpu/profile.sh 2>&1 | grep -E "Duration|Issue Slots|DRAM Through|ncu:"
grep -E "L2 Cache Throughput" $OUT/prof/*details.txt
el "J3 kernel durations"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
timeout 90 $NCU --clock-control none --kernel-name 'regex:^jfa_bwd' --launch-count 3 --metrics gpu__time_duration.sum,lts__t_bytes.sum \
  build-w/examples/jfa_bwd_host --cubins build-w/examples --bench build-w/shared-bench/suites --only J3 --reps 1 2>&1 | grep -E "^  jfa|duration|lts" 
cd $OUT && tar czf prof.tgz prof 2>/dev/null; rm -rf prof
el done
