#!/bin/bash
# tests/gpu/bench_tutorial.sh - the three GEMM steps of docs/tutorial-gemm.md
# at 8192^3 (bf16 in, f32 accumulate), beside torch.matmul in the same run.
set -u
B=${B:-build}
OUT=${OUT:-$B/gpu-logs}
mkdir -p "$OUT"
S=8192
{
  echo "step 1: matmul.tile (dot on mma.sync, masked loads)"
  "$B/examples/matmul_host" --cubin "$B/examples/matmul.sm_90a.cubin" --size $S --size $S --size $S --bench
  echo "step 2: gemm_simple.tile (TMA ring + wgmma, one warpgroup, one tile per CTA)"
  "$B/examples/gemm_host" --cubin "$B/examples/gemm_simple.sm_90a.cubin" --size $S --size $S --size $S --bench
  echo "step 3: gemm.tile (persistent, warp-specialized, two consumer warpgroups)"
  "$B/examples/gemm_host" --cubin "$B/examples/gemm.sm_90a.cubin" --size $S --size $S --size $S --bench
  python3 -c "
import torch
a = torch.randn($S, $S, device='cuda', dtype=torch.bfloat16); b = torch.randn($S, $S, device='cuda', dtype=torch.bfloat16)
for _ in range(3): a @ b.t()
s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True); ts = []
for _ in range(20):
    s.record(); a @ b.t(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
ts.sort(); print('cuBLAS (torch.matmul) %dx%dx%d: %.1f TFLOP/s' % ($S, $S, $S, 2 * $S**3 / ts[10] / 1e9))
"
} > "$OUT/bench_tutorial.log" 2>&1
grep -E "^step|^bench|^cuBLAS|FAIL" "$OUT/bench_tutorial.log"
