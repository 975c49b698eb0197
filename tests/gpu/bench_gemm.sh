#!/bin/bash
# tests/gpu/bench_gemm.sh - the GEMM benchmark: ours (gemm.tile) beside
# torch.matmul (cuBLAS) on the same shapes, in one run on one GPU.
#   C[M, N] = A[M, K] @ B[N, K]^T, bf16 in, f32 accumulate, bf16 out.
# Prints a table (ours, cuBLAS, ratio) and the geometric mean of the ratios.
set -u
B=${B:-build}
OUT=${OUT:-$B/gpu-logs}
mkdir -p "$OUT"
SHAPES=${SHAPES:-"8192x8192x8192 2048x2048x2048 4096x4096x4096 16384x16384x16384 8192x8192x2048 4096x16384x8192 16384x4096x8192 2048x16384x16384 16384x2048x4096 8192x4096x16384 16384x16384x4096"}
log=$OUT/bench_gemm.log
: > "$log"
for s in $SHAPES; do
  IFS=x read -r M N K <<< "$s"
  "$B/examples/gemm_host" --cubin "$B/examples/gemm.sm_90a.cubin" --size $M --size $N --size $K --bench >> "$log" 2>&1
done
python3 - "$log" $SHAPES <<'PY' 2>&1 | tee -a "$log"
import sys, re, math, torch
log, shapes = sys.argv[1], sys.argv[2:]
ours = {}
for line in open(log):
    m = re.match(r"bench gemm (\d+)x(\d+)x(\d+): ([\d.]+) ms, ([\d.]+) TFLOP/s", line)
    if m: ours[tuple(map(int, m.group(1, 2, 3)))] = float(m.group(5))
    if "FAIL" in line: print("CORRECTNESS FAILURE:", line.strip())
def bench(fn, reps=20):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b))
    ts.sort(); return ts[len(ts) // 2]
print("%-20s %10s %10s %7s" % ("M x N x K", "ours", "cuBLAS", "ratio"))
ratios = []
for s in shapes:
    M, N, K = map(int, s.split("x"))
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    ms = bench(lambda: torch.matmul(a, b.t()))
    tf = 2.0 * M * N * K / ms / 1e9
    o = ours.get((M, N, K), float("nan"))
    r = o / tf
    ratios.append(r)
    print("%-20s %10.1f %10.1f %7.3f" % (s, o, tf, r))
    del a, b
    torch.cuda.empty_cache()
gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
print("geometric mean of ours/cuBLAS: %.3f over %d shapes (TFLOP/s, median of 50 launches ours, 20 cuBLAS)" % (gm, len(ratios)))
PY
