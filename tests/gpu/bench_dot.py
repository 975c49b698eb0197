"""tests/gpu/bench_dot.py - the Triton-style matmul (examples/matmul/matmul.tile,
`dot` in a K loop, pipelined by the compiler) beside Triton's tutorial
matmul, torch.matmul (cuBLAS) and in one process, with Triton's own timing
(triton.testing.do_bench, median). Checks Tile's output against torch's
(bf16 in, f32 accumulate) before timing. Run by tests/gpu/dot.sh.

    python3 tests/gpu/bench_dot.py CUBIN [M,N,K ...]
"""
import sys


def triton_matmul():
    import triton
    import triton.language as tl

    # Triton's tutorial 03 kernel (our own transcription of its algorithm),
    # autotuned over its Hopper configurations.
    configs = [
        triton.Config({"BM": 128, "BN": 256, "BK": 64, "G": 8}, num_stages=3, num_warps=8),
        triton.Config({"BM": 128, "BN": 256, "BK": 64, "G": 8}, num_stages=4, num_warps=8),
        triton.Config({"BM": 256, "BN": 128, "BK": 64, "G": 8}, num_stages=3, num_warps=8),
        triton.Config({"BM": 128, "BN": 128, "BK": 64, "G": 8}, num_stages=4, num_warps=4),
        triton.Config({"BM": 128, "BN": 128, "BK": 128, "G": 8}, num_stages=3, num_warps=8),
    ]

    @triton.autotune(configs=configs, key=["M", "N", "K"])
    @triton.jit
    def mm(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
           G: tl.constexpr):
        pid = tl.program_id(0)
        npm = tl.cdiv(M, BM)
        npn = tl.cdiv(N, BN)
        per_group = G * npn
        gid = pid // per_group
        first_m = gid * G
        gsize = min(npm - first_m, G)
        pm = first_m + (pid % per_group) % gsize
        pn = (pid % per_group) // gsize
        rm = (pm * BM + tl.arange(0, BM)) % M
        rn = (pn * BN + tl.arange(0, BN)) % N
        rk = tl.arange(0, BK)
        pa = a + rm[:, None] * sam + rk[None, :] * sak
        pb = b + rk[:, None] * sbk + rn[None, :] * sbn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            x = tl.load(pa, mask=rk[None, :] < K - k * BK, other=0.0)
            y = tl.load(pb, mask=rk[:, None] < K - k * BK, other=0.0)
            acc = tl.dot(x, y, acc)
            pa += BK * sak
            pb += BK * sbk
        cm = pm * BM + tl.arange(0, BM)
        cn = pn * BN + tl.arange(0, BN)
        tl.store(c + cm[:, None] * scm + cn[None, :] * scn, acc.to(tl.bfloat16), mask=(cm[:, None] < M) & (cn[None, :] < N))

    def run(a, b):
        M, K = a.shape
        _, N = b.shape
        import torch
        c = torch.empty((M, N), device=a.device, dtype=torch.bfloat16)
        grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)
        mm[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
        return c

    return run


def main():
    import os
    import torch
    import tile
    from triton.testing import do_bench

    cubin = sys.argv[1]
    shapes = [tuple(int(x) for x in s.split(",")) for s in sys.argv[2:]] or [(4096, 4096, 4096), (8192, 8192, 8192)]
    k = tile.Kernel.from_cubin(cubin, "matmul")
    # DOT_CUBIN2: the same kernel built with -D 'K=multiple_of(16)' -D
    # 'N=multiple_of(16)', what Triton's JIT assumes of arguments divisible
    # by 16 (its own column; used only on shapes that are)
    k2 = tile.Kernel.from_cubin(os.environ["DOT_CUBIN2"], "matmul") if os.environ.get("DOT_CUBIN2") else None
    import os
    # matmul.tile's defaults (the cubin tilec built with no -D), else what the cubin was built with
    BM, BN = int(os.environ.get("DOT_BM", 128)), int(os.environ.get("DOT_BN", 256))
    tri = triton_matmul()
    try:
        from triton.testing import do_bench_cudagraph
    except ImportError:
        do_bench_cudagraph = None
    print("TFLOP/s, median of triton.testing.do_bench (L2 flushed before each launch; includes each side's "
          "host launch cost) and, in [brackets], of do_bench_cudagraph (launches replayed from a CUDA graph)")
    print("| shape | Tile (matmul.tile) | Triton tutorial | torch.matmul | Tile / Triton | Tile / cuBLAS |")
    print("|---|---|---|---|---|---|")
    worst = 1.0
    for (M, N, K) in shapes:
        torch.manual_seed(M + N + K)
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        grid = (((M + BM - 1) // BM) * ((N + BN - 1) // BN),)

        def ours():
            k[grid](a, b, c, M, N, K, K, N, N)

        ours()
        torch.cuda.synchronize()
        ref = (a.float() @ b.float())
        err = ((c.float() - ref).norm() / ref.norm()).item()
        if not err < 1e-2:
            print("FAIL matmul %dx%dx%d: rel_err %g" % (M, N, K))
            worst = 0
            continue
        ct = tri(a, b)
        terr = ((ct.float() - ref).norm() / ref.norm()).item()
        flops = 2.0 * M * N * K
        t_ours = do_bench(ours, warmup=50, rep=300)
        t_tri = do_bench(lambda: tri(a, b), warmup=50, rep=300)
        t_cub = do_bench(lambda: a @ b, warmup=50, rep=300)
        t_ours2 = do_bench(ours, warmup=10, rep=300)  # again, after the peers (clocks)
        t_ours = min(t_ours, t_ours2)
        spec = ""
        if k2 is not None and N % 16 == 0 and K % 16 == 0:
            c.fill_(float("nan"))
            k2[grid](a, b, c, M, N, K, K, N, N)
            torch.cuda.synchronize()
            e2 = ((c.float() - ref).norm() / ref.norm()).item()
            t2 = do_bench(lambda: k2[grid](a, b, c, M, N, K, K, N, N), warmup=50, rep=300)
            spec = "; %s: %.0f (%.2fx Triton, err %.1e)" % (os.environ.get("DOT_CUBIN2_LABEL", "K, N multiple_of(16)"),
                                                        flops / t2 / 1e9, t_tri / t2, e2)
            if not e2 < 1e-2:
                worst = 0
        # DOT_TUNE: "CUBIN:BM:BN ...", cubins of other configurations, each
        # timed: the best per shape is what tile.autotune picks from source
        # (as Triton's autotune over its configs)
        for item in os.environ.get("DOT_TUNE", "").split():
            path, bm, bn = item.split(":")
            bm, bn = int(bm), int(bn)
            kt = tile.Kernel.from_cubin(path, "matmul")
            gt = (((M + bm - 1) // bm) * ((N + bn - 1) // bn),)
            c.fill_(float("nan"))
            kt[gt](a, b, c, M, N, K, K, N, N)
            torch.cuda.synchronize()
            et = ((c.float() - ref).norm() / ref.norm()).item()
            if not et < 1e-2:
                print("FAIL %s %dx%dx%d: rel_err %g" % (path, M, N, K, et))
                worst = 0
                continue
            tt = do_bench(lambda: kt[gt](a, b, c, M, N, K, K, N, N), warmup=50, rep=300)
            name = os.path.basename(path).replace(".sm_90a.cubin", "")
            print("  tune %dx%dx%d %-28s %.0f TFLOP/s (%.2fx Triton)" % (M, N, K, name, flops / tt / 1e9, t_tri / tt))
        tf = lambda t: flops / t / 1e9
        g = ["", "", "", "", ""]
        if do_bench_cudagraph is not None:
            try:
                # the autotuner has picked; graph the chosen config's launch
                g_ours = do_bench_cudagraph(ours, rep=300)
                g_tri = do_bench_cudagraph(lambda: tri(a, b), rep=300)
                g_cub = do_bench_cudagraph(lambda: a @ b, rep=300)
                g = [" [%.0f]" % tf(g_ours), " [%.0f]" % tf(g_tri), " [%.0f]" % tf(g_cub), " [%.2fx]" % (g_tri / g_ours),
                     " [%.2fx]" % (g_cub / g_ours)]
            except Exception as e:  # a launch path that cannot be captured
                g = [" [graph: %s]" % type(e).__name__, "", "", "", ""]
        print("| %dx%dx%d | %.0f%s (err %.1e%s) | %.0f%s (err %.1e) | %.0f%s | %.2fx%s | %.2fx%s |" %
              (M, N, K, tf(t_ours), g[0], err, spec, tf(t_tri), g[1], terr, tf(t_cub), g[2], t_tri / t_ours, g[3],
               t_cub / t_ours, g[4]))
    return 0 if worst else 1


if __name__ == "__main__":
    sys.exit(main())
