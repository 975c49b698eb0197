"""tests/gpu/profile_attn.py - one shape of the fused-attention forward,
Tile's build beside Triton's tutorial kernel, inside a profiler range, for
Nsight Compute (what bench_triton.py times, one launch of each):

  ncu --profile-from-start off --metrics ... \\
    python3 tests/gpu/profile_attn.py --build build-tut [--suffix .fb32] [Z H N D [causal]]

(tests/gpu/profile_attn.sh runs it with the metrics docs/perf.md reports.)

Autotuning and warm-up run before the range, so the profiled launches are
the configurations the benchmark keeps. Each side is checked against the
other first.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build-tut")
    ap.add_argument("--suffix", default="", help="a block-size build (.fb32, .fm64, .fb64, .fs3)")
    ap.add_argument("shape", nargs="*", help="Z H N D [causal]")
    a = ap.parse_args()
    z, h, n, d = (int(x) for x in (a.shape[:4] if len(a.shape) >= 4 else (4, 16, 1024, 128)))
    causal = len(a.shape) > 4 and a.shape[4] == "causal"
    lib = os.path.abspath(os.path.join(a.build, "lib"))
    os.environ.setdefault("TILE_LIB_DIR", lib)
    import torch
    import bench_triton as bt
    sys.path.insert(0, os.path.join(bt.REPO, "python"))
    import tile
    import triton_tutorials as tt
    args = bt.parse_args(["--build", a.build, "--only", "attn_fwd"])
    E = bt.Env(args)
    E.tile, E.tt = tile, tt
    name = bt._attn_cubin(d, causal) + a.suffix
    kf = E.kernel(name, "attn_fwd")
    bm = int(E.consts(name, "attn_fwd").get("BM", 128))
    q, k, v = bt._attn_inputs(E, z, h, n, d)
    o_t, o_r = torch.empty_like(q), torch.empty_like(q)
    m_t, m_r = torch.empty(z, h, n, device="cuda"), torch.empty(z, h, n, device="cuda")
    ours = E.launcher([(kf, (bt.triton_cdiv(n, bm), z * h), (q, k, v, o_t, m_t, 0.5, n))])
    theirs = lambda: tt.attn_fwd(q, k, v, causal, 0.5, o_r, m_r)
    for _ in range(3):
        ours()
        theirs()
    torch.cuda.synchronize()
    err = (o_t.float() - o_r.float()).abs().max().item()
    print("profile_attn: %s %dx%dx%dx%d%s, |O_tile - O_triton| max %.2e" % (name, z, h, n, d,
                                                                          " causal" if causal else "", err))
    torch.cuda.profiler.start()
    ours()
    theirs()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    return 0 if err < 1e-2 else 1


if __name__ == "__main__":
    sys.exit(main())
