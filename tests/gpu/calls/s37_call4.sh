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
tl() { # tl PREFIX: the timeline of PREFIX.csv at the main kernel's clock (call 3's ncu: 1.75 GHz under the cap)
  python3 tests/gpu/timeline.py $1.csv --mhz 1750 --steps $1.steps.csv |
    grep -v "^phase\|^kv_wait\|^load\|^issue_lag\|^end_\|share of\|kv_wait\|gap "
}
el "J2: FIN and its options against the default (default ms / option ms)"
for v in fin finlazy finahead finboth; do
  timeout 100 $H --cubins build-w/examples --bench $S --only J2 --reps 10 --ab build-w/examples/ab_bwd/$v 2>&1 | grep "^ab\|FAIL\|rror"
done
el "the 256 windows (J1, J2): the same"
for v in fin finlazy finahead finboth; do
  timeout 100 $H --cubins build-w/examples --bench $S --only J1,J2 --window 256 --reps 10 --ab build-w/examples/ab_var/$v 2>&1 |
    grep "^ab\|FAIL\|rror"
done
el "J2 and the J1 window: the TIMELINE builds of the default and of FIN (steps' waits)"
for v in tl fintl; do
  timeout 60 $H --cubins build-w/examples --bench $S --only J2 --reps 2 --ab build-w/examples/ab_bwd/$v \
    --timeline $OUT/$v 2>&1 | grep "^ab\|FAIL\|rror"
  echo "-- J2 $v"; tl $OUT/$v.J2
  timeout 60 $H --cubins build-w/examples --bench $S --only J1 --window 256 --reps 2 --ab build-w/examples/ab_var/$v \
    --timeline $OUT/w$v 2>&1 | grep "^ab\|FAIL\|rror"
  echo "-- J1 window $v"; tl $OUT/w$v.J1
done
el "J1 and D8k (80-row steps): the TIMELINE build, its consumers' waits (stamped since 8c619c4)"
timeout 90 $H --cubins build-w/examples --bench $S --only J1,D8k --reps 2 --ab build-w/examples/ab_bwd/tl \
  --timeline $OUT/tl 2>&1 | grep "^ab\|FAIL\|rror"
for s in J1 D8k; do echo "-- $s tl"; tl $OUT/tl.$s; done
rm -f $OUT/*.csv
el "J2 again (second round)"
for v in fin finlazy finahead finboth; do
  timeout 100 $H --cubins build-w/examples --bench $S --only J2 --reps 10 --ab build-w/examples/ab_bwd/$v 2>&1 | grep "^ab\|FAIL\|rror"
done
el done
