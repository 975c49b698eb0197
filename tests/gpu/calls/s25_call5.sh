#!/bin/bash
# session 25, call 5 (first of a pair; carries build-fa4a too): FA4's first half stashed in /tmp/fa4;
# the final kernels' full float64 check (every case of --check) and the small cases
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
mkdir -p /tmp/fa4 && cp build-fa4a/part.aa /tmp/fa4/ && echo "fa4 part.aa stashed"
tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
el "small"
B=build-w OUT=$OUT TSMALL=60 sh tests/gpu/jfa_bwd.sh small 2>&1 | tail -n 3
el "full check"
B=build-w OUT=$OUT TCHECK=300 sh tests/gpu/jfa_bwd.sh check 2>&1 | tail -n 8
el done
