#!/bin/bash
# session 32, call 2 (carry build-wx at 19c0bd1 and build-old: 588c686's jfa_bwd_host, d128 block-sparse and
# jfa_bwd_pre cubins): OWN with block skips (19c0bd1) against the zeroed accumulator, J2 and J1 at 100, 50 and
# 25 % of the blocks, backward, new and old alternating (same masks: the bench's seed); the plain J2 for
# reference; the block-sparse small cases first (forward and backward, float64 checks)
set -u
. tests/gpu/calls/lib.sh
S=build-w/shared-bench/suites
rm -rf build-wo && cp -r build-w/examples build-wo && cp build-old/*.cubin build-wo/
el "block-sparse small cases (new)"
timeout 60 build-w/examples/jfa_bwd_host --cubins build-w/examples --check --small --blocksparse > $OUT/bs_bwd.txt 2>&1
echo "bwd rc=$? $(grep -c ' OK$' $OUT/bs_bwd.txt) OK"; grep -v " OK$" $OUT/bs_bwd.txt | tail -3
timeout 60 build-w/examples/jfa_host --cubins build-w/examples --check --small --blocksparse > $OUT/bs_fwd.txt 2>&1
echo "fwd rc=$? $(grep -c ' OK$' $OUT/bs_fwd.txt) OK"; grep -v " OK$" $OUT/bs_fwd.txt | tail -3
run() { # NAME HOST CUBINS ARGS...
  local n=$1 h=$2 c=$3; shift 3
  echo "-- $n $*"; timeout 60 $h --cubins $c --bench $S --reps 10 "$@" 2>&1 | grep "^J\|FAIL\|rror"
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
