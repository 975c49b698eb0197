#!/bin/bash
# session 32, call 3 (carry build-wx at the TIMELINE commit, with ab_bwd/tl and ab_var/tl): where a backward
# item's time goes. jfa_bwd_host --bench ... --ab (the TIMELINE build, timed interleaved against the default:
# what the stamps cost) --timeline (one more backward with the stamps, PREFIX.SUITE.csv), on J2 (causal), J1
# (not causal: the steady state) and J1 and J2 under a 256 window; the SM clock sampled meanwhile; then
# tests/gpu/timeline.py on each csv at the clock seen
set -u
. tests/gpu/calls/lib.sh
H=build-w/examples/jfa_bwd_host; S=build-w/shared-bench/suites
nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader -lms 250 > $OUT/clocks.txt &
CLK=$!
el "J2 and J1 against the TIMELINE build"
timeout 120 $H --cubins build-w/examples --bench $S --only J2,J1 --reps 10 --ab build-w/examples/ab_bwd/tl \
  --timeline $OUT/tl 2>&1 | grep "^J\|^ab\|FAIL\|rror\|timeline"
el "window 256, J1 and J2"
timeout 120 $H --cubins build-w/examples --bench $S --only J1,J2 --window 256 --reps 10 --ab build-w/examples/ab_var/tl \
  --timeline $OUT/tlw 2>&1 | grep "^J\|^ab\|FAIL\|rror\|timeline"
kill $CLK
MHZ=$(sort -n $OUT/clocks.txt | awk -F, '{print $1+0}' | sort -n | awk '{a[NR]=$1} END {print a[int(NR*0.9)]}')
el "timelines at $MHZ MHz (the 90th percentile of the sampled SM clock)"
for f in $OUT/tl*.csv; do python3 tests/gpu/timeline.py $f --mhz $MHZ; done
el done
