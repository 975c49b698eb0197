#!/bin/bash
# session 33, call 6 (not run in the session: no device time left; carry build-tut at 0f8dc9c or later and
# build-tut-div, call 2's build-tut kept aside): the tutorial forward's and softmax's reciprocal epilogues
# against the per-element division, new / old / new beside Triton, the attention at 1024 tokens only; then,
# on an H200 with time left, the whole Triton-style table (issue 10's proof) with the wide stores
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
NEW=build-tut OLD=build-tut-div ONLY=attn_fwd,softmax CTX=1024 OUT=$OUT/ab sh tests/gpu/ab_triton.sh
[ "${FULL:-0}" = 1 ] && TBENCH=${TBENCH:-400} B=build-tut OUT=$OUT/full sh tests/gpu/bench_triton.sh \
  --only vector_add,softmax,layernorm,layernorm_bwd,attn_fwd,attn_bwd
