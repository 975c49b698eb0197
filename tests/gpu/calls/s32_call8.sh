#!/bin/bash
# session 32, call 8 (carry build-wx with ab_bwd/tl and ab_var/tl, at the step-stamp TIMELINE): the item
# timelines on the H200 (the card issue 17's window target is on), window 256 on J1 and J2, and J2
set -u
. tests/gpu/calls/lib.sh
H=build-w/examples/jfa_bwd_host; S=build-w/shared-bench/suites
nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader -lms 250 > $OUT/clocks.txt &
CLK=$!
mkdir -p /tmp/tlout
el "window 256, J1 and J2"
timeout 100 $H --cubins build-w/examples --bench $S --only J1,J2 --window 256 --reps 5 --ab build-w/examples/ab_var/tl \
  --timeline /tmp/tlout/w 2>&1 | grep "^J\|^ab\|FAIL\|rror"
el "J2"
timeout 60 $H --cubins build-w/examples --bench $S --only J2 --reps 5 --ab build-w/examples/ab_bwd/tl \
  --timeline /tmp/tlout/p 2>&1 | grep "^J\|^ab\|FAIL\|rror"
kill $CLK
MHZ=$(awk -F, '{print $1+0}' $OUT/clocks.txt | sort -n | awk '{a[NR]=$1} END {print a[int(NR*0.9)]}')
el "timelines at $MHZ MHz (90th percentile of the sampled SM clock; median $(awk -F, '{print $1+0}' $OUT/clocks.txt | sort -n | awk '{a[NR]=$1} END {print a[int(NR*0.5)]}'))"
for f in w.J1 w.J2 p.J2; do
  python3 tests/gpu/timeline.py /tmp/tlout/$f.csv --mhz $MHZ --steps /tmp/tlout/$f.steps.csv | tee $OUT/tl.$f.txt
done
el done
