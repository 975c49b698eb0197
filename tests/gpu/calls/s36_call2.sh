#!/bin/bash
# session 36, call 2 (carry build-wx, scripts/gpu_slim_bundle.sh at the commit of call 1): programmatic dependent
# launch on JFA (pre / main / post, forward / combine with pdl(true)) against the same cubins launched the plain way
# (TILE_PDL=0), interleaved pdl / plain / pdl on every suite.
set -u
. tests/gpu/calls/lib.sh
H=build-w/examples/jfa_bwd_host; F=build-w/examples/jfa_host; S=build-w/shared-bench/suites
el "JFA backward and forward, every suite: pdl / plain / pdl"
for r in pdl plain pdl2; do
  p=1; [ $r = plain ] && p=0
  echo "=== $r (TILE_PDL=$p)"
  TILE_PDL=$p timeout 150 $H --cubins build-w/examples --bench $S --only J1,J2,J3,J4,D8k --reps 10 2>&1 | grep "^J\|^D\|FAIL\|rror"
  TILE_PDL=$p timeout 100 $F --cubins build-w/examples --bench $S --only J1,J2,J3,J4,D8k --reps 10 2>&1 | grep "^J\|^D\|FAIL\|rror"
done
el done
