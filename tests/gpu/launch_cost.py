"""tests/gpu/launch_cost.py - what a launch costs on the host: N launches of
a kernel from Python (tile.Kernel's ctypes path, tile_launch) timed on the
host clock, for each cubin given, all on the same tiny matmul (the GPU time
is far below the host time, so the launches queue and the host rate is what
is measured). A kernel with derived parameters (a pipelined dot's TMA
descriptors) pays for building them in tile_launch.

    python3 tests/gpu/launch_cost.py CUBIN [CUBIN ...]
"""
import os
import sys
import time


def main():
    import torch
    import tile
    M = N = K = 256
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    for path in sys.argv[1:]:
        k = tile.Kernel.from_cubin(path, "matmul")
        grid = (2,)  # 128 x 256 tiles (matmul.tile's default)
        for _ in range(50):
            k[grid](a, b, c, M, N, K, K, N, N)
        torch.cuda.synchronize()
        best = None
        for _ in range(5):
            n = 2000
            t0 = time.perf_counter()
            for _ in range(n):
                k[grid](a, b, c, M, N, K, K, N, N)
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            us = (t1 - t0) / n * 1e6
            best = us if best is None else min(best, us)
        print("%-40s %6.1f us a launch (host, best of 5 x 2000)" % (os.path.basename(path), best))
    return 0


if __name__ == "__main__":
    sys.exit(main())
