#!/bin/bash
# session 34, call 3 (carry build-tut with vector_add.s16.v{a,b,c,d}.sm_90a.cubin, assembled here by
# `ptxas -arch=sm_90a -lineinfo` from tests/gpu/calls/va/*.ptx: va tilec's PTX unchanged (the control), vb without
# the warp index's redux.sync, vc also with .reqntid instead of .maxntid, vd .reqntid only): what makes vector_add
# at 2^20 0.93x Triton, five alternating rounds
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
TBENCH=${TBENCH:-240} B=build-tut OUT=$OUT/va sh tests/gpu/bench_triton.sh --only vector_add --rounds 5
