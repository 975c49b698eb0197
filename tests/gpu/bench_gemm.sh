#!/bin/bash
# tests/gpu/bench_gemm.sh - the GEMM benchmark beside cuBLAS (bench_gemm.py).
set -u
B=${B:-build}
OUT=${OUT:-$B/gpu-logs}
mkdir -p "$OUT"
PYTHONUNBUFFERED=1 python3 tests/gpu/bench_gemm.py "$B" $* 2>&1 | tee "$OUT/bench_gemm.log"
