#!/bin/bash
# session 31, call 1 (carry build-wx at 07eb980 and build-old: cc5b879's jfa_host, jfa_bwd_host and d128
# block-sparse cubins): the block mask read as bits (07eb980) against bytes, J2 and J1 at 100, 50, 25 % of
# the blocks, forward and backward, new and old alternating; the plain J2 for reference
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
[ -d build-w ] || tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
S=build-w/shared-bench/suites
rm -rf build-wo && cp -r build-w/examples build-wo && cp build-old/*.cubin build-wo/
run() { # NAME HOSTDIR CUBINS ARGS...
  local n=$1 h=$2 c=$3; shift 3
  echo "-- $n $*"; timeout 60 $h --cubins $c --bench $S --reps 10 "$@" 2>&1 | grep "^J\|TFLOP/s,\|FAIL\|rror"
}
for suite in J2 J1; do
  for P in 100 50 25; do
    el "$suite at $P %"
    run new build-w/examples/jfa_bwd_host build-w/examples --only $suite --sparse $P
    run old build-old/jfa_bwd_host build-wo --only $suite --sparse $P
    run new build-w/examples/jfa_bwd_host build-w/examples --only $suite --sparse $P
  done
done
el "plain J2"
run plain build-w/examples/jfa_bwd_host build-w/examples --only J2
el done
