#!/bin/bash
# session 34, call 2 (carry build-tut): the Triton-style table (issue 10's proof) with the reciprocal epilogues
# and the ring defaults at 1024 and 2048 columns (layernorm_bwd's .plain, .ring, .ring2, .ring4 A/B rows beside
# each default), every case but matmul (unchanged since session 31's call 5)
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
TBENCH=${TBENCH:-420} B=build-tut OUT=$OUT/full sh tests/gpu/bench_triton.sh \
  --only vector_add,softmax,layernorm,layernorm_bwd,attn_fwd,attn_bwd
