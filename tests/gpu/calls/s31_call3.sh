#!/bin/bash
# session 31, call 3 (carry build-fa4b, right after a call that put build-fa4a/part.aa in /tmp/fa4, on the warm
# H200 that ran call 2 with build-w): FA4 installed; the shipped kernels beside FA4 on the 256 window (J1, J2;
# forward and backward), then the backward on every suite
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
[ -d build-w ] || { echo "no build-w: not the warm machine"; exit 3; }
sh tests/gpu/fa4_install.sh || exit 3
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib PYTHONUNBUFFERED=1
SBS="python3 tests/gpu/side_by_side.py --lib build-w/lib/libjfa.so --suites build-w/shared-bench/suites"
flt() { grep -v "Warning\|exe_args\|^\s*$\|warn" "$@"; }
el "window:256 beside FA4 (J1, J2)"
timeout 170 $SBS --cubins build-w/examples --variant window:256 --bwd-variants --only J1,J2 --rounds 3 \
  --json $OUT/win.json > $OUT/win.txt 2>&1; echo rc=$?
flt $OUT/win.txt | tail -n 12
el "every suite's backward beside FA4"
timeout 330 $SBS --cubins build-w/examples --bwd --peer fa4 --only J2,J1,J3,J4,D8k --json $OUT/sbs_bwd.json > $OUT/sbs_bwd.txt 2>&1
echo rc=$?; flt $OUT/sbs_bwd.txt | tail -n 24
el done
