#!/usr/bin/env python3
"""tests/gpu/python_check.py - the Python package on the GPU (run by
tests/gpu/python.sh, which sets TILE_LIB_DIR, TILE_JFA_CUBIN_DIR and
PYTHONPATH): every check prints one PASS/FAIL/SKIP line; exit 1 on a FAIL.

  fwd/bwd   jfa_varlen_func against float64 PyTorch attention (out, lse,
            dq, dk, dv) on tiny and medium jagged shapes, causal and not,
            head dims 64 and 128, empty sequences among them
  grad      gradcheck in float64-reference form: JFA's gradients against
            float64 autograd, and their directional derivative against
            central finite differences of the float64 function
  bcast     jfa_broadcast_q forward and backward
  variants  sliding window, soft-cap, ALiBi, block-sparse: forward, and backward where
            the library has one
  det       deterministic=True: dq bitwise equal run to run
  stream    on a side stream, ordered after work still running on it
  host      cu_seqlens on the GPU (device-to-host copy) = seqlens_host
  args      bad arguments raise before launch (ValueError/TypeError/
            TileInvalidArgument), nothing launched
  compile   torch.compile (inductor and aot_eager, fullgraph) of a step
            through the op, forward and backward, against eager; opcheck
  jit       tile.Kernel on examples/vector_add/vector_add.tile (JIT, cache
            hit on the second build), from the shipped cubin, and gemm's
            TMA parameters from tensors
  autotune  tile.autotune over three block sizes: each config timed once
            with CUDA events (medians > 0, the fastest chosen), the choice
            reused from memory and from the disk cache
"""
import math
import os
import sys
import time
import traceback

import torch

import tile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# TILE_PY_DEVICE=cpu with TILE_INTERPRET=1: the same checks on the emulator,
# shapes shrunk (a smoke test of this script on a machine without a GPU)
DEV = torch.device(os.environ.get("TILE_PY_DEVICE", "cuda"))
SMOKE = DEV.type == "cpu"
results = []


def check(name):
    def deco(fn):
        t = time.time()
        try:
            msg = fn() or ""
            status = "PASS"
        except SkipCheck as e:
            status, msg = "SKIP", str(e)
        except Exception as e:  # noqa: BLE001 - every failure is reported
            status, msg = "FAIL", "%s: %s" % (type(e).__name__, e)
            traceback.print_exc()
        line = "%-4s %-44s %6.1f s  %s" % (status, name, time.time() - t, msg)
        print(line, flush=True)
        results.append(status)
        return fn
    return deco


class SkipCheck(Exception):
    pass


def cu_of(lengths, device=DEV):
    out = [0]
    for n in lengths:
        out.append(out[-1] + n)
    return torch.tensor(out, dtype=torch.int32, device=device)


def ref_varlen(q, k, v, lengths, causal=False, scale=None, window=(-1, -1), softcap=0.0, alibi=None,
               block_mask=None):
    """float64 reference per sequence: out [T, H, D], lse [H, T]; block_mask:
    a list of one mask of 128 x 128 blocks per sequence (a row that sees no
    key: 0, LSE -inf)."""
    D = q.shape[-1]
    scale = 1 / math.sqrt(D) if scale is None else scale
    outs, lses, s = [], [], 0
    for bi, n in enumerate(lengths):
        if n == 0:
            continue
        Q, K, V = (x[s:s + n].double().transpose(0, 1) for x in (q, k, v))
        S = Q @ K.transpose(1, 2) * scale
        if softcap > 0:
            S = softcap * torch.tanh(S / softcap)
        i = torch.arange(n, device=q.device).view(-1, 1)
        j = torch.arange(n, device=q.device).view(1, -1)
        if alibi is not None:
            S = S - torch.tensor(alibi, dtype=torch.float64, device=q.device).view(-1, 1, 1) * (i - j).abs()
        keep = torch.ones(n, n, dtype=torch.bool, device=q.device)
        if causal:
            keep &= j <= i
        if window[0] >= 0:
            keep &= j >= i - window[0]
        if window[1] >= 0:
            keep &= j <= i + window[1]
        if block_mask is not None:
            keep &= block_mask[bi].to(q.device).bool()[i // 128, j // 128]
        S = S.masked_fill(~keep, -1e300)  # finite: the rows that see no key stay NaN-free, then zeroed
        lses.append(torch.logsumexp(S, -1).masked_fill(~keep.any(-1), float("-inf")))
        outs.append(((torch.softmax(S, -1) * keep) @ V).transpose(0, 1))
        s += n
    return torch.cat(outs, 0), torch.cat(lses, 1)


def ref_bcast(q, k, v, lengths, scale=None):
    D = q.shape[-1]
    scale = 1 / math.sqrt(D) if scale is None else scale
    outs, s = [], 0
    Q = q.double().transpose(0, 1)
    for n in lengths:
        K, V = (x[s:s + n].double().transpose(0, 1) for x in (k, v))
        outs.append((torch.softmax(Q @ K.transpose(1, 2) * scale, -1) @ V).transpose(0, 1))
        s += n
    return torch.stack(outs, 0)


def rel_err(got, want):
    if want.numel() == 0:
        return 0.0
    return (got.double() - want.double()).abs().max().item() / max(want.abs().max().item(), 1e-6)


def qkv(lengths, H, D, seed, grad=True):
    g = torch.Generator(device=DEV).manual_seed(seed)
    T = sum(lengths)
    return [torch.randn(T, H, D, generator=g, device=DEV).bfloat16().requires_grad_(grad) for _ in range(3)]


TOL_OUT, TOL_LSE, TOL_GRAD = 0.02, 1e-3, 0.05


def fwd_bwd_case(lengths, H, D, causal, seed):
    q, k, v = qkv(lengths, H, D, seed)
    cu = cu_of(lengths)
    out, lse = tile.jfa_varlen_func(q, k, v, cu, cu, max(lengths), max(lengths), causal=causal, return_lse=True,
                                    seqlens_host=lengths)
    do = torch.randn_like(out)
    out.backward(do)
    q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
    ro, rl = ref_varlen(q64, k64, v64, lengths, causal)
    ro.backward(do.double())
    errs = {"out": rel_err(out, ro.detach()), "lse": (lse.double() - rl.detach()).abs().max().item(),
            "dq": rel_err(q.grad, q64.grad), "dk": rel_err(k.grad, k64.grad), "dv": rel_err(v.grad, v64.grad)}
    bad = [n for n, e in errs.items() if e > (TOL_LSE if n == "lse" else TOL_OUT if n == "out" else TOL_GRAD)]
    desc = "B=%d T=%d H=%d D=%d causal=%d: %s" % (len(lengths), sum(lengths), H, D, causal,
                                                  " ".join("%s %.2g" % kv for kv in errs.items()))
    if bad:
        raise AssertionError("too large: %s (%s)" % (bad, desc))
    return desc


def small(lengths, cap=40):
    """In the smoke run, sequences cut to cap rows."""
    return [min(n, cap) for n in lengths] if SMOKE else lengths


TINY = [3, 0, 17, 1, 64, 129]
MEDIUM = small([1000, 37, 0, 2048, 513, 129, 1, 700])

for D in (64, 128):
    for causal in (False, True):
        check("fwd/bwd tiny D=%d causal=%d" % (D, causal))(
            lambda D=D, causal=causal: fwd_bwd_case(TINY, 2, D, causal, seed=D + causal))
        check("fwd/bwd medium D=%d causal=%d" % (D, causal))(
            lambda D=D, causal=causal: fwd_bwd_case(MEDIUM, 2 if SMOKE else 4, D, causal, seed=10 + D + causal))


@check("grad: float64-reference gradcheck, tiny")
def _grad():
    lengths = [5, 9, 2]
    msgs = []
    for D, causal in ((64, True), (128, False)):
        q, k, v = qkv(lengths, 1, D, seed=3 + D)
        cu = cu_of(lengths)
        w = torch.randn(sum(lengths), 1, D, device=DEV, dtype=torch.float64)

        def loss64(a, b, c):
            return (ref_varlen(a, b, c, lengths, causal)[0] * w).sum()
        out = tile.jfa_varlen_func(q, k, v, cu, cu, 9, 9, causal=causal)
        (out.double() * w).sum().backward()
        x64 = [t.detach().double().requires_grad_() for t in (q, k, v)]
        loss64(*x64).backward()
        for name, a, b in zip("qkv", (q.grad, k.grad, v.grad), x64):
            e = rel_err(a, b.grad)
            if e > TOL_GRAD:
                raise AssertionError("d%s: %.3g from float64 autograd" % (name, e))
        # directional derivative: <grad, u> against central differences
        u = [torch.randn_like(t) for t in x64]
        eps = 1e-6
        with torch.no_grad():
            plus = loss64(*[t + eps * d for t, d in zip(x64, u)])
            minus = loss64(*[t - eps * d for t, d in zip(x64, u)])
        fd = ((plus - minus) / (2 * eps)).item()
        ours = sum((g.double() * d).sum().item() for g, d in zip((q.grad, k.grad, v.grad), u))
        if abs(ours - fd) > 0.05 * max(abs(fd), 1.0):
            raise AssertionError("directional derivative %.6g, finite differences %.6g" % (ours, fd))
        msgs.append("D=%d causal=%d <g,u> %.4g vs fd %.4g" % (D, causal, ours, fd))
    ok = torch.autograd.gradcheck(lambda a, b, c: ref_varlen(a, b, c, [3, 2], True)[0],
                                  [torch.randn(5, 1, 8, dtype=torch.float64, device=DEV, requires_grad=True)
                                   for _ in range(3)])
    return "; ".join(msgs) + ("; reference passes gradcheck" if ok else "")


@check("bcast fwd/bwd")
def _bcast():
    lengths = small([100, 7, 300, 64])
    msgs = []
    for D in (64, 128):
        g = torch.Generator(device=DEV).manual_seed(D)
        q = torch.randn(8 if SMOKE else 48, 2, D, generator=g, device=DEV).bfloat16().requires_grad_()
        _, k, v = qkv(lengths, 2, D, seed=D + 1)
        out, lse = tile.jfa_broadcast_q(q, k, v, cu_of(lengths), max(lengths), return_lse=True)
        do = torch.randn_like(out)
        out.backward(do)
        q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
        ro = ref_bcast(q64, k64, v64, lengths)
        ro.backward(do.double())
        errs = [rel_err(out, ro.detach()), rel_err(q.grad, q64.grad), rel_err(k.grad, k64.grad),
                rel_err(v.grad, v64.grad)]
        if errs[0] > TOL_OUT or max(errs[1:]) > TOL_GRAD:
            raise AssertionError("D=%d errors out/dq/dk/dv %s" % (D, errs))
        msgs.append("D=%d %s" % (D, " ".join("%.2g" % e for e in errs)))
    return "; ".join(msgs)


@check("variants: window, softcap, alibi, block-sparse")
def _variants():
    lengths = small([300, 17, 1000], 60)
    q, k, v = qkv(lengths, 2, 128, seed=7, grad=True)
    cu = cu_of(lengths)
    msgs = []
    g = torch.Generator().manual_seed(5)
    bmask = [torch.rand((n + 127) // 128, (n + 127) // 128, generator=g) < 0.5 for n in lengths]
    cases = [dict(window_size=(64, 16)), dict(window_size=(100, -1), causal=True), dict(softcap=5.0),
             dict(softcap=5.0, causal=True), dict(alibi_slopes=[0.25, 0.0625]),
             dict(alibi_slopes=[0.25, 0.0625], causal=True), dict(block_mask=bmask),
             dict(block_mask=bmask, causal=True)]
    for kw in cases:
        try:
            out = tile.jfa_varlen_func(q, k, v, cu, cu, max(lengths), max(lengths), **kw)
        except tile.TileInvalidArgument as e:
            msgs.append("%s: not built (%s)" % (kw, e.message))
            continue
        causal = kw.get("causal", False)
        w = kw.get("window_size", (-1, -1))
        if causal and w[0] >= 0:
            w, causal = (w[0], 0), False
        x64 = [t.detach().double().requires_grad_() for t in (q, k, v)]
        ro, _ = ref_varlen(*x64, lengths, causal, window=w, softcap=kw.get("softcap", 0.0),
                           alibi=kw.get("alibi_slopes"), block_mask=kw.get("block_mask"))
        e = rel_err(out, ro.detach())
        if e > TOL_OUT:
            raise AssertionError("%s: error %.3g" % (kw, e))
        name = ",".join("%s=%s" % (a, "50%" if a == "block_mask" else b) for a, b in kw.items())
        for t in (q, k, v):
            t.grad = None
        do = torch.randn_like(out)
        try:
            out.backward(do)
        except tile.TileInvalidArgument as exc:
            if "backward" not in str(exc):
                raise
            msgs.append("%s fwd %.2g (no backward)" % (name, e))
            continue
        ro.backward(do.double())
        ge = [rel_err(t.grad, r.grad) for t, r in zip((q, k, v), x64)]
        if max(ge) > TOL_GRAD:
            raise AssertionError("%s: gradient errors dq/dk/dv %s" % (kw, ge))
        msgs.append("%s fwd %.2g bwd %.2g" % (name, e, max(ge)))
    return "; ".join(msgs)


@check("det: deterministic dq bitwise")
def _det():
    lengths = small([2000, 300, 4096], 70)
    grads = []
    for _ in range(3):
        q, k, v = qkv(lengths, 4, 128, seed=5)
        out = tile.jfa_varlen_func(q, k, v, cu_of(lengths), cu_of(lengths), max(lengths), max(lengths),
                                   deterministic=True)
        out.float().square().sum().backward()
        grads.append(q.grad.clone())
    if not all(torch.equal(grads[0], g) for g in grads[1:]):
        raise AssertionError("dq differs between runs")
    return "3 runs equal"


@check("stream: side stream, ordered")
def _stream():
    if SMOKE:
        raise SkipCheck("no streams on the CPU")
    lengths = [777, 1200, 31]
    q, k, v = qkv(lengths, 2, 64, seed=8, grad=False)
    cu = cu_of(lengths)
    want = tile.jfa_varlen_func(q, k, v, cu, cu, 1200, 1200, seqlens_host=lengths)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        big = torch.randn(8192, 8192, device=DEV)
        for _ in range(4):
            big = big @ big / 100  # keep the stream busy
        q2 = q * 1  # written on s: only ordered use on s sees it
        got = tile.jfa_varlen_func(q2, k, v, cu, cu, 1200, 1200, seqlens_host=lengths)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    if not torch.equal(got, want):
        raise AssertionError("the side stream's result differs (max %g)" % (got.float() - want.float()).abs().max())
    return "equal to the default stream's"


@check("host: CUDA cu_seqlens = seqlens_host")
def _host():
    lengths = small([5, 500, 0, 77])
    m = max(lengths)
    q, k, v = qkv(lengths, 1, 64, seed=9, grad=False)
    a = tile.jfa_varlen_func(q, k, v, cu_of(lengths), cu_of(lengths), m, m)
    b = tile.jfa_varlen_func(q, k, v, cu_of(lengths), cu_of(lengths), m, m, seqlens_host=lengths)
    c = tile.jfa_varlen_func(q, k, v, cu_of(lengths, "cpu"), cu_of(lengths, "cpu"), m, m)
    if not (torch.equal(a, b) and torch.equal(a, c)):
        raise AssertionError("results differ")
    return "equal"


@check("args: errors before launch")
def _args():
    lengths = [5, 3]
    q, k, v = qkv(lengths, 2, 64, seed=1, grad=False)
    cu = cu_of(lengths)
    bad = [
        (TypeError, lambda: tile.jfa_varlen_func(q.float(), k, v, cu, cu, 5, 5)),
        (ValueError, lambda: tile.jfa_varlen_func(q[:7], k, v, cu, cu, 5, 5)),
        (ValueError, lambda: tile.jfa_varlen_func(q, k, v, cu.view(1, 3), cu.view(1, 3), 5, 5)),
        (TypeError, lambda: tile.jfa_varlen_func(q, k, v, cu.float(), cu.float(), 5, 5)),
        (ValueError, lambda: tile.jfa_varlen_func(q, k, v, cu_of([5, 4]), cu_of([5, 4]), 5, 5)),
        (ValueError, lambda: tile.jfa_varlen_func(q, k, v, torch.tensor([0, 6, 5, 8], device=DEV, dtype=torch.int32),
                                                  torch.tensor([0, 6, 5, 8], device=DEV, dtype=torch.int32), 6, 6)),
        (ValueError, lambda: tile.jfa_varlen_func(q, k, v, cu, cu, 4, 4, seqlens_host=lengths)),
    ] + ([] if SMOKE else [
        (ValueError, lambda: tile.jfa_varlen_func(q.cpu(), k.cpu(), v.cpu(), cu, cu, 5, 5)),
        (ValueError, lambda: tile.jfa_varlen_func(q, k.cpu(), v, cu, cu, 5, 5)),
    ]) + [
        (tile.TileInvalidArgument, lambda: tile.jfa_varlen_func(q, k, v, cu, cu, 5, 5, window_size=(3, 3),
                                                                softcap=2.0)),
    ]
    for i, (exc, fn) in enumerate(bad):
        try:
            fn()
        except exc:
            continue
        raise AssertionError("case %d did not raise %s" % (i, exc.__name__))
    return "%d cases" % len(bad)


@check("compile: torch.compile + opcheck")
def _compile():
    lengths = small([100, 257, 3])
    cu = cu_of(lengths)
    msgs = []

    def step(q, k, v, cu):
        o = tile.jfa_varlen_func(q, k, v, cu, cu, 257, 257, causal=True)
        return (o.float() * 0.5).square().sum()
    for backend in ("aot_eager",) if SMOKE else ("aot_eager", "inductor"):
        torch._dynamo.reset()
        f = torch.compile(step, backend=backend, fullgraph=True)
        q, k, v = qkv(lengths, 2, 128, seed=12)
        loss = f(q, k, v, cu)
        loss.backward()
        got = [x.grad.clone() for x in (q, k, v)]
        for x in (q, k, v):
            x.grad = None
        want = step(q, k, v, cu)
        want.backward()
        e = [abs(loss.item() - want.item()) / max(abs(want.item()), 1)] + \
            [rel_err(a, x.grad) for a, x in zip(got, (q, k, v))]
        if max(e) > 1e-3:
            raise AssertionError("%s: compiled vs eager %s" % (backend, e))
        msgs.append("%s ok" % backend)
    q, k, v = qkv([6, 10], 1, 64, seed=2)
    res = torch.library.opcheck(torch.ops.tile.jfa_fwd.default,
                                (q, k, v, cu_of([6, 10]), None, 0, True, 0.125, -1, -1, 0.0, False, True))
    if not all(r == "SUCCESS" for r in res.values()):
        raise AssertionError("opcheck: %s" % res)
    msgs.append("opcheck " + ",".join(res))
    return "; ".join(msgs)


@check("jit: vector_add via libtilejit, cubin, gemm TMA")
def _jit():
    import tempfile
    msgs = []
    cache = tempfile.mkdtemp(prefix="tile_py_gpu_cache")
    src = os.path.join(ROOT, "examples", "vector_add", "vector_add.tile")
    k1 = tile.Kernel(src, "vector_add", options={"cache_dir": cache})
    k2 = tile.Kernel(src, "vector_add", options={"cache_dir": cache})
    if k1.stats["cache_hit"] or not k2.stats["cache_hit"]:
        raise AssertionError("cache: first %s, second %s" % (k1.stats, k2.stats))
    msgs.append("compiled in %.2f s, then a cache hit" % k1.stats["compile_seconds"])
    cubin = os.path.join(os.environ.get("TILE_JFA_CUBIN_DIR", ""), "vector_add.sm_90a.cubin")
    kernels = [("jit", k2)] + ([("cubin", tile.Kernel.from_cubin(cubin))] if os.path.exists(cubin) else [])
    for how, k in kernels:
        for n in (1, 1000, 1024) if SMOKE else (1, 1000, 1024, 1 << 20, 12345677):
            x, y = torch.randn(n, device=DEV), torch.randn(n, device=DEV)
            out = torch.full((n,), float("nan"), device=DEV)
            k[(n + 1023) // 1024](x, y, out, n)
            if not torch.equal(out, x + y):
                raise AssertionError("%s: vector_add n=%d wrong" % (how, n))
    msgs.append("vector_add exact (%s)" % "+".join(h for h, _ in kernels))
    try:
        tile.Kernel("kernel k(x: *f32) warps(4) { let y = nope; }", "k", options={"cache_dir": cache})
        raise AssertionError("a compile error did not raise")
    except tile.TileCompileError as e:
        if "nope" not in e.diagnostics:
            raise AssertionError("diagnostics without the name: %s" % e.diagnostics)
    gemm = tile.Kernel(os.path.join(ROOT, "examples", "gemm", "gemm.tile"), "gemm", options={"cache_dir": cache})
    sms = 132 if SMOKE else torch.cuda.get_device_properties(DEV).multi_processor_count
    for M, N, K in ((170, 514, 312),) if SMOKE else ((1024, 1024, 1024), (573, 1140, 708), (170, 514, 312)):
        pad = lambda n: (n + 7) // 8 * 8  # noqa: E731
        A = torch.randn(M, pad(K), device=DEV).bfloat16()[:, :K]
        B = torch.randn(N, pad(K), device=DEV).bfloat16()[:, :K]
        C = torch.full((M, pad(N)), float("nan"), device=DEV).bfloat16()[:, :N]
        tiles = ((M + 127) // 128) * ((N + 255) // 256)
        gemm[min(tiles, sms)](A, B, C, M, N, K)
        ref = A.double() @ B.double().T
        e = rel_err(C, ref)
        if not e < 0.02:
            raise AssertionError("gemm %dx%dx%d: error %g" % (M, N, K, e))
    msgs.append("gemm through TMA descriptors ok")
    return "; ".join(msgs)


@check("autotune: each config timed once per key, the choice reused")
def _autotune():
    import tempfile
    cache = tempfile.mkdtemp(prefix="tile_py_gpu_tune")
    src = ("kernel vadd(x: *f32, y: *f32, out: *f32, n: i32, const BLOCK: i32 = 256, const W: i32 = 4) warps(W) {\n"
           "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
           "    let mask = offs < n;\n"
           "    store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);\n"
           "}\n")
    configs = [{"BLOCK": 256, "W": 2}, {"BLOCK": 1024, "W": 4}, {"BLOCK": 4096, "W": 8}]
    n = 1000 if SMOKE else 1 << 24
    x, y = torch.randn(n, device=DEV), torch.randn(n, device=DEV)
    out = torch.full((n,), float("nan"), device=DEV)
    grid = lambda meta: ((n + meta["BLOCK"] - 1) // meta["BLOCK"],)  # noqa: E731

    def tuner():
        return tile.autotune(src, "vadd", configs=configs, key=["n"], options={"cache_dir": cache},
                             filename="vadd.tile")
    at = tuner()
    at[grid](x, y, out, n)
    st = at.last_stats
    if not (st["tuned"] and st["ntimed"] == 3 and st["nskipped"] == 0):
        raise AssertionError("first launch: %s" % st)
    if not torch.equal(out, x + y):
        raise AssertionError("vadd wrong after tuning")
    best, cfg, ms = at.best(x, y, out, n)
    if best != st["config"] or ms[best] != min(ms) or (not SMOKE and not all(m > 0 for m in ms)):
        raise AssertionError("choice %d of medians %s (stats %s)" % (best, ms, st))
    out.fill_(float("nan"))
    at[grid](x, y, out, n)
    if at.last_stats["tuned"] or at.last_stats["config"] != best or not torch.equal(out, x + y):
        raise AssertionError("second launch: %s" % at.last_stats)
    at2 = tuner()
    at2[grid](x, y, out, n)
    if not at2.last_stats["from_disk"] or at2.last_stats["ntimed"]:
        raise AssertionError("another tuner: %s" % at2.last_stats)
    return "n=%d: %s chosen, medians %s ms" % (n, cfg, ", ".join("%.4g" % m for m in ms))


@check("plans: cached and reused")
def _plans():
    from tile import jfa
    lengths = [50, 60]
    q, k, v = qkv(lengths, 1, 64, seed=4, grad=False)
    tile.clear_plans()
    for _ in range(3):
        tile.jfa_varlen_func(q, k, v, cu_of(lengths), cu_of(lengths), 60, 60, seqlens_host=lengths)
    n = len(jfa.default()._plans)
    if n != 1:
        raise AssertionError("%d plans for one shape" % n)
    return "1 plan for 3 calls"


print("%d passed, %d failed, %d skipped" % (results.count("PASS"), results.count("FAIL"), results.count("SKIP")))
sys.exit(1 if "FAIL" in results else 0)
