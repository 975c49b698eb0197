#!/bin/bash
# session 32, call 9 (carry build-wx with ab_bwd/rc and ab_var/rc): DKV_RCOPY (the reducer copies dK and dV out
# and frees their stages; the consumers stage them and go on) against the default, interleaved: J2, J4 and the
# 256 window on J1 and J2; the small causal, broadcast-Q and window cases of the rc builds first
set -u
. tests/gpu/calls/lib.sh
H=build-w/examples/jfa_bwd_host; S=build-w/shared-bench/suites
el "small cases (rc builds)"
timeout 60 $H --cubins build-w/examples/ab_bwd/rc --check --small > $OUT/rc_small.txt 2>&1
echo "all small rc=$? $(grep -c ' OK$' $OUT/rc_small.txt) OK"; grep -v " OK$" $OUT/rc_small.txt | grep -v "^target\|^(no" | tail -3
timeout 60 $H --cubins build-w/examples/ab_var/rc --check --small --case window > $OUT/rc_win.txt 2>&1
echo "window rc=$? $(grep -c ' OK$' $OUT/rc_win.txt) OK"; grep -v " OK$" $OUT/rc_win.txt | grep -v "^target\|^(no" | tail -3
el "J2, J4 against rc"
timeout 120 $H --cubins build-w/examples --bench $S --only J2,J4 --reps 20 --ab build-w/examples/ab_bwd/rc 2>&1 | grep "^J\|^ab\|FAIL\|rror"
el "window 256, J1 and J2, against rc"
timeout 120 $H --cubins build-w/examples --bench $S --only J1,J2 --window 256 --reps 20 --ab build-w/examples/ab_var/rc 2>&1 |
  grep "^J\|^ab\|FAIL\|rror"
el done
