#!/bin/bash
# session 24, call 1: unpack; stash FA4's first half for call 2; the rest of the full check (deterministic,
# shipped Q80); q80c on J2 and bulk on J2,J3 interleaved with the default; sanitizers on both at 7 CTAs
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
tar xJf build-wx/w.tar.xz && mkdir -p /tmp/fa4 && cp build-fa4a/part.aa /tmp/fa4/ && echo "fa4 part.aa stashed"
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
H=build-w/examples/jfa_bwd_host
el "det check (shipped)"
timeout 170 $H --cubins build-w/examples --check --det --no-det-variants > $OUT/det_check.txt 2>&1; echo "rc=$? OK=$(grep -c ' OK$' $OUT/det_check.txt)"
grep -v " OK$" $OUT/det_check.txt | grep -v "^error:\|^target\|^(no" | tail -n 5
el "q80c J2"
B=build-w OUT=$OUT AB_BWD=q80c ONLY=J2 TSMALL=60 TBENCH=90 sh tests/gpu/jfa_bwd.sh ab 2>&1 | tail -n 5
el "bulk J2,J3"
B=build-w OUT=$OUT AB_BWD=bulk ONLY=J2,J3 TSMALL=60 TBENCH=100 sh tests/gpu/jfa_bwd.sh ab 2>&1 | tail -n 6
for d in q80c bulk; do for tool in racecheck synccheck; do
  left=$(( 545 - ($(date +%s) - t0) )); [ $left -gt 50 ] || break 2
  el "$d $tool ($left s left)"
  timeout $(( left < 80 ? left - 5 : 75 )) compute-sanitizer --tool $tool --error-exitcode 9 $H --cubins build-w/examples/ab_bwd/$d --check --small --ctas 7 > $OUT/${d}_$tool.txt 2>&1
  echo "rc=$?"; tail -n 1 $OUT/${d}_$tool.txt
done; done
el done
