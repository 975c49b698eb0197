#!/bin/bash
# session 25, call 4: CLAIM (each dQ block's first contribution writes it; no zeros) against noclaim on
# J1, J2, J3, D8k; DQT with the fixed post kernel against nodqt on J3; the small cases; racecheck and
# synccheck at 7 CTAs; per-kernel durations on J2 and J3
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
el "shipped small"
B=build-w OUT=$OUT TSMALL=60 sh tests/gpu/jfa_bwd.sh small 2>&1 | tail -n 3
el "ab noclaim"
B=build-w OUT=$OUT AB_BWD=noclaim ONLY=J1,J2,J3,D8k TSMALL=60 TBENCH=150 sh tests/gpu/jfa_bwd.sh ab 2>&1 | grep -v "^      fwd\|^suite" | tail -n 9
el "ab nodqt J3"
B=build-w OUT=$OUT AB_BWD=nodqt ONLY=J3 TSMALL=60 TBENCH=60 sh tests/gpu/jfa_bwd.sh ab 2>&1 | tail -n 3
for tool in racecheck synccheck; do
  el "default $tool"
  timeout 70 compute-sanitizer --tool $tool --error-exitcode 9 build-w/examples/jfa_bwd_host --cubins build-w/examples --check --small --ctas 7 > $OUT/def_$tool.txt 2>&1
  echo "rc=$?"; tail -n 1 $OUT/def_$tool.txt
done
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
for s in J2 J3; do
  el "kernel durations $s"
  timeout 60 $NCU --clock-control none --kernel-name 'regex:^jfa_bwd' --launch-count 3 --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    build-w/examples/jfa_bwd_host --cubins build-w/examples --bench build-w/shared-bench/suites --only $s --reps 1 2>&1 | grep -E "^  jfa|duration|bytes"
done
el done
