"""bench_gemm.py - the GEMM benchmark: gemm.tile beside torch.matmul (cuBLAS),
C[M, N] = A[M, K] @ B[N, K]^T, bf16 in, f32 accumulate, bf16 out.

For each shape, ours and cuBLAS are timed alternately, ROUNDS times each
(ours: median of 50 launches by the C host; cuBLAS: median of 20), after a
2-second warm-up that brings the clocks up; the median round is reported.
Interleaving keeps clock and temperature drift from favouring either side.

usage: python3 bench_gemm.py BUILD_DIR [SHAPE ...]   (SHAPE like 8192x8192x8192)
GEMM_JSON=FILE also writes every row as JSON (bench/report.py reads it).
"""
import json, math, os, re, subprocess, sys, time
import torch

B = sys.argv[1]
SHAPES = sys.argv[2:] or ["8192x8192x8192", "2048x2048x2048", "4096x4096x4096", "16384x16384x16384",
                          "8192x8192x2048", "4096x16384x8192", "16384x4096x8192", "2048x16384x16384",
                          "16384x2048x4096", "8192x4096x16384", "16384x16384x4096"]
ROUNDS = 3


def cublas_tflops(a, b):
    def fn():
        torch.matmul(a, b.t())
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(20):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort()
    M, K = a.shape; N = b.shape[0]
    return 2.0 * M * N * K / ts[len(ts) // 2] / 1e9


def ours_tflops(M, N, K):
    out = subprocess.run([B + "/examples/gemm_host", "--cubin", B + "/examples/gemm.sm_90a.cubin",
                          "--size", str(M), "--size", str(N), "--size", str(K), "--bench"],
                         capture_output=True, text=True)
    if out.returncode != 0 or " OK" not in out.stdout:
        print("CORRECTNESS FAILURE:", out.stdout.strip(), out.stderr.strip()[-300:])
        return float("nan")
    m = re.search(r"([\d.]+) TFLOP/s", out.stdout)
    return float(m.group(1))


x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
t0 = time.time()
while time.time() - t0 < 2.0:
    torch.matmul(x, x.t())
torch.cuda.synchronize()
del x

print("%-20s %10s %10s %7s" % ("M x N x K", "ours", "cuBLAS", "ratio"), flush=True)
ratios = []
rows = []
for s in SHAPES:
    M, N, K = map(int, s.split("x"))
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    ours, theirs = [], []
    for _ in range(ROUNDS):
        ours.append(ours_tflops(M, N, K))
        theirs.append(cublas_tflops(a, b))
    ours.sort(); theirs.sort()
    o, t = ours[ROUNDS // 2], theirs[ROUNDS // 2]
    ratios.append(o / t)
    rows.append({"shape": s, "ours_tflops": o, "cublas_tflops": t, "ours_rounds": ours, "cublas_rounds": theirs})
    print("%-20s %10.1f %10.1f %7.3f   (rounds ours %s, cuBLAS %s)" % (
        s, o, t, o / t, "/".join("%.0f" % v for v in ours), "/".join("%.0f" % v for v in theirs)), flush=True)
    del a, b
    torch.cuda.empty_cache()
gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
print("geometric mean of ours/cuBLAS: %.3f over %d shapes (TFLOP/s; interleaved, median of %d rounds)"
      % (gm, len(ratios), ROUNDS))
if os.environ.get("GEMM_JSON"):
    json.dump({"rows": rows, "rounds": ROUNDS}, open(os.environ["GEMM_JSON"], "w"), indent=1)
