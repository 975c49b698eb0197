#!/bin/bash
# session 27, call 4 (carry build-wx: the shipped build with FUSE_POST on, and the A/B build st4), trimmed
# to the device time left: J3 beside st4 (STAGES = 4 at head dim 64); memcheck and racecheck
# (tests/gpu/racecheck_bulk.py on its report) at 7 CTAs on the shipped build; its full float64 check without
# the variants' deterministic cases (the D = 64 variants are FP now; deterministic builds never are)
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
[ -d build-w ] || tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
H=build-w/examples/jfa_bwd_host
el "J3: st4 beside the shipped"
B=build-w OUT=$OUT AB_BWD="st4" ONLY=J3 TBENCH=60 sh tests/gpu/jfa_bwd.sh ab 2>&1 | grep "^ab \|exit\|FAIL"
for tool in memcheck racecheck; do
  el "shipped $tool"
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $H --cubins build-w/examples --check --small --ctas 7 > $OUT/shipped_$tool.txt 2>&1
  echo "rc=$?"; tail -n 1 $OUT/shipped_$tool.txt
done
python3 tests/gpu/racecheck_bulk.py $OUT/shipped_racecheck.txt examples; echo "racecheck_bulk rc=$?"
el "shipped full check (no deterministic variants)"
timeout 240 $H --cubins build-w/examples --check --no-det-variants > $OUT/check.txt 2>&1
echo "rc=$?"; grep -v " OK$" $OUT/check.txt | tail -n 12; grep -c " OK$" $OUT/check.txt
el done
