#!/bin/bash
# session 27, call 3 (carry build-wx: main's prims and the fp build): does racecheck order a bulk copy's
# writes by the mbarrier it completes on? bulk_ring (tests/gpu/prims: bulk_load into a ring, full/empty
# mbarriers, checked bit for bit) plain, under racecheck and synccheck; the shipped backward under racecheck at
# 7 CTAs (the control); the fp build's full float64 check; J3 and J2 again beside the default
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
[ -d build-w ] || tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
FP=build-w/examples/ab_bwd/fp
P="build-w/tests/test_prims build-w/tests/prims"
el "bulk_ring"; $P bulk_ring; echo rc=$?
for tool in racecheck synccheck; do
  el "bulk_ring $tool"
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $P bulk_ring > $OUT/ring_$tool.txt 2>&1
  echo "rc=$?"; grep -v "^=========     " $OUT/ring_$tool.txt | tail -n 6
done
el "every prim"; $P > $OUT/prims.txt 2>&1; echo rc=$?; grep -c ^PASS $OUT/prims.txt; grep ^FAIL $OUT/prims.txt | head -5
el "shipped racecheck (control)"
timeout 75 compute-sanitizer --tool racecheck --error-exitcode 9 build-w/examples/jfa_bwd_host --cubins build-w/examples --check --small --ctas 7 > $OUT/shipped_racecheck.txt 2>&1
echo "rc=$?"; tail -n 1 $OUT/shipped_racecheck.txt
el "fp full check"
timeout 250 build-w/examples/jfa_bwd_host --cubins $FP --check > $OUT/fp_check.txt 2>&1
echo "rc=$?"; grep -v " OK$" $OUT/fp_check.txt | tail -n 12; grep -c " OK$" $OUT/fp_check.txt
el "fp beside the default"
B=build-w OUT=$OUT AB_BWD=fp ONLY=J3,J2 TBENCH=100 sh tests/gpu/jfa_bwd.sh ab 2>&1 | grep "^ab "
el done
