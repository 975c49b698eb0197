#!/bin/bash
# session 29, call 4 (carry build-wx): did this session's source changes move the suites OWN does not touch? The
# shipped build beside s28 (the backward cubins of b4414b7, before OWN, same tilec), interleaved, on J1, J3, J4,
# D8k; then J2 (OWN) the same way
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
[ -d build-w ] || tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
H=build-w/examples/jfa_bwd_host; S=build-w/shared-bench/suites
el "default ms / s28 ms"
timeout 240 $H --cubins build-w/examples --bench $S --only J1,J3,J4,D8k,J2 --ab build-w/examples/ab_bwd/s28 --reps 20 \
  > $OUT/ab_s28.txt 2>&1
echo "rc=$?"; grep "^J\|^D\|^ab\|FAIL" $OUT/ab_s28.txt
el done
