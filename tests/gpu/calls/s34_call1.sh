#!/bin/bash
# session 34, call 1 (carry build-tut with the .ring builds, and build-tut-div: call 2 of session 33's cubins,
# the attention forward and softmax with the per-element division): layernorm_bwd's f16 rows through cp.async
# rings (compiler/pipeline_rows.c) against the default builds, beside Triton; then session 33's call 6, the
# reciprocal epilogues' A/B at 1024 tokens (new / old / new)
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
t0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
TBENCH=${TBENCH:-200} B=build-tut OUT=$OUT/lnb sh tests/gpu/bench_triton.sh --only layernorm,layernorm_bwd
echo "== $(( $(date +%s) - t0 )) s"
NEW=build-tut OLD=build-tut-div ONLY=attn_fwd,softmax CTX=1024 OUT=$OUT/ab timeout ${TAB:-330} sh tests/gpu/ab_triton.sh
echo "== $(( $(date +%s) - t0 )) s"
