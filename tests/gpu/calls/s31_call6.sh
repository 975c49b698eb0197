#!/bin/bash
# session 31, call 6 (carry build-wx at 07eb980+): the 256 window's backward on J1 under Nsight Compute with the
# stall samples by Tile source line (profile.sh SRC=1), then the block-sparse small cases (the mask as bits)
# forward and backward on the GPU
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
[ -d build-w ] || tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
el "block-sparse small cases"
for e in jfa jfa_bwd; do
  timeout 60 build-w/examples/${e}_host --cubins build-w/examples --check --small --blocksparse > $OUT/bs_$e.txt 2>&1
  echo "$e rc=$? $(grep -c ' OK$' $OUT/bs_$e.txt) OK"; grep -v " OK$" $OUT/bs_$e.txt | grep -v "^target" | tail -3
done
el "ncu: the J1 256 window's backward"
SUITES=J1 KERNEL=bwd B=build-w ARGS="--window 256" SRC=1 TPROF=200 OUT=$OUT bash tests/gpu/profile.sh 2>&1 | tail -20
ls -la $OUT | awk '{print $5, $9}'
el done
