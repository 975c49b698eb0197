#!/bin/bash
# session 26, call 1: ROT (an item's unmasked query blocks in a rotated order) on the GPU: its small
# cases, then interleaved beside the default on J4, J1, D8k and J3 (J3's items are all GROUP's, which
# ROT leaves in order: the control); ncu --set full of J4's main kernel; FA4's first half to /tmp/fa4
# (carry build-wx build-fa4a)
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
mkdir -p /tmp/fa4 && cp build-fa4a/part.aa /tmp/fa4/
tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
el "rot"
B=build-w OUT=$OUT AB_BWD=rot ONLY=J4,J1,D8k,J3 TBENCH=300 sh tests/gpu/jfa_bwd.sh ab
el "ncu J4"
B=build-w OUT=$OUT/prof SUITES="J4" KERNEL=bwd TPROF=150 bash tests/gpu/profile.sh 2>&1 | tail -n 40
cd $OUT && tar czf prof.tgz prof; rm -rf prof
el done
