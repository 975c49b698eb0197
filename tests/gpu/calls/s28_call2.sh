#!/bin/bash
# session 28, call 2 (right after call 1, carry build-fa4b): FA4 installed; every suite beside FA4 with the
# shipped kernels, then J4 with the hpair build, one process each
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
[ -d build-w ] || { echo "no build-w: not the warm machine"; exit 3; }
sh tests/gpu/fa4_install.sh || exit 3
export LD_LIBRARY_PATH=build-w/lib PYTHONUNBUFFERED=1
k=0
for c in build-w/examples:J1,J2,J3,J4,D8k build-w/examples/ab_bwd/hpair:J4; do
  k=$((k + 1)); d=${c%%:*}; only=${c#*:}
  el "run $k ($d, $only): beside FA4"; nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
  timeout 230 python3 tests/gpu/side_by_side.py --lib build-w/lib/libjfa.so --suites build-w/shared-bench/suites --cubins $d \
    --bwd --peer fa4 --only $only --json $OUT/sbs_$k.json > $OUT/sbs_$k.txt 2>&1; echo rc=$?
  grep -v "Warning\|exe_args\|^\s*$\|warn" $OUT/sbs_$k.txt | tail -n 8
done
el done
