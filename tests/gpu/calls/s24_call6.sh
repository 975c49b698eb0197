#!/bin/bash
# session 24, call 6: the final shipped state (BULK at D=128 everywhere Q80 is not; DYN heavy-first then batch
# order): small cases + the bench (every suite); the full float64 check; racecheck; FA4's first half stashed
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
tar xJf build-wx/w.tar.xz && mkdir -p /tmp/fa4 && cp build-fa4a/part.aa /tmp/fa4/ && echo "fa4 part.aa stashed"
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib PYTHONUNBUFFERED=1
el "small + bench (every suite)"
B=build-w OUT=$OUT TSMALL=60 TBENCH=170 sh tests/gpu/jfa_bwd.sh small bench 2>&1 | tail -n 13
el "full check"
B=build-w OUT=$OUT TCHECK=330 sh tests/gpu/jfa_bwd.sh check 2>&1 | tail -n 4
left=$(( 540 - ($(date +%s) - t0) ))
el "racecheck ($left s)"
[ $left -gt 40 ] && { timeout $((left - 5)) compute-sanitizer --tool racecheck --error-exitcode 9 build-w/examples/jfa_bwd_host --cubins build-w/examples --check --small --ctas 7 > $OUT/racecheck.txt 2>&1; echo rc=$?; tail -n 1 $OUT/racecheck.txt; }
el done
cd $OUT && tar czf out6.tgz *.txt
