#!/bin/bash
# session 33, call 1 (carry build-wx with ab_bwd/stg, ab_bwd/stgnw, ab_var/stg, ab_var/stgnw, ab/nowide):
# DKV_STG (dK and dV stored from the registers, 16 bytes a thread by the compiler's wide stores; no staging, no
# TMA copies, no second meeting) against the default, interleaved on every suite and the 256 window; the same
# with 4-byte stores (stgnw: --no-wide-stores) on J2, J4 and the J1 window; the forward with the wide stores
# (default) against --no-wide-stores (ab/nowide: its partial tiles' O stores). Small cases of the new builds first.
set -u
. tests/gpu/calls/lib.sh
H=build-w/examples/jfa_bwd_host; F=build-w/examples/jfa_host; S=build-w/shared-bench/suites
el "small cases (stg builds; the default's with wide stores)"
for b in examples examples/ab_bwd/stg examples/ab_bwd/stgnw; do
  timeout 60 $H --cubins build-w/$b --check --small > $OUT/small.txt 2>&1
  echo "$b small rc=$? $(grep -c ' OK$' $OUT/small.txt) OK"; grep -v " OK$" $OUT/small.txt | grep -v "^target\|^(no" | tail -3
done
timeout 60 $H --cubins build-w/examples/ab_var/stg --check --small --case window > $OUT/stg_win.txt 2>&1
echo "window stg rc=$? $(grep -c ' OK$' $OUT/stg_win.txt) OK"; grep -v " OK$" $OUT/stg_win.txt | grep -v "^target\|^(no" | tail -3
timeout 60 $F --cubins build-w/examples --check --small > $OUT/fwd_small.txt 2>&1
echo "forward small rc=$? $(grep -c ' OK$' $OUT/fwd_small.txt) OK"; grep -v " OK$" $OUT/fwd_small.txt | grep -v "^target\|^(no" | tail -3
el "backward: default against stg, every suite"
timeout 200 $H --cubins build-w/examples --bench $S --only J1,J2,J3,J4,D8k --reps 10 --ab build-w/examples/ab_bwd/stg 2>&1 |
  grep "^J\|^D\|^ab\|FAIL\|rror"
el "window 256, J1 and J2, against stg"
timeout 120 $H --cubins build-w/examples --bench $S --only J1,J2 --window 256 --reps 20 --ab build-w/examples/ab_var/stg 2>&1 |
  grep "^J\|^ab\|FAIL\|rror"
el "4-byte stores: J2, J4 and the J1 window against stgnw"
timeout 90 $H --cubins build-w/examples --bench $S --only J2,J4 --reps 10 --ab build-w/examples/ab_bwd/stgnw 2>&1 |
  grep "^J\|^ab\|FAIL\|rror"
timeout 90 $H --cubins build-w/examples --bench $S --only J1 --window 256 --reps 20 --ab build-w/examples/ab_var/stgnw 2>&1 |
  grep "^J\|^ab\|FAIL\|rror"
el "forward: wide stores (default) against nowide"
timeout 120 $F --cubins build-w/examples --bench $S --reps 20 --ab build-w/examples/ab/nowide 2>&1 | grep "^J\|^D\|^ab\|FAIL\|rror"
el done
