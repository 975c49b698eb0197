#!/bin/bash
# session 32, call 7 (carry build-wx with ab_bwd/{late,tllate}, ab_var/{late,tllate}): DKV_MEET_LATE (an item's
# second meeting of the warpgroups moved to the next item's first dS store) against the default, interleaved,
# on J2 and the 256 window on J1 and J2; then the timelines of the LATE builds (tllate) on the window and J2
set -u
. tests/gpu/calls/lib.sh
H=build-w/examples/jfa_bwd_host; S=build-w/shared-bench/suites
el "small cases (late builds)"
timeout 60 $H --cubins build-w/examples/ab_bwd/late --check --small --case causal > $OUT/late_small.txt 2>&1
echo "causal rc=$? $(grep -c ' OK$' $OUT/late_small.txt) OK"; grep -v " OK$" $OUT/late_small.txt | grep -v "^target\|^(no" | tail -3
timeout 60 $H --cubins build-w/examples/ab_var/late --check --small --case window > $OUT/late_win.txt 2>&1
echo "window rc=$? $(grep -c ' OK$' $OUT/late_win.txt) OK"; grep -v " OK$" $OUT/late_win.txt | grep -v "^target\|^(no" | tail -3
el "J2 against late"
timeout 80 $H --cubins build-w/examples --bench $S --only J2 --reps 20 --ab build-w/examples/ab_bwd/late 2>&1 | grep "^J\|^ab\|FAIL\|rror"
el "window 256, J1 and J2, against late"
timeout 120 $H --cubins build-w/examples --bench $S --only J1,J2 --window 256 --reps 20 --ab build-w/examples/ab_var/late 2>&1 |
  grep "^J\|^ab\|FAIL\|rror"
mkdir -p /tmp/tlout
el "timelines (tllate): window J1, J2"
timeout 100 $H --cubins build-w/examples --bench $S --only J1,J2 --window 256 --reps 3 --ab build-w/examples/ab_var/tllate \
  --timeline /tmp/tlout/w 2>&1 | grep "^ab\|FAIL\|rror"
for s in J1 J2; do python3 tests/gpu/timeline.py /tmp/tlout/w.$s.csv --mhz 1980 --steps /tmp/tlout/w.$s.steps.csv | tee $OUT/tllate_w.$s.txt; done
el done
