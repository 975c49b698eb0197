#!/bin/bash
# session 37, call 4 (carry build-wx: `make jfa-bwd-ab JFA_BWD_AB="tl:TIMELINE=true fin:DQ_FINAL=true
# finlazy:DQ_FINAL=true+FIN_LAZY=true finahead:DQ_FINAL=true+FIN_AHEAD=true
# finboth:DQ_FINAL=true+FIN_LAZY=true+FIN_AHEAD=true fintl:DQ_FINAL=true+TIMELINE=true"`, the same JFA_VAR_AB for
# jfa-var-ab, then `AB="tl fin finlazy finahead finboth fintl" sh scripts/gpu_slim_bundle.sh`): call 3 found J2's pre and post kernels at about 1 ms of a 5.6 ms backward (post
# 0.61 ms). FIN (DQ_FINAL) removes post: the last contributor of each dQ block writes bf16 dQ. It lost as the
# default (thirtieth session: J2 1.017x, the 256 window 0.86-0.90x). Where does its time go: the turns' waits
# (red_wait), the final step's wait for the earlier sum (acc_wait), its work in the consumers (q_full / meet), or
# the dQ stage (dq_empty)? And do FIN_LAZY (each turn passed on a step later, not waited for right after the adds),
# FIN_AHEAD (a final step's earlier sum loaded a step early) or both keep post's saving? Build at or after the
# commit that adds FIN_AHEAD.
set -u
. tests/gpu/calls/lib.sh
H=build-w/examples/jfa_bwd_host; S=build-w/shared-bench/suites
el "J2: FIN against the default, then the TIMELINE builds of both (steps' waits)"
for v in fin finlazy finahead finboth fin finlazy finahead finboth; do
  timeout 100 $H --cubins build-w/examples --bench $S --only J2 --reps 10 --ab build-w/examples/ab_bwd/$v 2>&1 | grep "^ab\|FAIL\|rror"
done
for v in tl fintl; do
  timeout 60 $H --cubins build-w/examples --bench $S --only J2 --reps 2 --ab build-w/examples/ab_bwd/$v \
    --timeline $OUT/$v 2>&1 | grep "^ab\|FAIL\|rror\|timeline: [JD]"
done
el "window 256, J1: FIN against the default, and both TIMELINE builds"
for v in fin finlazy finahead finboth; do
  timeout 100 $H --cubins build-w/examples --bench $S --only J1,J2 --window 256 --reps 10 --ab build-w/examples/ab_var/$v 2>&1 |
    grep "^ab\|FAIL\|rror"
done
for v in tl fintl; do
  timeout 60 $H --cubins build-w/examples --bench $S --only J1 --window 256 --reps 2 --ab build-w/examples/ab_var/$v \
    --timeline $OUT/w$v 2>&1 | grep "^ab\|FAIL\|rror\|timeline: [JD]"
done
el "J1 and D8k (80-row steps): the TIMELINE build, its consumers' waits (stamped since 8c619c4)"
timeout 90 $H --cubins build-w/examples --bench $S --only J1,D8k --reps 2 --ab build-w/examples/ab_bwd/tl \
  --timeline $OUT/tl 2>&1 | grep "^ab\|FAIL\|rror\|timeline: [JD]"
el "timelines at 1750 MHz (call 3's ncu: the main kernel's SM clock under the power cap)"
for f in $OUT/tl.J2 $OUT/fintl.J2 $OUT/wtl.J1 $OUT/wfintl.J1 $OUT/tl.J1 $OUT/tl.D8k; do
  echo "-- $f"
  python3 tests/gpu/timeline.py $f.csv --mhz 1750 --steps $f.steps.csv | grep -v "^phase\|^kv_wait\|^load\|^issue_lag\|^end_\|share of\|kv_wait\|gap "
done
rm -f $OUT/*.csv
el done
