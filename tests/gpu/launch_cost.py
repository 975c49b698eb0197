"""tests/gpu/launch_cost.py - what a launch costs on the host: N launches of
a kernel from Python (tile.Kernel's ctypes path, tile_launch) timed on the
host clock, for each cubin given, all on the same tiny matmul (the GPU time
is far below the host time, so the launches queue and the host rate is what
is measured). A kernel with derived parameters (a pipelined dot's TMA
descriptors) pays for building them in tile_launch. A cubin named
vector_add* launches as vector add on 4096 floats, beside Triton's
tutorial add_kernel launched the same way (tests/gpu/triton_tutorials.py)
when Triton imports.

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
    x = torch.randn(4096, device="cuda")
    y = torch.randn_like(x)
    out = torch.empty_like(x)

    def host_us(launch):
        for _ in range(50):
            launch()
        torch.cuda.synchronize()
        best = None
        for _ in range(5):
            n = 2000
            t0 = time.perf_counter()
            for _ in range(n):
                launch()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            us = (t1 - t0) / n * 1e6
            best = us if best is None else min(best, us)
        return best

    for path in sys.argv[1:]:
        if os.path.basename(path).startswith("vector_add"):
            k = tile.Kernel.from_cubin(path, "vector_add")
            us = host_us(lambda: k[(4,)](x, y, out, 4096))
        else:
            k = tile.Kernel.from_cubin(path, "matmul")
            grid = (2,)  # 128 x 256 tiles (matmul.tile's default)
            us = host_us(lambda: k[grid](a, b, c, M, N, K, K, N, N))
        print("%-40s %6.1f us a launch (host, best of 5 x 2000)" % (os.path.basename(path), us))
    try:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import triton_tutorials as tt
        print("%-40s %6.1f us a launch (host, best of 5 x 2000)" % (
            "triton add_kernel (4096 floats)", host_us(lambda: tt.vector_add(x, y, out))))
    except ImportError as e:
        print("no Triton beside it:", e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
