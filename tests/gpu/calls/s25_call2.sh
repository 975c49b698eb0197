#!/bin/bash
# session 25, call 2: two K/V buffers at head dim 64 (KVB = 2, the new default) against one (kvb1) and
# with the deferred K/V release (defer), interleaved on J3; the small cases; racecheck and synccheck of
# the new default at 7 CTAs; ncu of J3's new main kernel and of J4's
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
el "shipped small"
B=build-w OUT=$OUT TSMALL=60 sh tests/gpu/jfa_bwd.sh small 2>&1 | tail -n 3
for ab in kvb1 defer; do
  el "ab $ab J3"
  B=build-w OUT=$OUT AB_BWD=$ab ONLY=J3 TSMALL=60 TBENCH=80 sh tests/gpu/jfa_bwd.sh ab 2>&1 | tail -n 5
done
for tool in racecheck synccheck; do
  el "default $tool"
  timeout 70 compute-sanitizer --tool $tool --error-exitcode 9 build-w/examples/jfa_bwd_host --cubins build-w/examples --check --small --ctas 7 > $OUT/def_$tool.txt 2>&1
  echo "rc=$?"; tail -n 1 $OUT/def_$tool.txt
done
el "ncu J3 J4"
B=build-w OUT=$OUT/prof SUITES="J3 J4" KERNEL=bwd TPROF=120 bash tests/gpu/profile.sh 2>&1 | grep -E "Duration|L2 Cache|Tensor|Issue Slots|DRAM Through|ncu:"
cd $OUT && tar czf prof.tgz prof 2>/dev/null; rm -rf prof
el done
