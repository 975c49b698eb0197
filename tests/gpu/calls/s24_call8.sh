#!/bin/bash
# session 24, call 8: broadcast-Q's dQ by bulk adds (bbulk) on J4 interleaved with the default; the shipped small
# cases (the small kernels' new layout 2); racecheck and synccheck on bbulk at 7 CTAs
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
el "shipped small"
B=build-w OUT=$OUT TSMALL=60 sh tests/gpu/jfa_bwd.sh small 2>&1 | tail -n 3
el "bbulk J4"
B=build-w OUT=$OUT AB_BWD=bbulk ONLY=J4 TSMALL=60 TBENCH=80 sh tests/gpu/jfa_bwd.sh ab 2>&1 | grep "^ab\|^J4\|ALL\|FAIL\|exit"
for tool in racecheck synccheck; do
  left=$(( 280 - ($(date +%s) - t0) )); [ $left -gt 40 ] || break
  el "bbulk $tool ($left s)"
  timeout $(( left < 70 ? left - 5 : 65 )) compute-sanitizer --tool $tool --error-exitcode 9 build-w/examples/jfa_bwd_host --cubins build-w/examples/ab_bwd/bbulk --check --small --ctas 7 > $OUT/bbulk_$tool.txt 2>&1
  echo "rc=$?"; tail -n 1 $OUT/bbulk_$tool.txt
done
el done
