#!/bin/bash
# session 30, call 2 (carry build-wx): after call 1 -- (1) block-sparse with empty tiles costing one block
# (J2 at 100, 50, 25 % of the blocks, forward and backward); (2) deterministic mode by FIN (DET_FIN) on J2 and
# the J1 256 window, the det column against the default; (3) the deterministic causal small cases on the GPU,
# bitwise repeated (cut to fit the 308 s of budget left)
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
[ -d build-w ] || tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
H=build-w/examples/jfa_bwd_host; S=build-w/shared-bench/suites
el "block masks 100, 50, 25 %"
for P in 100 50 25; do
  timeout 40 $H --cubins build-w/examples --bench $S --only J2 --reps 10 --sparse $P 2>&1 | grep "^J\|TFLOP/s,\|FAIL"
done
el "deterministic: J2"
timeout 40 $H --cubins build-w/examples --bench $S --only J2 --reps 10 2>&1 | grep "^J\|TFLOP/s,\|FAIL"
el "deterministic: window 256, J1"
timeout 40 $H --cubins build-w/examples --bench $S --only J1 --window 256 --reps 10 2>&1 | grep "^J\|TFLOP/s,\|FAIL"
el "deterministic small cases (causal, window)"
timeout 40 $H --cubins build-w/examples --check --small --det --case "causal" > $OUT/det.txt 2>&1; echo "rc=$? $(grep -c ' OK$' $OUT/det.txt) OK"
grep -v " OK$" $OUT/det.txt | grep -v "^target\|^(no" | tail -n 4
el done
