#!/bin/bash
# session 26, call 4 (first of a pair; carry build-wx build-fa4a): FP (a grouped item's last KV block
# writes dQ itself, jfa_bwd_post leaves those blocks alone) on the GPU: its small cases, interleaved
# beside the default on J3 (D = 64: every item GROUP's) and J2 (D = 128: the control, FP is off there);
# memcheck, racecheck, synccheck at 7 CTAs and the full float64 check, all on the fp build; FA4's first
# half stashed in /tmp/fa4
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
mkdir -p /tmp/fa4 && cp build-fa4a/part.aa /tmp/fa4/ && echo "fa4 part.aa stashed"
[ -d build-w ] || tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
FP=build-w/examples/ab_bwd/fp
B=build-w OUT=$OUT AB_BWD=fp ONLY=J3,J2 TBENCH=120 sh tests/gpu/jfa_bwd.sh ab 2>&1 | grep -v "^      fwd\|^suite"
for tool in memcheck racecheck synccheck; do
  el "fp $tool"
  timeout 75 compute-sanitizer --tool $tool --error-exitcode 9 build-w/examples/jfa_bwd_host --cubins $FP --check --small --ctas 7 > $OUT/fp_$tool.txt 2>&1
  echo "rc=$?"; tail -n 1 $OUT/fp_$tool.txt
done
el "fp full check"
timeout 250 build-w/examples/jfa_bwd_host --cubins $FP --check > $OUT/fp_check.txt 2>&1
echo "rc=$?"; grep -v " OK$" $OUT/fp_check.txt | tail -n 12; grep -c " OK$" $OUT/fp_check.txt
el done
