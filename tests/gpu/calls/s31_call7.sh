#!/bin/bash
# session 31, call 7 (carry build-wx with ab_bwd/defer and ab_var/defer): DKV_DEFER against the default, interleaved
# (jfa_bwd_host --ab), on J2 and the 256 window on J1 and J2, with the small cases of both defer builds first
set -u
. tests/gpu/calls/lib.sh
H=build-w/examples/jfa_bwd_host; S=build-w/shared-bench/suites
el "small cases (defer builds)"
timeout 60 $H --cubins build-w/examples/ab_bwd/defer --check --small --case causal > $OUT/def_small.txt 2>&1
echo "causal rc=$? $(grep -c ' OK$' $OUT/def_small.txt) OK"; grep -v " OK$" $OUT/def_small.txt | grep -v "^target\|^(no" | tail -3
timeout 60 $H --cubins build-w/examples/ab_var/defer --check --small --case window > $OUT/def_win.txt 2>&1
echo "window rc=$? $(grep -c ' OK$' $OUT/def_win.txt) OK"; grep -v " OK$" $OUT/def_win.txt | grep -v "^target\|^(no" | tail -3
el "J2 against defer"
timeout 80 $H --cubins build-w/examples --bench $S --only J2 --reps 20 --ab build-w/examples/ab_bwd/defer 2>&1 | grep "^J\|^ab\|FAIL\|rror"
el "window 256, J1 and J2, against defer"
timeout 150 $H --cubins build-w/examples --bench $S --only J1,J2 --window 256 --reps 20 --ab build-w/examples/ab_var/defer 2>&1 |
  grep "^J\|^ab\|FAIL\|rror"
el done
