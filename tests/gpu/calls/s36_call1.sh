#!/bin/bash
# session 36, call 1 (carry build-wx (scripts/gpu_slim_bundle.sh at this commit) and build-tut (make
# tutorials-bundle)): programmatic dependent launch. pdl(true) is on the tutorials' layernorm_bwd and
# attention-backward kernels and on JFA's pre / main / post and forward / combine kernels; TILE_PDL=0 launches the
# same cubins the plain way. First the PDL launches against float64 and under compute-sanitizer (the RING=4 builds
# too: not sanitized before), then pdl / plain / pdl interleaved beside Triton (call 2: the JFA suites), then the .dw8 A/B rows.
set -u
. tests/gpu/calls/lib.sh
H=build-w/examples/jfa_bwd_host; F=build-w/examples/jfa_host; S=build-w/shared-bench/suites
E=build-tut/examples; LH=build-w/examples/layernorm_bwd_host
run() { log=$OUT/$1.log; shift; "$@" > "$log" 2>&1; rc=$?; echo "rc=$rc $(grep -c ' OK$' "$log") OK, $(grep -vc ' OK$' "$log") other: $*"; grep -v ' OK$' "$log" | grep -v "^target\|^(no" | head -3; }
el "checks with PDL launches"
run bwd_small timeout 60 $H --cubins build-w/examples --check --small
run fwd_small timeout 60 $F --cubins build-w/examples --check --small
run lnb1024 $LH --cubin $E/layernorm_bwd.f16.b1024.s16.sm_90a.cubin --size 4096 --size 1008 --size 256 --seed 1
run lnb8k $LH --cubin $E/layernorm_bwd.f16.b8192.s16.sm_90a.cubin --size 1000 --size 8000 --size 128 --seed 3
el "compute-sanitizer (PDL launches; the RING=4 builds)"
for tool in memcheck racecheck synccheck; do
  for c in "layernorm_bwd.f16.b1024.s16 --size 37 --size 1008 --size 5" "layernorm_bwd.f16.b8192.s16 --size 20 --size 8000 --size 4"; do
    set -- $c
    cub=$1; shift
    compute-sanitizer --tool $tool --error-exitcode 9 $LH --cubin $E/$cub.sm_90a.cubin "$@" \
      > $OUT/san.$tool.$cub.log 2>&1
    echo "$tool $cub: rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $OUT/san.$tool.$cub.log | head -1)"
  done
done
compute-sanitizer --tool memcheck --error-exitcode 9 timeout 120 $H --cubins build-w/examples --check --small \
  > $OUT/san.bwd.log 2>&1
echo "memcheck jfa_bwd small: rc=$? $(grep -h 'ERROR SUMMARY' $OUT/san.bwd.log | head -1)"
el "tutorials beside Triton: pdl / plain / pdl"
for r in pdl plain pdl2; do
  p=1; [ $r = plain ] && p=0
  echo "=== $r (TILE_PDL=$p)"
  mkdir -p $OUT/$r
  TILE_PDL=$p LNB_VARIANTS= TBENCH=110 B=build-tut OUT=$OUT/$r sh tests/gpu/bench_triton.sh --only layernorm_bwd,attn_bwd 2>&1 |
    grep -E "layernorm_bwd|attn_bwd|FAIL|rror"
done
el "layernorm_bwd: the dw/db kernel over 8-column blocks (.dw8) beside the default, one process (PDL on)"
LNB_VARIANTS=.dw8 TBENCH=90 B=build-tut OUT=$OUT/dw8 sh tests/gpu/bench_triton.sh --only layernorm_bwd 2>&1 |
  grep -E "layernorm_bwd|FAIL|rror"
el done
