#!/bin/bash
# session 24, call 4 (right after call 3, same warm machine): FA4 installed; the shipped kernels (BULK causal,
# two-ended DYN order) beside FA4 on every suite; the window beside FA4
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
[ -d build-w ] || { echo "no build-w: not the warm machine"; exit 3; }
cp build-fa4b/*part* build-fa4b/*.whl /tmp/fa4/ && cd /tmp/fa4 && cat part.* > nvidia_cutlass_dsl_libs_cu13-4.8.1-cp312-cp312-manylinux_2_28_x86_64.whl && rm part.* &&
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site *.whl > $OUT/pip.txt 2>&1; echo "pip $?"; cd - >/dev/null
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib PYTHONUNBUFFERED=1
SBS="python3 tests/gpu/side_by_side.py --lib build-w/lib/libjfa.so --suites build-w/shared-bench/suites"
flt() { grep -v "Warning\|exe_args\|^\s*$\|warn" "$@"; }
el "shipped beside FA4, every suite"
timeout 200 $SBS --cubins build-w/examples --bwd --peer fa4 --json $OUT/sbs_all.json > $OUT/sbs_all.txt 2>&1; echo rc=$?
flt $OUT/sbs_all.txt | tail -n 6
el "${WIN:-.} window:256 beside FA4"
timeout 110 $SBS --cubins build-w/examples/${WIN:-.} --variant window:256 --bwd-variants --only J1,J2 --rounds 3 --json $OUT/win.json > $OUT/win.txt 2>&1; echo rc=$?
flt $OUT/win.txt | grep "fa4"
el done
cd $OUT && tar czf out4.tgz *.txt *.json
