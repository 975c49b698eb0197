#!/bin/bash
# session 27, call 4 (carry build-wx: the shipped build with FUSE_POST on, and the A/B builds nofp and st4):
# the shipped backward's full float64 check (the D = 64 variants now FP too), memcheck, racecheck (tests/gpu/racecheck_bulk.py on its report) and synccheck at 7 CTAs;
# J3 beside nofp (a third FP measurement) and st4 (STAGES = 4 at head dim 64)
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
[ -d build-w ] || tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
H=build-w/examples/jfa_bwd_host
el "J3: nofp, st4 beside the shipped"
B=build-w OUT=$OUT AB_BWD="nofp st4" ONLY=J3 TBENCH=100 sh tests/gpu/jfa_bwd.sh ab 2>&1 | grep "^ab \|exit\|FAIL"
for tool in memcheck racecheck synccheck; do
  el "shipped $tool"
  timeout 75 compute-sanitizer --tool $tool --error-exitcode 9 $H --cubins build-w/examples --check --small --ctas 7 > $OUT/shipped_$tool.txt 2>&1
  echo "rc=$?"; tail -n 1 $OUT/shipped_$tool.txt
done
python3 tests/gpu/racecheck_bulk.py $OUT/shipped_racecheck.txt examples; echo "racecheck_bulk rc=$?"
el "shipped full check"
timeout 330 $H --cubins build-w/examples --check > $OUT/check.txt 2>&1
echo "rc=$?"; grep -v " OK$" $OUT/check.txt | tail -n 12; grep -c " OK$" $OUT/check.txt
el done
