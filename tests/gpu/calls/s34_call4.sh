#!/bin/bash
# session 34, call 4 (carry build-ring: layernorm_bwd_host, layernorm_host and ring cubins built here): the rings
# on the hardware, against float64 (random sizes, columns a multiple of 16), then compute-sanitizer memcheck,
# racecheck and synccheck at small sizes
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
E=build-ring/examples
nvidia-smi --query-gpu=name --format=csv,noheader
run() { log=$OUT/$1.log; shift; "$@" > "$log" 2>&1; rc=$?; echo "rc=$rc $(grep -c ' OK$' "$log") OK, $(grep -vc ' OK$' "$log") other: $*"; grep -v ' OK$' "$log" | head -3; }
run r1024 $E/layernorm_bwd_host --cubin $E/layernorm_bwd.f16.b1024.s16.sm_90a.cubin --size 4096 --size 1008 --size 256 --seed 1
run r1024b $E/layernorm_bwd_host --cubin $E/layernorm_bwd.f16.b1024.s16.sm_90a.cubin --size 333 --size 16 --size 7 --seed 2
run r8k $E/layernorm_bwd_host --cubin $E/lnb.ring8k.sm_90a.cubin --size 1000 --size 8000 --size 128 --seed 3
run r16k $E/layernorm_bwd_host --cubin $E/lnb.ring1.sm_90a.cubin --size 500 --size 15872 --size 132 --seed 4
run ln $E/layernorm_host --cubin $E/ln.ring3.sm_90a.cubin --size 3000 --size 8000 --seed 5
for tool in memcheck racecheck synccheck; do
  for c in "layernorm_bwd.f16.b1024.s16 --size 37 --size 1008 --size 5" "lnb.ring1 --size 9 --size 15872 --size 3" \
           "lnb.ring8k --size 20 --size 8000 --size 4"; do
    set -- $c
    cub=$1; shift
    compute-sanitizer --tool $tool --error-exitcode 9 $E/layernorm_bwd_host --cubin $E/$cub.sm_90a.cubin "$@" \
      > $OUT/san.$tool.$cub.log 2>&1
    echo "$tool $cub: rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $OUT/san.$tool.$cub.log | head -1)"
  done
  compute-sanitizer --tool $tool --error-exitcode 9 $E/layernorm_host --cubin $E/ln.ring3.sm_90a.cubin --size 5 \
    --size 3008 > $OUT/san.$tool.ln.log 2>&1
  echo "$tool ln.ring3: rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $OUT/san.$tool.ln.log | head -1)"
done
