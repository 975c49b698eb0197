#!/bin/sh
# tests/gpu/bench_triton.sh - Tile's versions of Triton's tutorials beside
# the Triton originals (tests/gpu/bench_triton.py: one process, do_bench on
# both sides, outputs checked against each other and PyTorch), on the GPU
# machine. Build here with `make tutorials-bundle` (build-tut: the cubins and
# libtilert.so.0, a few MB) or `make gpu-bundle` (build-gpu), carry it, run
#   B=build-tut OUT=$OUT sh tests/gpu/bench_triton.sh [--quick] [--only attn_fwd,...] [--autotune full]
# Logs, the markdown table and JSON in $OUT (bench_triton.{log,md,json});
# prints the table last. Without PyTorch, Triton or a GPU: a SKIP line, exit 0.
set -u
B=${B:-build}
OUT=${OUT:-$B/gpu-logs}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
if [ ! -e "$B/lib/libtilert.so.0" ]; then
  echo "FAIL bench_triton: $B/lib/libtilert.so.0 is missing (make tutorials-bundle, then B=build-tut)"
  exit 2
fi
TILE_LIB_DIR=$(cd "$B/lib" && pwd)
export TILE_LIB_DIR
unset TILE_INTERPRET TRITON_INTERPRET
# the whole run within the machine's 10 minutes (the Triton side compiles
# and autotunes first): TBENCH seconds, then whatever was measured is kept
PYTHONUNBUFFERED=1 timeout "${TBENCH:-560}" "$PY" -W ignore tests/gpu/bench_triton.py --build "$B" --out "$OUT" "$@" \
  > "$OUT/bench_triton.log" 2>&1
rc=$?
if [ $rc = 124 ]; then
  echo "bench_triton: timed out after ${TBENCH:-560} s (partial log in $OUT/bench_triton.log); what was measured:"
  cat "$OUT/bench_triton.md" 2>/dev/null
fi
grep -E "^(SKIP|FAIL) |^bench_triton:|ERROR" "$OUT/bench_triton.log" | head -20
if grep -q "^| kernel" "$OUT/bench_triton.log"; then
  sed -n '/^| kernel/,$p' "$OUT/bench_triton.log"
elif [ $rc != 0 ]; then
  tail -n 30 "$OUT/bench_triton.log"
fi
exit $rc
