#!/bin/bash
# session 24, call 3: the shipped kernels now with BULK on the causal D=128 backward and the two-ended DYN order:
# small cases; every suite's bench (zigzag = the new order, no-zigzag = batch order); b64 (64-row bulk) vs Q80 on
# J1, D8k; nobulk vs the shipped on J2; the window with and without BULK; block-sparse beside Flex; memcheck
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
tar xJf build-wx/w.tar.xz && mkdir -p /tmp/fa4 && cp build-fa4a/part.aa /tmp/fa4/ && echo "fa4 part.aa stashed"
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib PYTHONUNBUFFERED=1
el "small + bench (every suite)"
B=build-w OUT=$OUT TSMALL=60 TBENCH=170 sh tests/gpu/jfa_bwd.sh small bench 2>&1 | tail -n 14
el "b64 J1,D8k"
B=build-w OUT=$OUT AB_BWD=b64 ONLY=J1,D8k TSMALL=60 TBENCH=100 sh tests/gpu/jfa_bwd.sh ab 2>&1 | grep "^ab\|ALL\|FAIL\|exit"
el "nobulk J2"
B=build-w OUT=$OUT AB_BWD=nobulk ONLY=J2 TSMALL=60 TBENCH=60 sh tests/gpu/jfa_bwd.sh ab 2>&1 | grep "^ab\|ALL\|FAIL\|exit"
SBS="python3 tests/gpu/side_by_side.py --lib build-w/lib/libjfa.so --suites build-w/shared-bench/suites"
flt() { grep -v "Warning\|exe_args\|^\s*$\|warn" "$@"; }
for d in . ab_var/bulk; do n=$(echo $d | tr "/." "__")
  el "window:256 $d (J1, J2)"
  timeout 70 $SBS --cubins build-w/examples/$d --variant window:256 --bwd-variants --only J1,J2 --rounds 3 > $OUT/win$n.txt 2>&1; echo rc=$?
  flt $OUT/win$n.txt | grep "bwd direct"
done
left=$(( 480 - ($(date +%s) - t0) ))
el "block-sparse beside Flex ($left s)"
[ $left -gt 60 ] && { timeout $left $SBS --cubins build-w/examples --variant blocksparse:0.5,blocksparse_causal:0.5 --bwd-variants --only J1,J2 --rounds 3 > $OUT/bs.txt 2>&1; echo rc=$?;
  flt $OUT/bs.txt | grep -v "^\s*File\|^\s*\^" | tail -n 12; }
left=$(( 560 - ($(date +%s) - t0) ))
el "memcheck, shipped ($left s)"
[ $left -gt 40 ] && { timeout $((left - 5)) compute-sanitizer --tool memcheck --error-exitcode 9 build-w/examples/jfa_bwd_host --cubins build-w/examples --check --small --ctas 7 > $OUT/memcheck.txt 2>&1; echo rc=$?; tail -n 1 $OUT/memcheck.txt; }
el done
cd $OUT && tar czf out3.tgz *.txt
