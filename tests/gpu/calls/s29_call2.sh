#!/bin/bash
# session 29, call 2 (carry build-wx build-fa4a; call 3 follows on the warm machine): OWN now the default (causal
# and windows at D = 128): the shipped small cases; the shipped build beside noown on J2 and on the 256 window
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
mkdir -p /tmp/fa4 && cp build-fa4a/part.aa /tmp/fa4/
[ -d build-w ] || tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
H=build-w/examples/jfa_bwd_host; S=build-w/shared-bench/suites
el "shipped: small cases"
timeout 60 $H --cubins build-w/examples --check --small > $OUT/small.txt 2>&1
echo "rc=$? $(grep -c ' OK$' $OUT/small.txt) OK"; grep -v " OK$" $OUT/small.txt | grep -v "^target\|^(no" | tail -n 4
el "J2: default (own) ms / noown ms"
timeout 80 $H --cubins build-w/examples --bench $S --only J2 --ab build-w/examples/ab_bwd/noown --reps 20 2>&1 | grep "^J2\|^ab\|FAIL"
el "window 256, J1: default (own) ms / noown ms"
timeout 80 $H --cubins build-w/examples --bench $S --only J1 --window 256 --ab build-w/examples/ab_var/noown --reps 20 2>&1 | grep "^J1\|^ab\|FAIL"
el done
