#!/bin/bash
# session 25, call 6 (right after call 5): FA4 installed; the final kernels beside FA4, every suite, twice
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
[ -d build-w ] || { echo "no build-w: not the warm machine"; exit 3; }
sh tests/gpu/fa4_install.sh || exit 3
export LD_LIBRARY_PATH=build-w/lib PYTHONUNBUFFERED=1
for k in 1 2; do
  el "run $k: beside FA4, every suite"; nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
  timeout 170 python3 tests/gpu/side_by_side.py --lib build-w/lib/libjfa.so --suites build-w/shared-bench/suites --cubins build-w/examples \
    --bwd --peer fa4 --json $OUT/sbs_$k.json > $OUT/sbs_$k.txt 2>&1; echo rc=$?
  grep -v "Warning\|exe_args\|^\s*$\|warn" $OUT/sbs_$k.txt | tail -n 8
done
el done
