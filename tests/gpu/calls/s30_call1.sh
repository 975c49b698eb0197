#!/bin/bash
# session 30, call 1 (carry build-wx build-fa4a; call 2 follows on the warm machine): (1) FIN against the shipped build (A/B, interleaved): J2 backward, J1 and J2
# under a 256-key window; FIN's own float64 check at small sizes; (2) a variant's cost against the blocks it
# visits: J1 and J2 under random per-sequence block masks keeping 100, 50 and 25 % of the blocks; (the s28 regression check dropped:
# refused starts left too little budget)
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
[ -d build-w ] || tar xJf build-wx/w.tar.xz
[ -d build-fa4a ] && mkdir -p /tmp/fa4 && cp build-fa4a/part.aa /tmp/fa4/   # (call 2 installs FA4 from it)
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
H=build-w/examples/jfa_bwd_host; S=build-w/shared-bench/suites
el "FIN A/B: J2"
timeout 90 $H --cubins build-w/examples --bench $S --only J2 --reps 20 --ab build-w/examples/ab_bwd/fin 2>&1 | grep "^J\|^ab\|FAIL"
el "FIN A/B: J1, J2 window 256"
timeout 90 $H --cubins build-w/examples --bench $S --only J1,J2 --window 256 --reps 20 --ab build-w/examples/ab_var/fin 2>&1 | grep "^J\|^ab\|FAIL"
el "block masks 100, 50, 25 %"
for P in 100 50 25; do
  timeout 60 $H --cubins build-w/examples --bench $S --only J1,J2 --reps 10 --sparse $P 2>&1 | grep "^J\|TFLOP/s,\|FAIL"
done
el "FIN: check (small)"
timeout 70 $H --cubins build-w/examples/ab_bwd/fin --check --small > $OUT/fin_check.txt 2>&1; echo "rc=$?"
grep -c "ok\|OK" $OUT/fin_check.txt; grep -i "fail\|error" $OUT/fin_check.txt | head
el done
