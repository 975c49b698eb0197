#!/bin/sh
# tests/gpu/ab_triton.sh - an interleaved A/B of two tutorial bundles beside
# Triton (bench_triton.sh on each, new / old / new, Triton timed in every
# run): NEW and OLD are `make tutorials-bundle` outputs of two commits (the
# old one from a worktree: git worktree add /tmp/old REV; make -C /tmp/old
# tutorials-bundle; cp -r /tmp/old/build-tut build-tut-old). Both travel to
# the GPU machine by `carry` (about 17 MB each).
#   NEW=build-tut OLD=build-tut-old ONLY=attn_fwd QUICK= CTX=1024 OUT=$OUT sh tests/gpu/ab_triton.sh
# (CTX: the attention cases' sequence lengths, bench_triton.py --attn-ctx)
set -u
NEW=${NEW:-build-tut} OLD=${OLD:-build-tut-old} ONLY=${ONLY:-attn_fwd} QUICK=${QUICK:-} CTX=${CTX:-}
OUT=${OUT:-ab-logs}
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader 2>/dev/null
for r in new old new2; do
  b=$NEW; [ $r = old ] && b=$OLD
  echo "=== $r: $b ($ONLY)"
  mkdir -p "$OUT/$r"
  B=$b OUT=$OUT/$r sh tests/gpu/bench_triton.sh $QUICK ${CTX:+--attn-ctx $CTX} --only "$ONLY" 2>&1 |
    grep -E "$(echo "$ONLY" | tr , '|')|FAIL|rror"
done
