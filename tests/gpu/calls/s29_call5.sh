#!/bin/bash
# session 29, call 5 (carry build-wx): (1) a variant's cost against the blocks it visits: J1 and J2 under random
# per-sequence block masks keeping 100, 50 and 25 % of the 128 x 128 blocks (the block-sparse cubins), beside the
# plain kernels; (2) did this session's source changes move the suites OWN does not touch: the shipped build beside
# s28 (the backward cubins of b4414b7), interleaved, on J1, J3, J4, D8k (and J2, OWN's)
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
[ -d build-w ] || tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
H=build-w/examples/jfa_bwd_host; S=build-w/shared-bench/suites
el "plain, then block masks 100, 50, 25 %"
timeout 60 $H --cubins build-w/examples --bench $S --only J1,J2 --reps 10 2>&1 | grep "^J\|TFLOP/s,\|FAIL"
for P in 100 50 25; do
  timeout 60 $H --cubins build-w/examples --bench $S --only J1,J2 --reps 10 --sparse $P 2>&1 | grep "^J\|TFLOP/s,\|FAIL"
done
el "default ms / s28 ms"
timeout 200 $H --cubins build-w/examples --bench $S --only J1,J3,J4,D8k,J2 --ab build-w/examples/ab_bwd/s28 --reps 20 \
  > $OUT/ab_s28.txt 2>&1
echo "rc=$?"; grep "^J\|^D\|^ab\|FAIL" $OUT/ab_s28.txt
el done
