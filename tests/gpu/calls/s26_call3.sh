#!/bin/bash
# session 26, call 3: LSE_EARLY (the rows' LSE, and with 2 also Delta, read from shared memory before
# the waits for S^T and dP^T; e1tb: e1 without the warpgroup barrier that both warpgroups' named barrier
# covers): small cases, then each build interleaved beside the default (e1, e1tb on every suite, e2 on
# J4 and J2); ncu --set full of J3's main kernel (carry build-wx)
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
[ -d build-w ] || tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
B=build-w OUT=$OUT AB_BWD="e1 e1tb" ONLY=J4,J2,J1,D8k,J3 TBENCH=300 sh tests/gpu/jfa_bwd.sh ab 2>&1 | grep -v "^      fwd\|^suite"
el "e2"
B=build-w OUT=$OUT AB_BWD="e2" ONLY=J4,J2 TBENCH=120 sh tests/gpu/jfa_bwd.sh ab 2>&1 | grep -v "^      fwd\|^suite"
el "ncu J3"
B=build-w OUT=$OUT/prof SUITES="J3" KERNEL=bwd TPROF=120 bash tests/gpu/profile.sh 2>&1 | tail -n 22
cd $OUT && tar czf prof.tgz prof; rm -rf prof
el done
