#!/bin/bash
# session 33, call 3 (carry build-wx): compute-sanitizer's memcheck, racecheck and synccheck on the
# block-sparse backward's small cases (OWN with block skips, 19c0bd1: owed since the thirty-second session)
set -u
. tests/gpu/calls/lib.sh
H=build-w/examples/jfa_bwd_host
for tool in memcheck racecheck synccheck; do
  el "compute-sanitizer $tool, block-sparse small cases"
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $H --cubins build-w/examples --check --small --blocksparse \
    > $OUT/bs_san_$tool.txt 2>&1
  r=$?; echo "$tool rc=$r $(grep -c ' OK$' $OUT/bs_san_$tool.txt) OK"; tail -n 3 $OUT/bs_san_$tool.txt
  [ $tool = racecheck ] && [ $r = 9 ] && python3 tests/gpu/racecheck_bulk.py $OUT/bs_san_$tool.txt examples && echo "racecheck: only the bulk-copy pairs racecheck cannot order"
done
el done
