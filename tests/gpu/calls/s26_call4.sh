#!/bin/bash
# session 26, call 4 (first of a pair; carry build-wx build-fa4a): the shipped kernels after call 3
# (CUBINS, default build-w/examples): small cases, racecheck, synccheck and memcheck at 7 CTAs, the full
# float64 check; FA4's first half stashed in /tmp/fa4
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
mkdir -p /tmp/fa4 && cp build-fa4a/part.aa /tmp/fa4/ && echo "fa4 part.aa stashed"
[ -d build-w ] || tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
el "small"
B=build-w OUT=$OUT TSMALL=60 sh tests/gpu/jfa_bwd.sh small 2>&1 | tail -n 3
for tool in racecheck synccheck memcheck; do
  el "$tool"
  timeout 80 compute-sanitizer --tool $tool --error-exitcode 9 build-w/examples/jfa_bwd_host --cubins build-w/examples --check --small --ctas 7 > $OUT/san_$tool.txt 2>&1
  echo "rc=$?"; tail -n 1 $OUT/san_$tool.txt
done
el "full check"
B=build-w OUT=$OUT TCHECK=280 sh tests/gpu/jfa_bwd.sh check 2>&1 | tail -n 6
el done
