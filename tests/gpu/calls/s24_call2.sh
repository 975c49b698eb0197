#!/bin/bash
# session 24, call 2 (right after call 1, same warm machine): FA4 installed; the shipped kernels (Q80) beside FA4 on
# every suite (backward and training step); q80c beside FA4 on J2; the window with and without Q80 beside FA4;
# the block-sparse backward beside FlexAttention
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
flt $OUT/sbs_all.txt | tail -n 7
el "q80c beside FA4 (J2), then bulk (J3)"
timeout 60 $SBS --cubins build-w/examples/ab_bwd/q80c --bwd --peer fa4 --only J2 --json $OUT/sbs_q80c.json > $OUT/sbs_q80c.txt 2>&1; echo rc=$?
flt $OUT/sbs_q80c.txt | tail -n 2
timeout 50 $SBS --cubins build-w/examples/ab_bwd/bulk --bwd --peer fa4 --only J3 --json $OUT/sbs_bulk.json > $OUT/sbs_bulk.txt 2>&1; echo rc=$?
flt $OUT/sbs_bulk.txt | tail -n 2
for d in . ab_var/q80; do n=$(echo $d | tr "/." "__")
  el "window:256 $d beside FA4 (J1, J2)"
  timeout 110 $SBS --cubins build-w/examples/$d --variant window:256 --bwd-variants --only J1,J2 --rounds 3 --json $OUT/win$n.json > $OUT/win$n.txt 2>&1; echo rc=$?
  flt $OUT/win$n.txt | tail -n 6
done
left=$(( 550 - ($(date +%s) - t0) ))
el "block-sparse beside Flex ($left s)"
[ $left -gt 60 ] && { timeout $left $SBS --cubins build-w/examples --variant blocksparse:0.5,blocksparse_causal:0.5 --bwd-variants --only J1,J2 --rounds 3 --json $OUT/bs.json > $OUT/bs.txt 2>&1; echo rc=$?;
  flt $OUT/bs.txt | tail -n 12; }
el done
