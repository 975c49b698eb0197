#!/bin/bash
# session 26, call 3: LSE_EARLY (the rows' LSE, and with 2 also Delta, read from shared memory before
# the waits for S^T and dP^T; e1tb: e1 without the warpgroup barrier before both warpgroups' one): small cases, then each build interleaved beside the default, every suite
# (carry build-wx)
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
[ -d build-w ] || tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
B=build-w OUT=$OUT AB_BWD="${AB_BWD:-e1 e2 e1tb}" ONLY=${ONLY:-J4,J2,J1,D8k,J3} TBENCH=300 sh tests/gpu/jfa_bwd.sh ab
el done
