#!/bin/bash
# session 35, call 2 (carry build-tut at this commit and build-tut-old at 7fdb248): the row kernels with the
# reductions' scratch tracked (two barriers a row where there were four; lower_core.c lw_scr_claim) against the
# old compiler (lower_reduce.c: one barrier a row in layernorm_bwd_dx where there were four), new / old / new beside
# Triton; only the default builds (LNB_VARIANTS=.split: rows of 16384)
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LNB_VARIANTS=.split TBENCH=${TBENCH:-150} NEW=build-tut OLD=build-tut-old ONLY=layernorm_bwd,softmax OUT=$OUT \
  sh tests/gpu/ab_triton.sh
