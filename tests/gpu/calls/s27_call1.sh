#!/bin/bash
# session 27, call 1 (s26_call5 as it was, plus FA4's first half to /tmp/fa4; carry build-wx build-fa4a): FP again, its earlier sum now loaded into the dQ stage by the reducer (bulk_load) ahead
# of the step: small cases, interleaved beside the default on J3 and J2 (the control), memcheck, racecheck and
# synccheck at 7 CTAs on the fp build (carry build-wx); ncu --set full of D8k's main kernel
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
mkdir -p /tmp/fa4 && cp build-fa4a/part.aa /tmp/fa4/
[ -d build-w ] || tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
FP=build-w/examples/ab_bwd/fp
B=build-w OUT=$OUT AB_BWD=fp ONLY=J3,J2 TBENCH=100 sh tests/gpu/jfa_bwd.sh ab 2>&1 | grep -v "^      fwd\|^suite"
for tool in memcheck racecheck synccheck; do
  el "fp $tool"
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 build-w/examples/jfa_bwd_host --cubins $FP --check --small --ctas 7 > $OUT/fp_$tool.txt 2>&1
  echo "rc=$?"; tail -n 1 $OUT/fp_$tool.txt
done
el "ncu D8k (the shipped kernel)"
B=build-w OUT=$OUT/prof SUITES="D8k" KERNEL=bwd TPROF=150 bash tests/gpu/profile.sh 2>&1 | tail -n 40
(cd $OUT && tar czf prof.tgz prof && rm -rf prof)
el done
