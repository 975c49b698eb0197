#!/bin/bash
# session 27, call 2 (right after call 1, carry build-fa4b; CUBINS2=build-w/examples/ab_bwd/fp): FA4 installed; every suite beside FA4,
# the shipped kernels then the ROT build (CUBINS2), one process each
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
[ -d build-w ] || { echo "no build-w: not the warm machine"; exit 3; }
sh tests/gpu/fa4_install.sh || exit 3
export LD_LIBRARY_PATH=build-w/lib PYTHONUNBUFFERED=1
k=0
for c in build-w/examples ${CUBINS2:-}; do
  k=$((k + 1))
  el "run $k ($c): beside FA4, every suite"; nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
  timeout 200 python3 tests/gpu/side_by_side.py --lib build-w/lib/libjfa.so --suites build-w/shared-bench/suites --cubins $c \
    --bwd --peer fa4 --json $OUT/sbs_$k.json > $OUT/sbs_$k.txt 2>&1; echo rc=$?
  grep -v "Warning\|exe_args\|^\s*$\|warn" $OUT/sbs_$k.txt | tail -n 8
done
el done
